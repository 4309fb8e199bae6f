#include "codegen/spirv/narrow_ints.h"

#include <fmt/format.h>

#include <unordered_map>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv {
namespace {

using ir::BinaryOp;
using ir::ScalarKind;
using ir::Stmt;

bool narrow(ScalarKind k) {
  return k == ScalarKind::i8 || k == ScalarKind::i16 || k == ScalarKind::u8 || k == ScalarKind::u16;
}
ScalarKind word_of(ScalarKind k) { return ir::is_signed(k) ? ScalarKind::i32 : ScalarKind::u32; }

class Lowering {
 public:
  explicit Lowering(ir::Kernel& k) : k_(k) {}

  void run() {
    std::vector<Stmt*> all;
    ir::walk(k_.root(), [&](Stmt& s) { all.push_back(&s); });
    for (Stmt* s : all) refuse(*s);
    for (Stmt* s : all) {  // the narrow kinds, before retyping
      if (narrow(s->type.scalar)) kind_[s] = s->type.scalar;
    }
    for (Stmt* s : all) retype(*s);
    for (size_t f = 0; f < k_.fields().size(); ++f) {
      ir::Field& field = k_.field(static_cast<ir::FieldId>(f));
      if (narrow(field.dtype)) field.dtype = word_of(field.dtype);
    }
    for (ir::ArgDecl& a : k_.args)
      if (narrow(a.dtype)) a.dtype = word_of(a.dtype);
    for (Stmt* s : all) fix(*s);
  }

 private:
  ScalarKind original(const Stmt* s) const {
    auto it = kind_.find(s);
    return it == kind_.end() ? s->type.scalar : it->second;
  }

  void refuse(const Stmt& s) const {
    auto fail = [&](const std::string& why) {
      throw UserError(fmt::format("the SPIR-V backend cannot lower `{}`: {}", ir::print_stmt(s, k_), why),
                      "run the kernel on the interpreter or the cpu backend, or use a 32-bit integer type");
    };
    if (const auto* u = ir::dyn_cast<ir::UnaryOpStmt>(&s);
        u && u->op == ir::UnaryOp::cast_bits && (narrow(u->type.scalar) || narrow(u->x()->type.scalar)))
      fail("bit casts of 8- and 16-bit integers are not compiled");
    if (const auto* a = ir::dyn_cast<ir::AtomicOpStmt>(&s);
        a && (a->op == ir::AtomicOp::min || a->op == ir::AtomicOp::max) && narrow(a->dest()->type.scalar))
      fail("atomic min/max on 8- and 16-bit integers is not compiled (they are stored in 32-bit words)");
  }

  void retype(Stmt& s) {
    if (narrow(s.type.scalar)) s.type.scalar = word_of(s.type.scalar);
    if (auto* c = ir::dyn_cast<ir::ConstStmt>(&s); c && narrow(c->value.kind()))
      c->value = c->value.cast_to(word_of(c->value.kind()));
  }

  Stmt* constant(ScalarKind k, int64_t v, Stmt* before) {
    return before->parent()->insert_before(before, k_.make<ir::ConstStmt>(ir::Value::from_int(k, v)));
  }
  Stmt* binary_after(Stmt* after, BinaryOp op, Stmt* a, Stmt* b) {
    auto s = k_.make<ir::BinaryOpStmt>(op, a, b);
    s->type = a->type;
    return after->parent()->insert_after(after, std::move(s));
  }

  // Replaces every use of `s` by what `build` makes from it, inserted right after `s`.
  template <class F>
  void rewrite_after(Stmt* s, F build) {
    std::vector<Stmt*> users;
    for (const Stmt::Use& u : s->uses()) users.push_back(u.user());
    Stmt* result = build(s);
    for (Stmt* u : users) u->replace_operand(s, result);
  }

  // The canonical form of the narrow value `s` (of original kind `k`).
  void canonicalize(Stmt* s, ScalarKind k) {
    rewrite_after(s, [&](Stmt* x) {
      const int w = ir::bit_width(k);
      if (!ir::is_signed(k)) return binary_after(x, BinaryOp::bit_and, x, constant(x->type.scalar, (1 << w) - 1, x));
      Stmt* amount = constant(ScalarKind::i32, 32 - w, x);
      Stmt* up = binary_after(x, BinaryOp::bit_shl, x, amount);
      return binary_after(up, BinaryOp::bit_sar, up, amount);
    });
  }

  void fix(Stmt& s) {
    const ScalarKind k = original(&s);
    if (auto* b = ir::dyn_cast<ir::BinaryOpStmt>(&s)) fix_shift(*b);
    if (auto* u = ir::dyn_cast<ir::UnaryOpStmt>(&s);
        u && u->op == ir::UnaryOp::cast_value && narrow(k) && ir::is_float(u->x()->type.scalar)) {
      // The 32-bit conversion saturates at the word's range; narrow it to the kind's.
      rewrite_after(&s, [&](Stmt* x) {
        const int w = ir::bit_width(k);
        Stmt* hi = constant(x->type.scalar, ir::is_signed(k) ? (1 << (w - 1)) - 1 : (1 << w) - 1, x);
        Stmt* top = binary_after(x, BinaryOp::min, x, hi);
        if (!ir::is_signed(k)) return top;
        return binary_after(top, BinaryOp::max, top, constant(x->type.scalar, -(1 << (w - 1)), x));
      });
      return;
    }
    bool produces = ir::isa<ir::UnaryOpStmt>(&s) || ir::isa<ir::BinaryOpStmt>(&s) || ir::isa<ir::GlobalLoadStmt>(&s) ||
                    ir::isa<ir::LocalLoadStmt>(&s) || ir::isa<ir::AtomicOpStmt>(&s);
    if (produces && narrow(k) && !s.type.pointer) canonicalize(&s, k);
  }

  // Shift amounts modulo the narrow width; a logical right shift sees the narrow bit pattern.
  void fix_shift(ir::BinaryOpStmt& s) {
    const ScalarKind k = original(&s);  // a shift has its left operand's kind
    if (!narrow(k) || (s.op != BinaryOp::bit_shl && s.op != BinaryOp::bit_shr && s.op != BinaryOp::bit_sar)) return;
    const int w = ir::bit_width(k);
    Stmt* amount = s.rhs();
    auto mask = k_.make<ir::BinaryOpStmt>(BinaryOp::bit_and, amount, constant(amount->type.scalar, w - 1, &s));
    mask->type = amount->type;
    s.set_operand(1, s.parent()->insert_before(&s, std::move(mask)));
    if (s.op == BinaryOp::bit_shr && ir::is_signed(k)) {
      auto pattern =
          k_.make<ir::BinaryOpStmt>(BinaryOp::bit_and, s.lhs(), constant(s.lhs()->type.scalar, (1 << w) - 1, &s));
      pattern->type = s.lhs()->type;
      s.set_operand(0, s.parent()->insert_before(&s, std::move(pattern)));
    }
  }

  ir::Kernel& k_;
  std::unordered_map<const Stmt*, ScalarKind> kind_;
};

}  // namespace

std::unique_ptr<ir::Kernel> lower_narrow_integers(const ir::Kernel& k) {
  bool any = false;
  for (const ir::Field& f : k.fields()) any = any || narrow(f.dtype);
  for (const ir::ArgDecl& a : k.args) any = any || narrow(a.dtype);
  ir::walk(k.root(), [&](const Stmt& s) { any = any || narrow(s.type.scalar); });
  if (!any) return nullptr;
  auto out = k.clone();
  Lowering(*out).run();
  return out;
}

}  // namespace pb::codegen::spirv
