#include "passes/ad_stack_bounds.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::passes::detail {

using namespace ir;

// ---- depths ----

namespace {

void normalize(Depth& d) {
  std::vector<SizeExprPtr> kept;
  for (SizeExprPtr& t : d.terms) {
    if (t->is_const())
      d.offset += t->value();
    else
      kept.push_back(std::move(t));
  }
  d.terms = std::move(kept);
}

// Splits off the terms `a` and `b` share.
Depth common_terms(Depth& a, Depth& b) {
  Depth common;
  for (auto it = a.terms.begin(); it != a.terms.end();) {
    if (cancel_term(b, *it)) {
      common.terms.push_back(*it);
      it = a.terms.erase(it);
    } else {
      ++it;
    }
  }
  return common;
}

}  // namespace

bool Depth::mentions(const std::string& var) const {
  return std::any_of(terms.begin(), terms.end(), [&](const SizeExprPtr& t) { return ir::mentions(*t, var); });
}

Depth plus(Depth a, const Depth& b) {
  a.terms.insert(a.terms.end(), b.terms.begin(), b.terms.end());
  a.offset += b.offset;
  return a;
}

Depth max(const Depth& a, const Depth& b) {
  Depth ra = a, rb = b;
  Depth common = common_terms(ra, rb);
  if (ra.terms.empty() && ra.offset <= rb.offset) return b;
  if (rb.terms.empty() && rb.offset <= ra.offset) return a;
  common.terms.push_back(fold_max(to_expr(ra), to_expr(rb)));
  normalize(common);
  return common;
}

Depth times(const SizeExprPtr& trips, const Depth& d) {
  Depth out;
  for (const SizeExprPtr& t : d.terms) out.terms.push_back(fold_mul(trips, t));
  if (trips->is_const())
    out.offset = trips->value() * d.offset;
  else if (d.offset > 0)
    out.terms.push_back(fold_mul(trips, SizeExpr::constant(d.offset)));
  normalize(out);
  return out;
}

bool cancel_term(Depth& d, const SizeExprPtr& t) {
  for (auto it = d.terms.begin(); it != d.terms.end(); ++it)
    if (equal(**it, *t)) {
      d.terms.erase(it);
      return true;
    }
  return false;
}

bool same(const Depth& a, const Depth& b) {
  if (a.offset != b.offset || a.terms.size() != b.terms.size()) return false;
  Depth ra = a, rb = b;
  common_terms(ra, rb);
  return ra.terms.empty() && rb.terms.empty();
}

SizeExprPtr to_expr(const Depth& d) {
  SizeExprPtr e = SizeExpr::constant(std::max<int64_t>(d.offset, 0));
  for (const SizeExprPtr& t : d.terms) e = fold_add(e, t);
  if (d.offset < 0) e = fold_sub(e, SizeExpr::constant(-d.offset));
  return e;
}

// ---- bounds ----

namespace {

bool encloses(const Stmt* container, const Stmt* s) {
  for (const Stmt* p = s ? s->parent_stmt() : nullptr; p; p = p->parent_stmt())
    if (p == container) return true;
  return false;
}

}  // namespace

BoundBuilder::BoundBuilder(const Kernel& k) : k_(k) {
  walk(k.root(), [&](Stmt& s) { note(s); });
}

void BoundBuilder::note(const Stmt& s) {
  const Stmt* dest = nullptr;
  if (auto* g = dyn_cast<GlobalStoreStmt>(&s)) dest = g->dest();
  if (auto* a = dyn_cast<AtomicOpStmt>(&s)) dest = a->dest();
  if (auto* p = dyn_cast<GlobalPtrStmt>(dest)) written_fields_.insert(p->field);
  if (auto* e = dyn_cast<ExternalPtrStmt>(dest)) {
    if (auto* a = dyn_cast<ArgLoadStmt>(e->base()))
      written_ndarrays_.insert(a->arg_index);
    else
      written_ndarrays_.insert(-1);  // an ndarray of unknown origin: every one may be written
  }
}

std::string BoundBuilder::var_name(const Stmt& loop, int axis) {
  return axis == 0 ? fmt::format("i{}", loop.id) : fmt::format("i{}_{}", loop.id, axis);
}

int BoundBuilder::rank(const Stmt& loop) const {
  if (!isa<StructForStmt>(&loop)) return 1;
  if (const Shape* shape = space_shape(static_cast<const StructForStmt&>(loop))) return static_cast<int>(shape->size());
  int r = 0;
  for (const auto& u : loop.uses())
    if (auto* li = dyn_cast<LoopIndexStmt>(u.user())) r = std::max(r, li->axis + 1);
  return r;
}

const Shape* BoundBuilder::space_shape(const StructForStmt& loop) const {
  if (const IndexSpace* sp = k_.find_space(loop.space); sp && sp->shape) return &*sp->shape;
  if (auto f = k_.find_field(loop.space))
    if (const auto& shape = k_.field(*f).shape) return &*shape;
  return nullptr;
}

SizeExprPtr BoundBuilder::lower_bound(const Stmt* begin) {
  // A non-constant begin that is only bounded from above is assumed to be >= 0.
  if (auto* c = dyn_cast<ConstStmt>(begin); c && is_integral(c->value.kind())) {
    int64_t v = c->value.as_i64();
    return v < 0 ? SizeExpr::constant(0) : SizeExpr::constant(v);
  }
  Built b = value(begin);
  return b.exact ? b.expr : SizeExpr::constant(0);
}

SizeExprPtr BoundBuilder::trip_count(const RangeForStmt& loop) {
  if (auto it = trip_counts_.find(&loop); it != trip_counts_.end()) return it->second;
  SizeExprPtr end = value(loop.end()).expr;
  SizeExprPtr n;
  if (auto* c = dyn_cast<ConstStmt>(loop.begin()); c && is_integral(c->value.kind()) && c->value.as_i64() < 0)
    n = fold_add(end, SizeExpr::constant(-c->value.as_i64()));
  else
    n = fold_sub(end, lower_bound(loop.begin()));
  trip_counts_.emplace(&loop, n);
  return n;
}

std::pair<SizeExprPtr, SizeExprPtr> BoundBuilder::index_range(const Stmt& loop, int axis) {
  if (const auto* f = dyn_cast<RangeForStmt>(&loop)) return {lower_bound(f->begin()), value(f->end()).expr};
  const auto& sf = static_cast<const StructForStmt&>(loop);
  const Shape* shape = space_shape(sf);
  if (!shape || static_cast<size_t>(axis) >= shape->size())
    throw BoundError(fmt::format("struct for over '{}', whose shape is not declared", sf.space), &loop);
  return {SizeExpr::constant(0), SizeExpr::constant((*shape)[static_cast<size_t>(axis)])};
}

SizeExprPtr BoundBuilder::over_loops_not_enclosing(SizeExprPtr e, const Stmt* from, const Stmt* to) {
  for (const Stmt* p = from->parent_stmt(); p && !encloses(p, to); p = p->parent_stmt()) {
    if (!is_counted_loop(p)) continue;
    for (int axis = 0; axis < rank(*p); ++axis) {
      std::string v = var_name(*p, axis);
      if (!mentions(*e, v)) continue;
      auto [begin, end] = index_range(*p, axis);
      e = fold_max_over_range(v, begin, end, e);
    }
  }
  return e;
}

BoundBuilder::Built BoundBuilder::value(const Stmt* s) {
  auto unsupported = [&](const std::string& why) -> Built {
    throw BoundError(fmt::format("`{}` {}", print_stmt(*s, k_), why), s);
  };
  if (!s->type.is_value() || !is_integral(s->type.scalar)) return unsupported("is not an integer value");
  if (auto* c = dyn_cast<ConstStmt>(s)) {
    int64_t v = c->value.as_i64();
    return {SizeExpr::constant(std::max<int64_t>(v, 0)), v >= 0};
  }
  if (auto* a = dyn_cast<ArgLoadStmt>(s)) return {SizeExpr::arg(a->arg_index), true};
  if (auto* li = dyn_cast<LoopIndexStmt>(s)) return {SizeExpr::var(var_name(*li->loop(), li->axis)), true};
  if (auto* g = dyn_cast<GlobalLoadStmt>(s)) return field_load(*g);
  if (auto* l = dyn_cast<LocalLoadStmt>(s)) return local_load(*l);
  if (auto* b = dyn_cast<BinaryOpStmt>(s)) return binary(*b);
  if (auto* u = dyn_cast<UnaryOpStmt>(s)) {
    if (u->op != UnaryOp::cast_value) return unsupported("is not an integer cast");
    return value(u->x());
  }
  if (auto* t = dyn_cast<TernaryOpStmt>(s)) return {fold_max(value(t->a()).expr, value(t->b()).expr), false};
  return unsupported("is not a constant, argument, field load, loop index, local load or integer arithmetic on those");
}

BoundBuilder::Built BoundBuilder::binary(const BinaryOpStmt& s) {
  Built a = value(s.lhs());
  Built b = value(s.rhs());
  switch (s.op) {
    case BinaryOp::add:
      return {fold_add(a.expr, b.expr), a.exact && b.exact};
    case BinaryOp::sub:
      // Subtracting an upper bound could undercount: drop an inexact subtrahend.
      if (!b.exact) return {a.expr, false};
      return {fold_sub(a.expr, b.expr), a.exact};
    case BinaryOp::mul:
      return {fold_mul(a.expr, b.expr), a.exact && b.exact};
    case BinaryOp::max:
      return {fold_max(a.expr, b.expr), a.exact && b.exact};
    case BinaryOp::min:
      return {fold_min(a.expr, b.expr), a.exact && b.exact};
    case BinaryOp::floordiv:
    case BinaryOp::div: {
      // Integer division of non-negative values by a positive constant: floor = truncation, and
      // it is non-decreasing, so an upper bound divides to an upper bound.
      int64_t d = positive_constant(s);
      return {fold_floordiv(a.expr, d), a.exact};
    }
    case BinaryOp::mod: {
      int64_t d = positive_constant(s);
      // The remainder of an upper bound bounds nothing: then d - 1 does.
      if (!a.exact) return {SizeExpr::constant(d - 1), false};
      return {fold_mod(a.expr, d), true};
    }
    default:
      throw BoundError(fmt::format("`{}` uses {}, which size bounds do not model (add sub mul floordiv mod max min)",
                                   print_stmt(s, k_), op_name(s.op)),
                       &s);
  }
}

int64_t BoundBuilder::positive_constant(const BinaryOpStmt& s) {
  auto* c = dyn_cast<ConstStmt>(s.rhs());
  if (!c || c->value.as_i64() <= 0)
    throw BoundError(fmt::format("`{}` divides by something other than a positive constant", print_stmt(s, k_)), &s);
  return c->value.as_i64();
}

std::vector<SizeExprPtr> BoundBuilder::exact_indices(const GlobalLoadStmt& s, std::span<Stmt* const> indices,
                                                     const std::string& what) {
  std::vector<SizeExprPtr> idx;
  for (const Stmt* i : indices) {
    Built b = value(i);
    if (!b.exact)
      throw BoundError(fmt::format("`{}` indexes {} with a value known only up to a bound", print_stmt(s, k_), what),
                       &s);
    idx.push_back(b.expr);
  }
  return idx;
}

BoundBuilder::Built BoundBuilder::ndarray_load(const GlobalLoadStmt& s, const ExternalPtrStmt& ptr) {
  const auto* base = dyn_cast<ArgLoadStmt>(ptr.base());
  if (!base || ptr.is_grad || ptr.is_dual)
    throw BoundError(fmt::format("`{}` reads an ndarray element the size grammar cannot name", print_stmt(s, k_)), &s);
  std::string what = fmt::format("ndarray argument {}", base->arg_index);
  if (written_ndarrays_.count(base->arg_index) || written_ndarrays_.count(-1))
    throw BoundError(fmt::format("`{}` reads {}, which the kernel writes", print_stmt(s, k_), what), &s);
  return {SizeExpr::ndarray(base->arg_index, exact_indices(s, ptr.indices(), what)), true};
}

BoundBuilder::Built BoundBuilder::field_load(const GlobalLoadStmt& s) {
  if (const auto* e = dyn_cast<ExternalPtrStmt>(s.src())) return ndarray_load(s, *e);
  const auto* ptr = dyn_cast<GlobalPtrStmt>(s.src());
  if (!ptr) throw BoundError(fmt::format("`{}` reads memory the size grammar cannot name", print_stmt(s, k_)), &s);
  const Field& f = k_.field(ptr->field);
  if (written_fields_.count(ptr->field))
    throw BoundError(fmt::format("`{}` reads field '{}', which the kernel writes", print_stmt(s, k_), f.name), &s);
  return {SizeExpr::field(f.name, exact_indices(s, ptr->indices(), fmt::format("field '{}'", f.name))), true};
}

BoundBuilder::Built BoundBuilder::local_load(const LocalLoadStmt& s) {
  const Stmt* var = s.src();
  if (in_progress_.count(var))
    throw BoundError(fmt::format("`{}` reads a variable whose stored values depend on itself", print_stmt(s, k_)), &s);
  in_progress_.insert(var);
  SizeExprPtr out = SizeExpr::constant(0);
  for (const auto& u : var->uses()) {
    if (isa<LocalLoadStmt>(u.user())) continue;
    const auto* st = dyn_cast<LocalStoreStmt>(u.user());
    if (!st || u.slot() != 0)
      throw BoundError(
          fmt::format("`{}` reads a variable that `{}` modifies", print_stmt(s, k_), print_stmt(*u.user(), k_)), &s);
    out = fold_max(out, over_loops_not_enclosing(value(st->val()).expr, st, &s));
  }
  in_progress_.erase(var);
  return {out, false};
}

}  // namespace pb::passes::detail
