#include "passes/simplify_rules.h"

#include <cmath>

#include "ir/eval.h"

namespace pb::passes::simplify_rules {

using namespace ir;

namespace {

const ConstStmt* as_const(const Stmt* s) { return dyn_cast<ConstStmt>(s); }

bool is_const_value(const Stmt* s, double v) {
  const ConstStmt* c = as_const(s);
  return c && c->value.as_f64() == v;
}

// +0.0 or -0.0 exactly, by bits.
bool is_float_zero(const Stmt* s, bool negative) {
  const ConstStmt* c = as_const(s);
  if (!c || !is_float(c->value.kind()) || c->value.as_f64() != 0.0) return false;
  return std::signbit(c->value.as_f64()) == negative;
}

}  // namespace

Stmt* identity(Stmt* s) {
  if (auto* u = dyn_cast<UnaryOpStmt>(s)) {
    if (u->op == UnaryOp::cast_value && u->x()->type == u->type) return u->x();
    if (u->op == UnaryOp::neg)
      if (auto* inner = dyn_cast<UnaryOpStmt>(u->x()); inner && inner->op == UnaryOp::neg) return inner->x();
    return nullptr;
  }
  if (auto* t = dyn_cast<TernaryOpStmt>(s)) return t->a() == t->b() ? t->a() : nullptr;
  auto* b = dyn_cast<BinaryOpStmt>(s);
  if (!b) return nullptr;
  Stmt* l = b->lhs();
  Stmt* r = b->rhs();
  bool integral = is_integral(b->type.scalar) && is_integral(l->type.scalar);
  switch (b->op) {
    case BinaryOp::mul:
      if (is_const_value(r, 1)) return l;
      if (is_const_value(l, 1)) return r;
      return nullptr;
    case BinaryOp::div:
      return is_const_value(r, 1) ? l : nullptr;
    case BinaryOp::add:
      if (integral) return is_const_value(r, 0) ? l : (is_const_value(l, 0) ? r : nullptr);
      if (is_float_zero(r, true)) return l;  // x + -0.0 == x for every x, -0.0 included
      if (is_float_zero(l, true)) return r;
      return nullptr;
    case BinaryOp::sub:
      if (integral) return is_const_value(r, 0) ? l : nullptr;
      return is_float_zero(r, false) ? l : nullptr;  // x - +0.0 == x, -0.0 included
    case BinaryOp::min:
    case BinaryOp::max:
      return l == r ? l : nullptr;
    case BinaryOp::bit_and:
    case BinaryOp::bit_or:
      if (l == r) return l;
      if (b->op == BinaryOp::bit_or && is_const_value(r, 0)) return l;
      if (b->op == BinaryOp::bit_or && is_const_value(l, 0)) return r;
      return nullptr;
    case BinaryOp::bit_xor:
      if (is_const_value(r, 0)) return l;
      if (is_const_value(l, 0)) return r;
      return nullptr;
    case BinaryOp::bit_shl:
    case BinaryOp::bit_shr:
    case BinaryOp::bit_sar:
      return is_const_value(r, 0) ? l : nullptr;
    default:
      return nullptr;
  }
}

namespace {
// Integer identities that produce a new constant (x*0, x-x, x^x, x&0).
std::optional<Value> constant_identity(const BinaryOpStmt& b) {
  ScalarKind k = b.type.scalar;
  if (is_float(b.lhs()->type.scalar)) {
    // Ordered comparisons: x != x, x < x and x > x are false for every x, NaN included.
    bool never = b.op == BinaryOp::cmp_ne || b.op == BinaryOp::cmp_lt || b.op == BinaryOp::cmp_gt;
    if (never && b.lhs() == b.rhs()) return Value::zero(k);
    return std::nullopt;
  }
  if (!is_integral(k) || !is_integral(b.lhs()->type.scalar)) return std::nullopt;
  switch (b.op) {
    case BinaryOp::mul:
      if (is_const_value(b.lhs(), 0) || is_const_value(b.rhs(), 0)) return Value::zero(k);
      break;
    case BinaryOp::sub:
    case BinaryOp::bit_xor:
      if (b.lhs() == b.rhs()) return Value::zero(k);
      break;
    case BinaryOp::bit_and:
      if (is_const_value(b.lhs(), 0) || is_const_value(b.rhs(), 0)) return Value::zero(k);
      break;
    case BinaryOp::cmp_eq:
    case BinaryOp::cmp_le:
    case BinaryOp::cmp_ge:
      if (b.lhs() == b.rhs()) return Value::from_int(k, 1);
      break;
    case BinaryOp::cmp_ne:
    case BinaryOp::cmp_lt:
    case BinaryOp::cmp_gt:
      if (b.lhs() == b.rhs()) return Value::zero(k);
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Value> fold(const Stmt& s) {
  try {
    if (const auto* u = dyn_cast<UnaryOpStmt>(&s)) {
      const ConstStmt* x = as_const(u->x());
      if (!x) return std::nullopt;
      if (u->op == UnaryOp::cast_value) return x->value.cast_to(u->type.scalar);
      if (u->op == UnaryOp::cast_bits) return x->value.bitcast_to(u->type.scalar);
      return eval_unary(u->op, x->value, u->type.scalar);
    }
    if (const auto* b = dyn_cast<BinaryOpStmt>(&s)) {
      const ConstStmt* l = as_const(b->lhs());
      const ConstStmt* r = as_const(b->rhs());
      if (l && r) return eval_binary(b->op, l->value, r->value, b->type.scalar);
      return constant_identity(*b);
    }
  } catch (const EvalError&) {
    return std::nullopt;  // left for run time (integer division by zero, negative integer exponent)
  }
  return std::nullopt;
}

}  // namespace pb::passes::simplify_rules
