#include "passes/autodiff/make_dual.h"

#include <fmt/format.h>

#include <unordered_map>

#include "ir/assert.h"
#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"

namespace pb::passes {

using namespace ir;

bool is_dual_differentiable_ptr(const Kernel& k, const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) {
    const Field& f = k.field(g->field);
    return is_float(f.dtype) && !f.primal && f.dual.has_value();
  }
  if (auto* e = dyn_cast<ExternalPtrStmt>(ptr)) return !e->is_grad && !e->is_dual && is_float(e->type.scalar);
  return false;
}

namespace {

using ad::is_real;

[[noreturn]] void reject(const Kernel& k, const Stmt& s, const std::string& why, const std::string& remedy) {
  throw UserError(fmt::format("cannot differentiate `{}` in forward mode: {}", print_stmt(s, k), why), remedy);
}

class Dualizer {
 public:
  explicit Dualizer(Kernel& k) : k_(k), b_(k) {}

  int64_t run() {
    size_t before = k_.count_statements();
    dualize_block(k_.root());
    return static_cast<int64_t>(k_.count_statements()) - static_cast<int64_t>(before);
  }

 private:
  void dualize_block(Block& block) {
    std::vector<Stmt*> primal(block.begin(), block.end());  // tangent code goes in between
    for (Stmt* s : primal) {
      b_.set_insertion_point_after(*s);
      visit(*s, [&](auto& t) { tangent_stmt(t); });
    }
  }

  // The tangent of `s`, or nullptr when it is zero (constants, integers, non-differentiable data).
  Stmt* tangent(const Stmt* s) const {
    auto it = tangent_.find(s);
    return it == tangent_.end() ? nullptr : it->second;
  }
  // The tangent of `s` as a value of `like`'s type (a zero constant when it has none).
  Stmt* tangent_or_zero(const Stmt* s, const Stmt* like) {
    Stmt* t = tangent(s);
    return t ? t : constant(like, 0);
  }
  void set_tangent(const Stmt* s, Stmt* t) {
    if (t && is_real(s)) tangent_[s] = t;
  }

  // Constants of the tangent code, one per type and value, at the top of the kernel.
  Stmt* constant(const Stmt* like, double v) {
    Value value = Value::from_double(like->type.scalar, v);
    for (auto& [c, stmt] : constants_)
      if (c.identical(value)) return stmt;
    InsertionGuard guard(b_);
    b_.set_insertion_point_before(*k_.root().front());
    Stmt* stmt = b_.constant(value);
    constants_.emplace_back(value, stmt);
    return stmt;
  }

  // The address of the dual of the element `ptr` addresses, made once, right after `ptr`.
  Stmt* dual_ptr(Stmt* ptr) {
    if (auto it = dual_ptr_.find(ptr); it != dual_ptr_.end()) return it->second;
    InsertionGuard guard(b_);
    b_.set_insertion_point_after(*ptr);
    Stmt* d;
    if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) {
      const std::optional<FieldId>& dual = k_.field(g->field).dual;
      PB_ASSERT(dual, "a tangent of a field without a dual");
      d = b_.global_ptr(*dual, {g->indices().begin(), g->indices().end()});
    } else {
      auto* e = static_cast<ExternalPtrStmt*>(ptr);
      auto x = k_.make<ExternalPtrStmt>(e->base(), std::vector<Stmt*>(e->indices().begin(), e->indices().end()));
      x->element_shape = e->element_shape;
      x->layout = e->layout;
      x->is_dual = true;
      d = b_.insert(std::move(x));
    }
    dual_ptr_[ptr] = d;
    return d;
  }

  Stmt* add(Stmt* a, Stmt* c) { return b_.binary(BinaryOp::add, a, c); }
  Stmt* sub(Stmt* a, Stmt* c) { return b_.binary(BinaryOp::sub, a, c); }
  Stmt* mul(Stmt* a, Stmt* c) { return b_.binary(BinaryOp::mul, a, c); }
  Stmt* div(Stmt* a, Stmt* c) { return b_.binary(BinaryOp::div, a, c); }
  Stmt* neg(Stmt* a) { return b_.unary(UnaryOp::neg, a); }
  Stmt* un(UnaryOp op, Stmt* a) { return b_.unary(op, a); }
  // a + c where either may be zero (nullptr).
  Stmt* sum(Stmt* a, Stmt* c) { return !a ? c : !c ? a : add(a, c); }

  // One formula per op declared to pass a gradient (ir/ops.h), the same ops make_adjoint has
  // formulas for; forward mode may read the primal result `s` (tan, tanh, exp, sqrt, rsqrt).
  Stmt* tangent_unary(UnaryOpStmt& s, Stmt* t) {
    Stmt* x = s.x();
    switch (s.op) {
      case UnaryOp::neg:
        return neg(t);
      case UnaryOp::abs:
        return mul(t, un(UnaryOp::sgn, x));
      case UnaryOp::sin:
        return mul(t, un(UnaryOp::cos, x));
      case UnaryOp::cos:
        return neg(mul(t, un(UnaryOp::sin, x)));
      case UnaryOp::tan:
      case UnaryOp::tanh: {
        Stmt* one = constant(x, 1);
        Stmt* square = mul(&s, &s);
        return mul(t, s.op == UnaryOp::tan ? add(one, square) : sub(one, square));
      }
      case UnaryOp::asin:
      case UnaryOp::acos: {
        Stmt* one = constant(x, 1);
        Stmt* square = mul(x, x);
        Stmt* d = div(t, un(UnaryOp::sqrt, sub(one, square)));
        return s.op == UnaryOp::asin ? d : neg(d);
      }
      case UnaryOp::exp:
        return mul(t, &s);
      case UnaryOp::log:
        return div(t, x);
      case UnaryOp::sqrt:
        return div(mul(t, constant(x, 0.5)), &s);
      case UnaryOp::rsqrt: {
        Stmt* scaled = mul(t, constant(x, -0.5));
        return mul(scaled, mul(&s, mul(&s, &s)));
      }
      case UnaryOp::cast_value:
        return is_real(&s) ? b_.cast(t, s.type.scalar) : nullptr;
      case UnaryOp::sgn:
      case UnaryOp::floor:
      case UnaryOp::ceil:
      case UnaryOp::round:
      case UnaryOp::logic_not:
      case UnaryOp::bit_not:
      case UnaryOp::cast_bits:
        PB_ASSERT(false, "an op declared without gradient has no tangent formula");
    }
    return nullptr;
  }

  Stmt* tangent_binary(BinaryOpStmt& s, Stmt* tl, Stmt* tr) {
    Stmt* l = s.lhs();
    Stmt* r = s.rhs();
    switch (s.op) {
      case BinaryOp::add:
        return sum(tl, tr);
      case BinaryOp::sub:
        return !tr ? tl : !tl ? neg(tr) : sub(tl, tr);
      // Each term is built before the next (argument evaluation order is unspecified), so the
      // statements come out in the same order with every compiler.
      case BinaryOp::mul: {
        Stmt* dl = tl ? mul(tl, r) : nullptr;
        Stmt* dr = tr ? mul(l, tr) : nullptr;
        return sum(dl, dr);
      }
      case BinaryOp::div: {
        Stmt* dl = tl ? div(tl, r) : nullptr;
        Stmt* dr = nullptr;
        if (tr) {
          Stmt* num = mul(l, tr);
          dr = neg(div(num, mul(r, r)));
        }
        return sum(dl, dr);
      }
      case BinaryOp::pow: {
        // d x^y = y x^(y-1) dx + log(x) x^y dy; an integer exponent has no tangent.
        Stmt* dl = nullptr;
        if (tl) {
          Stmt* y = is_real(r) ? r : b_.cast(r, l->type.scalar);
          dl = mul(tl, mul(y, b_.binary(BinaryOp::pow, l, sub(y, constant(y, 1)))));
        }
        Stmt* dr = tr ? mul(tr, mul(un(UnaryOp::log, l), &s)) : nullptr;
        return sum(dl, dr);
      }
      case BinaryOp::atan2: {
        // atan2(y, x): (x dy - y dx) / (x^2 + y^2)
        Stmt* ll = mul(l, l);
        Stmt* n = add(ll, mul(r, r));
        Stmt* dl = tl ? div(mul(tl, r), n) : nullptr;
        Stmt* dr = tr ? neg(div(mul(l, tr), n)) : nullptr;
        return sum(dl, dr);
      }
      case BinaryOp::mod: {
        // The C remainder x - y * trunc(x / y): d = dx - trunc(x / y) dy between its jumps.
        Stmt* dr = nullptr;
        if (tr) {
          Stmt* q = div(l, r);
          Stmt* negative = b_.binary(BinaryOp::cmp_lt, q, constant(q, 0));
          Stmt* up = un(UnaryOp::ceil, q);
          Stmt* t = b_.select(negative, up, un(UnaryOp::floor, q));
          dr = neg(mul(tr, t));
        }
        return sum(tl, dr);
      }
      case BinaryOp::min:
      case BinaryOp::max: {
        // The tangent of the operand the op chose (lhs on ties, as make_adjoint).
        Stmt* other_wins = b_.binary(s.op == BinaryOp::min ? BinaryOp::cmp_lt : BinaryOp::cmp_gt, r, l);
        Stmt* when_other = tr ? tr : constant(&s, 0);
        Stmt* when_lhs = tl ? tl : constant(&s, 0);
        return b_.select(other_wins, when_other, when_lhs);
      }
      case BinaryOp::floordiv:
      case BinaryOp::cmp_lt:
      case BinaryOp::cmp_le:
      case BinaryOp::cmp_gt:
      case BinaryOp::cmp_ge:
      case BinaryOp::cmp_eq:
      case BinaryOp::cmp_ne:
      case BinaryOp::bit_and:
      case BinaryOp::bit_or:
      case BinaryOp::bit_xor:
      case BinaryOp::bit_shl:
      case BinaryOp::bit_shr:
      case BinaryOp::bit_sar:
      case BinaryOp::logical_and:
      case BinaryOp::logical_or:
        PB_ASSERT(false, "an op declared without gradient has no tangent formula");
    }
    return nullptr;
  }

  // ---- one overload per statement kind ----
  void tangent_stmt(UnaryOpStmt& s) {
    Stmt* t = tangent(s.x());
    if (t && is_real(&s) && gradient_of(s.op) != Gradient::none) set_tangent(&s, tangent_unary(s, t));
  }
  void tangent_stmt(BinaryOpStmt& s) {
    Stmt* tl = tangent(s.lhs());
    Stmt* tr = tangent(s.rhs());
    if ((tl || tr) && is_real(&s) && gradient_of(s.op) != Gradient::none) set_tangent(&s, tangent_binary(s, tl, tr));
  }
  void tangent_stmt(TernaryOpStmt& s) {
    Stmt* ta = tangent(s.a());
    Stmt* tb = tangent(s.b());
    if ((ta || tb) && is_real(&s)) {
      Stmt* when_true = ta ? ta : constant(&s, 0);
      Stmt* when_false = tb ? tb : constant(&s, 0);
      set_tangent(&s, b_.select(s.cond(), when_true, when_false));
    }
  }
  void tangent_stmt(AllocaStmt& s) {
    if (is_real(&s)) tangent_[&s] = b_.alloca(s.type.scalar);
  }
  void tangent_stmt(LocalLoadStmt& s) {
    if (Stmt* d = tangent(s.src()); d && is_real(&s)) set_tangent(&s, b_.local_load(d));
  }
  void tangent_stmt(LocalStoreStmt& s) {
    if (Stmt* d = tangent(s.dest())) b_.local_store(d, tangent_or_zero(s.val(), s.val()));
  }
  void tangent_stmt(GlobalLoadStmt& s) {
    if (is_real(&s) && is_dual_differentiable_ptr(k_, s.src())) {
      Stmt* d = dual_ptr(s.src());
      b_.set_insertion_point_after(s);
      set_tangent(&s, b_.global_load(d));
    }
  }
  void tangent_stmt(GlobalStoreStmt& s) {
    if (!is_dual_differentiable_ptr(k_, s.dest())) return;
    Stmt* d = dual_ptr(s.dest());
    b_.set_insertion_point_after(s);
    b_.global_store(d, tangent_or_zero(s.val(), s.val()));
  }
  void tangent_stmt(AtomicOpStmt& s) {
    if (Stmt* d = tangent(s.dest())) return tangent_local_atomic(s, d);
    if (!is_dual_differentiable_ptr(k_, s.dest())) return;
    if (s.op != AtomicOp::add && s.op != AtomicOp::sub)
      reject(k_, s, fmt::format("atomic {} on differentiable global data has no parallel-safe tangent", op_name(s.op)),
             "use atomic add/sub, or compute the value with min/max/mul on locals and store it");
    if (s.has_users())
      reject(k_, s, "the old value an atomic on a differentiable field or ndarray returns is used",
             "read the element with a global load instead");
    Stmt* d = dual_ptr(s.dest());
    b_.set_insertion_point_after(s);
    if (Stmt* t = tangent(s.val())) b_.atomic(s.op, d, t);
  }
  // x op= v on a local: the dual follows the new value; the result (the old value) has the old dual.
  void tangent_local_atomic(AtomicOpStmt& s, Stmt* d) {
    Stmt* tv = tangent(s.val());
    Stmt* old_dual = b_.local_load(d);
    Stmt* new_dual = nullptr;
    switch (s.op) {
      case AtomicOp::add:
        new_dual = tv ? add(old_dual, tv) : nullptr;
        break;
      case AtomicOp::sub:
        new_dual = tv ? sub(old_dual, tv) : nullptr;
        break;
      case AtomicOp::mul:  // old * v
        new_dual = mul(old_dual, s.val());
        if (tv) new_dual = add(new_dual, mul(&s, tv));
        break;
      case AtomicOp::min:
      case AtomicOp::max: {
        Stmt* v_wins = b_.binary(s.op == AtomicOp::min ? BinaryOp::cmp_lt : BinaryOp::cmp_gt, s.val(), &s);
        new_dual = b_.select(v_wins, tv ? tv : constant(s.val(), 0), old_dual);
        break;
      }
      case AtomicOp::bit_and:
      case AtomicOp::bit_or:
      case AtomicOp::bit_xor:
        reject(k_, s, "a bit atomic on a real local", "bit operations need integer operands");
    }
    if (new_dual) b_.local_store(d, new_dual);
    set_tangent(&s, old_dual);
  }
  void tangent_stmt(IfStmt& s) {
    dualize_block(*s.true_block);
    if (s.false_block) dualize_block(*s.false_block);
  }
  void tangent_stmt(RangeForStmt& s) { dualize_block(*s.body); }
  void tangent_stmt(StructForStmt& s) { dualize_block(*s.body); }
  void tangent_stmt(WhileStmt& s) { dualize_block(*s.body); }
  // No tangent code: values with tangent 0, addresses (made on demand by dual_ptr), control.
  void tangent_stmt(ConstStmt&) {}
  void tangent_stmt(ArgLoadStmt&) {}
  void tangent_stmt(ExternalTensorShapeAlongAxisStmt&) {}
  void tangent_stmt(GlobalPtrStmt&) {}
  void tangent_stmt(ExternalPtrStmt&) {}
  void tangent_stmt(LoopIndexStmt&) {}
  void tangent_stmt(WhileControlStmt&) {}
  void tangent_stmt(ContinueStmt&) {}
  void tangent_stmt(PrintStmt&) {}
  void tangent_stmt(AssertStmt&) {}
  void tangent_stmt(AdStackAllocaStmt& s) { reject_stack(s); }
  void tangent_stmt(AdStackPushStmt& s) { reject_stack(s); }
  void tangent_stmt(AdStackPopStmt& s) { reject_stack(s); }
  void tangent_stmt(AdStackLoadTopStmt& s) { reject_stack(s); }
  void tangent_stmt(AdStackLoadTopAdjStmt& s) { reject_stack(s); }
  void tangent_stmt(AdStackAccAdjointStmt& s) { reject_stack(s); }
  void reject_stack(const Stmt& s) {
    reject(k_, s, "the kernel already contains autodiff stack statements",
           "give make_dual the forward kernel, not one reverse_ad produced");
  }
  void tangent_stmt(OffloadedStmt& s) { reject_offloaded(s); }
  void tangent_stmt(GlobalTemporaryStmt& s) { reject_offloaded(s); }
  void tangent_stmt(GetRootStmt& s) { reject_offloaded(s); }
  void tangent_stmt(ThreadLocalPtrStmt& s) { reject_offloaded(s); }
  void tangent_stmt(SNodeLookupStmt& s) { reject_offloaded(s); }
  void tangent_stmt(GetChStmt& s) { reject_offloaded(s); }
  void tangent_stmt(LinearizeStmt& s) { reject_offloaded(s); }
  void tangent_stmt(IntegerOffsetStmt& s) { reject_offloaded(s); }
  void tangent_stmt(BitExtractStmt& s) { reject_offloaded(s); }
  void tangent_stmt(LoopLinearIndexStmt& s) { reject_offloaded(s); }
  void tangent_stmt(ReturnStmt& s) { reject_offloaded(s); }
  void reject_offloaded(const Stmt& s) {
    reject(k_, s, "make_dual differentiates a kernel before offloading; this statement belongs to the offloaded stage",
           ad::kOffloadedStageRemedy);
  }
  template <class T>
    requires(has_no_backend(T::kKind))
  void tangent_stmt(T& s) {
    reject(k_, s, ad::kNoBackendMessage, ad::kNoBackendRemedy);
  }

  Kernel& k_;
  Builder b_;
  std::unordered_map<const Stmt*, Stmt*> tangent_;   // real value -> tangent value; real local -> dual local
  std::unordered_map<const Stmt*, Stmt*> dual_ptr_;  // differentiable pointer -> its dual's pointer
  std::vector<std::pair<Value, Stmt*>> constants_;
};

}  // namespace

MakeDualResult make_dual(Kernel& k) {
  MakeDualResult r;
  for (size_t i = 0; i < k.fields().size(); ++i) {
    const Field& f = k.fields()[i];
    if (f.grad && !f.dual && !f.primal && is_float(f.dtype)) {
      k.ensure_dual(static_cast<FieldId>(i));
      ++r.duals_inferred;
    }
  }
  if (!k.root().empty()) r.tangent_statements = Dualizer(k).run();
  return r;
}

PassInfo MakeDualPass::info() {
  return declare_pass<MakeDualPass>({.name = "make_dual",
                                     .summary = "Forward-mode autodiff: computes each real value's tangent after it",
                                     .options = {},
                                     .statistics = {"tangent_statements", "duals_inferred"},
                                     .create = {},
                                     .may_break_dominance = false});
}

PassResult MakeDualPass::run(Kernel& k, const PassOptions&) {
  MakeDualResult r = make_dual(k);
  return {r.tangent_statements > 0 || r.duals_inferred > 0,
          {{"tangent_statements", r.tangent_statements}, {"duals_inferred", r.duals_inferred}}};
}

}  // namespace pb::passes
