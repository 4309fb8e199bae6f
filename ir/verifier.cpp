#include "ir/verifier.h"

#include <fmt/format.h>

#include <unordered_map>

#include "ir/printer.h"
#include "ir/stmt_marks.h"
#include "ir/type_rules.h"
#include "ir/visitor.h"

namespace pb::ir {

std::string VerifyError::format() const {
  if (statement.empty()) return message;
  return fmt::format("in `{}`: {}", statement, message);
}

namespace {

class Verifier {
 public:
  Verifier(const Kernel& k, const VerifyOptions& opts)
      : k_(k), opts_(opts), ids_by_value_(4 * k.root().total_size() + 1024) {}

  std::vector<VerifyError> run() {
    if (k_.root().owner() != nullptr) kernel_error("the root block has an owner");
    check_block(k_.root(), nullptr);
    if (too_deep_) return {{nullptr, "", fmt::format("blocks nest more than {} deep", kMaxNestingDepth)}};
    return std::move(errors_);
  }

 private:
  void error(const Stmt& s, std::string msg) { errors_.push_back({&s, print_stmt(s, k_), std::move(msg)}); }
  void kernel_error(std::string msg) { errors_.push_back({nullptr, "", std::move(msg)}); }

  void check_block(const Block& b, const Stmt* owner) {
    if (b.owner() != owner) kernel_error(fmt::format("a block of ${} has a wrong owner link", owner ? owner->id : -1));
    std::vector<const Stmt*> defined_here;
    const Stmt* prev = nullptr;
    for (const Stmt* s : b) {
      if (s->parent() != &b) error(*s, "parent link does not point at the block that holds it");
      if (s->prev() != prev) error(*s, "sibling links are corrupt");
      prev = s;
      check_stmt(*s);
      seen_.set(s, kVisible);
      defined_here.push_back(s);
      // The checks recurse by depth: deeper than the limit, they stop (and only that is reported).
      if (s->is_container() && static_cast<int>(enclosing_.size()) + 1 > kMaxNestingDepth) too_deep_ = true;
      if (s->is_container() && !too_deep_)
        for (const Block* child : s->blocks())
          if (child) {
            enclosing_.push_back(s);
            check_block(*child, s);
            enclosing_.pop_back();
          }
    }
    for (const Stmt* s : defined_here) seen_.set(s, kEarlier);
  }

  void check_stmt(const Stmt& s) {
    if (!claim_id(s)) error(s, fmt::format("id ${} is used by two statements", s.id));
    for (size_t i = 0; i < s.num_operands(); ++i) {
      const Stmt* op = s.operand(i);
      if (!op) {
        error(s, fmt::format("operand {} refers to an erased statement", i));
        return;
      }
      if (isa<LoopIndexStmt>(&s) || isa<LoopLinearIndexStmt>(&s) || isa<BlockCornerIndexStmt>(&s))
        continue;  // checked against the enclosing loops below
      if (!has_value(op->kind()))
        error(s, fmt::format("operand ${} is a {}, which gives no value to read", op->id, kind_name(op->kind())));
      // A stack alloc's type is its element type, but it names the stack, not a value: only a
      // stack op's stack slot (operand 0) may hold it; its top is read with stack load top.
      else if (isa<AdStackAllocaStmt>(op) && !(is_stack_op(s.kind()) && i == 0))
        error(s,
              fmt::format("operand ${} is a stack alloc, which is not a value (read its top with `stack load top ${}`)",
                          op->id, op->id));
      // A task's range bound may be a statement of an earlier task (tasks run in order).
      uint8_t seen = seen_.get(op);
      bool earlier_task = isa<OffloadedStmt>(&s) && seen != 0;
      if (opts_.dominance && seen != kVisible && !earlier_task)
        error(
            s,
            fmt::format(
                "operand ${} does not dominate this use (it is not defined earlier in this block or an enclosing one)",
                op->id));
    }
    auto rule = type_rule(s, k_);
    if (!rule.error.empty())
      error(s, rule.error);
    else if (rule.type != s.type)
      error(s, fmt::format("type <{}> disagrees with the type the operands give, <{}>", to_string(s.type),
                           to_string(rule.type)));
    if (is_mesh(s.kind()) && !s.is_container() && !inside_mesh_loop())
      error(s,
            fmt::format("a {} statement is only meaningful inside a mesh for or a mesh_for task", kind_name(s.kind())));
    visit(s, [&](const auto& x) { check_specific(x); });
  }

  bool inside(StmtKind kind) const {
    for (const Stmt* e : enclosing_)
      if (e->kind() == kind) return true;
    return false;
  }
  bool inside_mesh_loop() const {
    for (const Stmt* e : enclosing_)
      if (const auto* t = dyn_cast<OffloadedStmt>(e); isa<MeshForStmt>(e) || (t && t->task == TaskType::mesh_for))
        return true;
    return false;
  }

  void check_specific(const LoopIndexStmt& s) {
    for (const Stmt* e : enclosing_)
      if (e == s.loop()) return;
    error(s, fmt::format("loop index refers to ${}, which is not an enclosing loop", s.loop() ? s.loop()->id : -1));
  }
  void check_specific(const ContinueStmt& s) {
    bool in_loop_task = false;
    for (const Stmt* e : enclosing_)
      if (const auto* t = dyn_cast<OffloadedStmt>(e); t && t->is_loop_task()) in_loop_task = true;
    if (!inside(StmtKind::RangeFor) && !inside(StmtKind::StructFor) && !inside(StmtKind::While) && !in_loop_task &&
        !inside_mesh_loop())
      error(s, "continue outside a loop");
  }
  void check_specific(const LoopLinearIndexStmt& s) {
    for (const Stmt* e : enclosing_)
      if (e == s.loop()) return;
    error(s, fmt::format("loop index refers to ${}, which is not an enclosing loop", s.loop() ? s.loop()->id : -1));
  }
  void check_specific(const BlockCornerIndexStmt& s) {
    for (const Stmt* e : enclosing_)
      if (e == s.loop()) return;
    error(s, fmt::format("block corner index refers to ${}, which is not an enclosing loop",
                         s.loop() ? s.loop()->id : -1));
  }
  void check_specific(const GetChStmt& s) {
    if (s.type.gen) return;
    auto f = k_.find_field(s.to);
    if (!f)
      error(s, fmt::format("get child of place '{}' has no field of that name", s.to));
    else if (k_.field(*f).dtype != s.type.scalar)
      error(s, fmt::format("field '{}' is {}, but the pointer is <{}>", s.to, scalar_name(k_.field(*f).dtype),
                           to_string(s.type)));
  }
  void check_specific(const OffloadedStmt& s) {
    if (!enclosing_.empty()) error(s, "an offloaded task must be at the kernel's top level");
    if (s.mesh_prologue && s.task != TaskType::mesh_for) error(s, "only a mesh_for task has a body prologue");
    if (s.task == TaskType::struct_for && !k_.find_space(s.snode) && !k_.find_field(s.snode))
      error(s, fmt::format("struct_for walks '{}', which is neither an index space nor a field", s.snode));
  }
  void check_specific(const WhileControlStmt& s) {
    if (!inside(StmtKind::While)) error(s, "while control outside a while loop");
  }
  void check_specific(const MeshForStmt& s) {
    if (!enclosing_.empty()) error(s, "mesh for must be at the kernel's top level");
  }
  void check_specific(const StructForStmt& s) {
    if (!enclosing_.empty()) error(s, "struct for must be at the kernel's top level");
    if (!k_.find_space(s.space) && !k_.find_field(s.space))
      error(s, fmt::format("struct for walks '{}', which is neither an index space nor a field", s.space));
  }
  void check_specific(const GlobalPtrStmt& s) {
    if (s.field < 0 || static_cast<size_t>(s.field) >= k_.fields().size())
      error(s, "global ptr refers to a field that does not exist");
  }
  void check_specific(const AdStackAllocaStmt& s) {
    if (!s.size) return;
    if (s.max_size != 0) error(s, "a stack with a size expression must have max_size=0");
    for (const std::string& v : free_variables(*s.size)) error(s, fmt::format("size variable '{}' is not bound", v));
    for (const SizeExpr* e : nodes(*s.size)) {
      if (e->op() == SizeOp::Field) check_size_field(s, *e);
      if (e->op() == SizeOp::Arg) check_size_arg(s, static_cast<int>(e->value()));
      if (e->op() == SizeOp::Ndarray) check_size_ndarray(s, *e);
    }
  }
  void check_size_ndarray(const AdStackAllocaStmt& s, const SizeExpr& e) {
    auto index = static_cast<int>(e.value());
    if (const ArgDecl* a = k_.find_arg(index)) {
      if (!a->ndarray || (a->dtype != ScalarKind::unknown && !is_integral(a->dtype)))
        error(s, fmt::format("size reads argument {} as an ndarray, but it is not an integer ndarray", index));
      else if (static_cast<size_t>(a->ndim) != e.operands().size())
        error(s, fmt::format("size reads ndarray argument {} with {} index(es), but it has {} dimension(s)", index,
                             e.operands().size(), a->ndim));
      return;
    }
    bool loaded = false;
    walk(k_.root(), [&](Stmt& x) {
      if (auto* l = dyn_cast<ArgLoadStmt>(&x); l && l->arg_index == index && l->type.pointer) loaded = true;
    });
    if (!loaded)
      error(s, fmt::format("size reads ndarray argument {}, which the kernel neither declares nor loads", index));
  }
  void check_size_field(const AdStackAllocaStmt& s, const SizeExpr& e) {
    auto id = k_.find_field(e.name());
    if (!id) return error(s, fmt::format("size reads field '{}', which does not exist", e.name()));
    const Field& f = k_.field(*id);
    if (f.dtype != ScalarKind::unknown && !is_integral(f.dtype))
      error(s,
            fmt::format("size reads field '{}' of type {}; sizes read integer fields", e.name(), scalar_name(f.dtype)));
    if (f.shape && f.shape->size() != e.operands().size())
      error(s, fmt::format("size reads field '{}' with {} index(es), but it has {} dimension(s)", e.name(),
                           e.operands().size(), f.shape->size()));
  }
  void check_size_arg(const AdStackAllocaStmt& s, int index) {
    if (const ArgDecl* a = k_.find_arg(index)) {
      if (a->ndarray || a->tensor != 0 || !is_integral(a->dtype))
        error(s, fmt::format("size reads argument {}, which is not an integer scalar", index));
      return;
    }
    bool loaded = false;
    walk(k_.root(), [&](Stmt& x) {
      if (auto* l = dyn_cast<ArgLoadStmt>(&x); l && l->arg_index == index) loaded = true;
    });
    if (!loaded) error(s, fmt::format("size reads argument {}, which the kernel neither declares nor loads", index));
  }
  void check_specific(const Stmt&) {}

  // Whether no statement checked so far has the id of `s` (ids are small: a vector, else a map).
  bool claim_id(const Stmt& s) {
    if (s.id >= 0 && static_cast<size_t>(s.id) < ids_by_value_.size()) {
      bool fresh = !ids_by_value_[static_cast<size_t>(s.id)];
      ids_by_value_[static_cast<size_t>(s.id)] = true;
      return fresh;
    }
    return ids_.emplace(s.id, &s).second;
  }

  const Kernel& k_;
  VerifyOptions opts_;
  std::vector<VerifyError> errors_;
  // Every statement checked so far (in pre-order): visible at the current point, or only earlier.
  static constexpr uint8_t kEarlier = 1, kVisible = 2;
  StmtMarks seen_;
  std::vector<bool> ids_by_value_;
  std::unordered_map<int, const Stmt*> ids_;  // ids past ids_by_value_
  std::vector<const Stmt*> enclosing_;
  bool too_deep_ = false;
};

}  // namespace

std::vector<VerifyError> verify(const Kernel& k, const VerifyOptions& opts) { return Verifier(k, opts).run(); }

}  // namespace pb::ir
