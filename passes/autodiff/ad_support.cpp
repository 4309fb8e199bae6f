#include "passes/autodiff/ad_support.h"

#include <unordered_map>

#include "ir/assert.h"
#include "ir/visitor.h"

namespace pb::passes::ad {

using namespace ir;

const ir::Stmt* first_offloaded_stage_stmt(const ir::Kernel& k) {
  for (const ir::Stmt* s : ir::collect_preorder(k.root()))
    if (ir::is_offloaded_stage(s->kind())) return s;
  return nullptr;
}

const ir::Stmt* first_no_backend_stmt(const ir::Kernel& k) {
  for (const ir::Stmt* s : ir::collect_preorder(k.root()))
    if (ir::has_no_backend(s->kind())) return s;
  return nullptr;
}

bool is_real(const Stmt* s) { return s && s->type.known() && is_float(s->type.scalar); }

bool is_nonlinear(UnaryOp op) { return gradient_of(op) == Gradient::nonlinear; }
bool is_nonlinear(BinaryOp op) { return gradient_of(op) == Gradient::nonlinear; }

SlotSet required_operand_slots(const Stmt& s) {
  SlotSet slots;
  auto range = [&](size_t from) {
    PB_ASSERT(s.num_operands() <= 64, "a statement has at most 64 operands");
    for (size_t i = from; i < s.num_operands(); ++i) slots.add(i);
  };
  if (auto* u = dyn_cast<UnaryOpStmt>(&s)) {
    if (is_real(&s) && is_nonlinear(u->op)) slots.add(0);
  } else if (auto* b = dyn_cast<BinaryOpStmt>(&s)) {
    if (!is_real(&s) || !is_nonlinear(b->op)) return slots;
    // x * c and x / c are linear in x: the operand is read only to form the other's adjoint.
    bool lhs_varies = !isa<ConstStmt>(b->lhs()), rhs_varies = !isa<ConstStmt>(b->rhs());
    if (b->op == BinaryOp::mul) {
      if (rhs_varies) slots.add(0);
      if (lhs_varies) slots.add(1);
    } else if (b->op != BinaryOp::div || rhs_varies) {
      range(0);
    }
  } else if (isa<TernaryOpStmt>(&s)) {
    if (is_real(&s)) slots.add(0);
  } else if (isa<GlobalPtrStmt>(&s) || isa<RangeForStmt>(&s)) {
    range(0);  // every index; both bounds
  } else if (isa<ExternalPtrStmt>(&s)) {
    range(1);
  } else if (isa<IfStmt>(&s)) {
    slots.add(0);
  }
  return slots;
}

// One walk up from `s` (O(depth)): the loops met before reaching `ib` lie inside it; a statement
// outside `ib` has none there.
int loop_depth_in(const Stmt& s, const Block& ib) {
  int depth = 0;
  for (const Block* b = s.parent(); b; b = b->owner() ? b->owner()->parent() : nullptr) {
    if (b == &ib) return depth;
    if (is_loop(b->owner())) ++depth;
  }
  return 0;
}

const Stmt* enclosing_loop_in(const Stmt& s, const Block& ib) {
  const Stmt* nearest = nullptr;
  for (const Block* b = s.parent(); b; b = b->owner() ? b->owner()->parent() : nullptr) {
    if (b == &ib) return nearest;
    if (!nearest && is_loop(b->owner())) nearest = b->owner();
  }
  return nullptr;
}

IbLoops::Facts IbLoops::of(const Block* b) {
  if (b == &ib_) return {0, nullptr, true};
  if (auto it = memo_.find(b); it != memo_.end()) return it->second;
  const Stmt* owner = b->owner();
  Facts f;
  if (owner && owner->parent()) {
    Facts up = of(owner->parent());  // recursion as deep as the nesting (at most kMaxNestingDepth)
    if (up.inside) f = {up.depth + (is_loop(owner) ? 1 : 0), is_loop(owner) ? owner : up.nearest, true};
  }
  memo_.emplace(b, f);
  return f;
}

namespace {
bool inside(const Stmt* s, const Stmt* container) {
  for (const Stmt* o = s->parent_stmt(); o; o = o->parent_stmt())
    if (o == container) return true;
  return false;
}
}  // namespace

bool stack_clobbered_between(const Numbering& preorder, const AdStackLoadTopStmt& def, const Stmt& user,
                             const std::vector<const Stmt*>& stack_writes) {
  uint32_t from = preorder[def], to = preorder[user];
  for (const Stmt* w : stack_writes) {
    uint32_t at = preorder[*w];
    if (at > from && at < to) return true;
    if (inside(w, &user)) return true;
    // Another iteration of a loop around `user` (but not around `def`) runs `w` in between.
    for (const Stmt* o = user.parent_stmt(); o && block_encloses(def.parent(), o->parent()); o = o->parent_stmt())
      if (is_loop(o) && inside(w, o)) return true;
  }
  return false;
}

}  // namespace pb::passes::ad
