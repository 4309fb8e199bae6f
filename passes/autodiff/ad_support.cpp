#include "passes/autodiff/ad_support.h"

#include <unordered_map>

#include "ir/visitor.h"

namespace pb::passes::ad {

using namespace ir;

bool is_real(const Stmt* s) { return s && s->type.known() && is_float(s->type.scalar); }

bool is_nonlinear(UnaryOp op) {
  switch (op) {
    case UnaryOp::abs:
    case UnaryOp::sin:
    case UnaryOp::cos:
    case UnaryOp::tan:
    case UnaryOp::tanh:
    case UnaryOp::asin:
    case UnaryOp::acos:
    case UnaryOp::exp:
    case UnaryOp::log:
    case UnaryOp::sqrt:
    case UnaryOp::rsqrt:
      return true;
    default:
      return false;
  }
}

bool is_nonlinear(BinaryOp op) {
  switch (op) {
    case BinaryOp::mul:
    case BinaryOp::div:
    case BinaryOp::pow:
    case BinaryOp::atan2:
    case BinaryOp::min:
    case BinaryOp::max:
    case BinaryOp::mod:  // float: d/dy reads x and y
      return true;
    default:
      return false;
  }
}

std::vector<size_t> required_operand_slots(const Stmt& s) {
  if (auto* u = dyn_cast<UnaryOpStmt>(&s))
    return is_real(&s) && is_nonlinear(u->op) ? std::vector<size_t>{0} : std::vector<size_t>{};
  if (auto* b = dyn_cast<BinaryOpStmt>(&s)) {
    if (!is_real(&s) || !is_nonlinear(b->op)) return {};
    // x * c and x / c are linear in x: the operand is read only to form the other's adjoint.
    bool lhs_varies = !isa<ConstStmt>(b->lhs()), rhs_varies = !isa<ConstStmt>(b->rhs());
    if (b->op == BinaryOp::mul) {
      std::vector<size_t> slots;
      if (rhs_varies) slots.push_back(0);
      if (lhs_varies) slots.push_back(1);
      return slots;
    }
    if (b->op == BinaryOp::div) return rhs_varies ? std::vector<size_t>{0, 1} : std::vector<size_t>{};
    return {0, 1};
  }
  if (isa<TernaryOpStmt>(&s)) return is_real(&s) ? std::vector<size_t>{0} : std::vector<size_t>{};
  if (isa<GlobalPtrStmt>(&s)) {
    std::vector<size_t> all(s.num_operands());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }
  if (isa<ExternalPtrStmt>(&s)) {
    std::vector<size_t> idx;
    for (size_t i = 1; i < s.num_operands(); ++i) idx.push_back(i);
    return idx;
  }
  if (isa<IfStmt>(&s)) return {0};
  if (isa<RangeForStmt>(&s)) return {0, 1};
  return {};
}

namespace {
bool is_loop(const Stmt* s) { return isa<RangeForStmt>(s) || isa<StructForStmt>(s) || isa<WhileStmt>(s); }
}  // namespace

int loop_depth_in(const Stmt& s, const Block& ib) {
  int depth = 0;
  for (const Stmt* o = s.parent_stmt(); o && block_encloses(&ib, o->parent()); o = o->parent_stmt())
    if (is_loop(o)) ++depth;
  return depth;
}

const Stmt* enclosing_loop_in(const Stmt& s, const Block& ib) {
  for (const Stmt* o = s.parent_stmt(); o && block_encloses(&ib, o->parent()); o = o->parent_stmt())
    if (is_loop(o)) return o;
  return nullptr;
}

bool is_stack_op(const Stmt* s) {
  return isa<AdStackPushStmt>(s) || isa<AdStackPopStmt>(s) || isa<AdStackLoadTopStmt>(s) ||
         isa<AdStackLoadTopAdjStmt>(s) || isa<AdStackAccAdjointStmt>(s);
}

namespace {
bool inside(const Stmt* s, const Stmt* container) {
  for (const Stmt* o = s->parent_stmt(); o; o = o->parent_stmt())
    if (o == container) return true;
  return false;
}
}  // namespace

bool stack_clobbered_between(const AdStackLoadTopStmt& def, const Stmt& user,
                             const std::vector<const Stmt*>& stack_writes) {
  uint32_t from = def.position, to = user.position;
  for (const Stmt* w : stack_writes) {
    uint32_t at = w->position;
    if (at > from && at < to) return true;
    if (inside(w, &user)) return true;
    // Another iteration of a loop around `user` (but not around `def`) runs `w` in between.
    for (const Stmt* o = user.parent_stmt(); o && block_encloses(def.parent(), o->parent()); o = o->parent_stmt())
      if (is_loop(o) && inside(w, o)) return true;
  }
  return false;
}

}  // namespace pb::passes::ad
