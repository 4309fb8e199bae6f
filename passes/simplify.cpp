#include "passes/simplify.h"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/builder.h"
#include "ir/eval.h"
#include "ir/visitor.h"

namespace pb::passes {

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

// Returns the statement `s` is equal to by an exact identity, or nullptr.
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

// Integer identities that produce a new constant (x*0, x-x, x^x, x&0).
std::optional<Value> constant_identity(const BinaryOpStmt& b) {
  if (!is_integral(b.type.scalar) || !is_integral(b.lhs()->type.scalar)) return std::nullopt;
  ScalarKind k = b.type.scalar;
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
    // Left for run time (integer division by zero, negative integer exponent).
  }
  return std::nullopt;
}

void replace_with_constant(Kernel& k, Stmt* s, const Value& v) {
  Builder b(k);
  b.set_insertion_point_before(*s);
  Stmt* c = b.constant(v);
  s->replace_all_uses_with(c);
  s->parent()->erase(s);
}

}  // namespace

int64_t fold_constants_and_identities(Kernel& k, int64_t& identities) {
  int64_t folded = 0;
  for (Stmt* s : collect_preorder(k.root())) {
    if (!isa<UnaryOpStmt>(s) && !isa<BinaryOpStmt>(s) && !isa<TernaryOpStmt>(s)) continue;
    if (auto* t = dyn_cast<TernaryOpStmt>(s)) {
      if (const ConstStmt* c = as_const(t->cond())) {
        t->replace_all_uses_with(c->value.as_bool() ? t->a() : t->b());
        t->parent()->erase(t);
        ++folded;
        continue;
      }
    }
    if (auto v = fold(*s)) {
      replace_with_constant(k, s, *v);
      ++folded;
    } else if (Stmt* same = identity(s)) {
      s->replace_all_uses_with(same);
      s->parent()->erase(s);
      ++identities;
    }
  }
  return folded;
}

int64_t fold_constant_branches(Kernel& k) {
  int64_t n = 0;
  // Reverse pre-order: an inner if is handled before the outer one that may discard it.
  auto all = collect_preorder(k.root());
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    auto* i = dyn_cast<IfStmt>(*it);
    if (!i) continue;
    const ConstStmt* c = as_const(i->cond());
    if (!c) continue;
    Block* taken = c->value.as_bool() ? i->true_block.get() : i->false_block.get();
    if (taken)
      while (!taken->empty()) i->parent()->insert_before(i, taken->detach(taken->front()));
    i->parent()->erase(i);
    ++n;
  }
  return n;
}

SimplifyResult simplify(Kernel& k, int64_t max_rounds) {
  SimplifyResult r;
  while (r.rounds < max_rounds) {
    ++r.rounds;
    int64_t identities = 0;
    int64_t folded = fold_constants_and_identities(k, identities);
    int64_t branches = fold_constant_branches(k);
    int64_t forwarded = forward_local_stores(k);
    int64_t cse = eliminate_common_subexpressions(k);
    r.folded += folded;
    r.identities += identities;
    r.branches_folded += branches;
    r.loads_forwarded += forwarded;
    r.cse += cse;
    if (folded + identities + branches + forwarded + cse == 0) break;
  }
  return r;
}

PassInfo SimplifyPass::info() {
  return declare_pass<SimplifyPass>(
      {.name = "simplify",
       .summary = "Constant folding, exact identities, CSE, constant if/select folding, local store-to-load forwarding",
       .options = {{.name = "max_rounds", .type = OptionType::Int, .default_value = "16", .help = "fixed-point round limit", .choices = {}}},
       .statistics = {"folded", "identities", "cse", "branches_folded", "loads_forwarded", "rounds"},
       .create = {}});
}

PassResult SimplifyPass::run(Kernel& k, const PassOptions& options) {
  SimplifyResult r = simplify(k, options.get_int("max_rounds"));
  return {r.changed(),
          {{"folded", r.folded},
           {"identities", r.identities},
           {"cse", r.cse},
           {"branches_folded", r.branches_folded},
           {"loads_forwarded", r.loads_forwarded},
           {"rounds", r.rounds}}};
}

}  // namespace pb::passes
