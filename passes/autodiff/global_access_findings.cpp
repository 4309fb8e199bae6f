#include "passes/autodiff/global_access_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/visitor.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/autodiff/write_after_read.h"

namespace pb::passes {

using namespace ir;

namespace {

using ArrayKey = std::pair<int, int64_t>;  // (0, field id) or (1, ndarray argument index)

std::optional<ArrayKey> differentiable_array(const Kernel& k, const Stmt* ptr) {
  if (!is_differentiable_ptr(k, ptr)) return std::nullopt;
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return ArrayKey{0, g->field};
  if (auto* a = dyn_cast<ArgLoadStmt>(static_cast<const ExternalPtrStmt*>(ptr)->base()))
    return ArrayKey{1, a->arg_index};
  return std::nullopt;
}

std::span<Stmt* const> indices_of(const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return g->indices();
  return static_cast<const ExternalPtrStmt*>(ptr)->indices();
}

const Stmt* top_level_of(const Stmt* s) {
  while (s->parent() && s->parent()->owner()) s = s->parent()->owner();
  return s;
}

// The loop axis `index` is injective in (the loop's index on that axis, plus or minus constants),
// or -1.
int injective_axis(const Stmt* index, const Stmt* loop, int depth = 0) {
  if (depth > 8) return -1;
  if (auto* li = dyn_cast<LoopIndexStmt>(index)) return li->loop() == loop ? li->axis : -1;
  if (auto* b = dyn_cast<BinaryOpStmt>(index); b && (b->op == BinaryOp::add || b->op == BinaryOp::sub)) {
    if (isa<ConstStmt>(b->rhs())) return injective_axis(b->lhs(), loop, depth + 1);
    if (b->op == BinaryOp::add && isa<ConstStmt>(b->lhs())) return injective_axis(b->rhs(), loop, depth + 1);
  }
  return -1;
}

size_t loop_axes(const Kernel& k, const Stmt* loop) {
  auto* sf = dyn_cast<StructForStmt>(loop);
  if (!sf) return 1;
  if (const IndexSpace* sp = k.find_space(sf->space); sp && sp->shape) return sp->shape->size();
  if (auto f = k.find_field(sf->space))
    if (const auto& shape = k.field(*f).shape) return shape->size();
  return SIZE_MAX;  // unknown: never proven apart
}

// Loads of locals that hold one value: an alloca with a single local store, in the alloca's own
// block, before every load of it, and no other use. Such a load is the stored value (Taichi-era
// dumps copy the loop index into a local this way).
using LoadValues = std::unordered_map<const Stmt*, const Stmt*>;

LoadValues single_store_loads(const Kernel& k) {
  std::unordered_map<const Stmt*, const Stmt*> store_of;
  std::set<const Stmt*> spoiled;
  std::vector<const Stmt*> loads;
  for (const Stmt* s : collect_preorder(k.root())) {
    for (size_t i = 0; i < s->num_operands(); ++i) {
      const Stmt* a = s->operand(i);
      if (!a || !isa<AllocaStmt>(a)) continue;
      if (isa<LocalLoadStmt>(s) && i == 0) {
        if (!store_of.count(a)) spoiled.insert(a);  // a load before the store reads the initial zero
        loads.push_back(s);
      } else if (isa<LocalStoreStmt>(s) && i == 0 && s->parent() == a->parent() && !store_of.count(a)) {
        store_of.emplace(a, s);
      } else {
        spoiled.insert(a);
      }
    }
  }
  LoadValues out;
  for (const Stmt* l : loads)
    if (const Stmt* a = l->operand(0); !spoiled.count(a))
      out.emplace(l, static_cast<const LocalStoreStmt*>(store_of.at(a))->val());
  return out;
}

const Stmt* resolved(const Stmt* s, const LoadValues& values) {
  for (int depth = 0; depth < 8; ++depth) {
    auto it = values.find(s);
    if (it == values.end()) break;
    s = it->second;
  }
  return s;
}

// An index as a digit of a range for's index L in a mixed radix: floor(L / d) mod m (m = 0: no
// mod), the way an ndrange's indices are split off one loop index (`floordiv L 2`, `mod L 2`).
struct Digit {
  int64_t d = 1, m = 0;
  bool operator==(const Digit&) const = default;
};

std::optional<Digit> digit_of(const Stmt* s, const Stmt* loop, const LoadValues& values, int depth = 0) {
  s = resolved(s, values);
  if (depth > 8) return std::nullopt;
  if (auto* li = dyn_cast<LoopIndexStmt>(s)) return li->loop() == loop ? std::optional(Digit{}) : std::nullopt;
  auto* b = dyn_cast<BinaryOpStmt>(s);
  auto* c = b ? dyn_cast<ConstStmt>(b->rhs()) : nullptr;
  if (!c || !is_integral(c->value.kind()) || c->value.as_i64() <= 0 || !is_integral(s->type.scalar))
    return std::nullopt;
  auto inner = digit_of(b->lhs(), loop, values, depth + 1);
  if (!inner || inner->m != 0) return std::nullopt;
  if (b->op == BinaryOp::floordiv || b->op == BinaryOp::div) return Digit{inner->d * c->value.as_i64(), 0};
  if (b->op == BinaryOp::mod) return Digit{inner->d, c->value.as_i64()};
  return std::nullopt;
}

// Whether digits shared by both accesses determine a range for's index: d = 1, then d times m,
// and so on up to a digit with no mod (an index of a loop starting at 0 or above).
bool digits_cover(const Stmt* loop, const std::vector<Digit>& digits) {
  auto* f = dyn_cast<RangeForStmt>(loop);
  auto* b = f ? dyn_cast<ConstStmt>(f->begin()) : nullptr;
  if (!b || !is_integral(b->value.kind()) || b->value.as_i64() < 0) return false;
  int64_t d = 1;
  for (size_t step = 0; step <= digits.size(); ++step) {
    auto it = std::find_if(digits.begin(), digits.end(), [&](const Digit& g) { return g.d == d; });
    if (it == digits.end()) return false;
    if (it->m == 0) return true;
    d *= it->m;
  }
  return false;
}

// Whether two accesses with indices `ri` and `wi` inside top-level loop `loop` can only meet on
// the same element in the same iteration.
bool iterations_apart(const Kernel& k, const Stmt* loop, std::span<Stmt* const> ri, std::span<Stmt* const> wi,
                      const LoadValues& values) {
  std::set<int> covered;
  std::vector<Digit> digits;
  for (size_t a = 0; a < ri.size() && a < wi.size(); ++a) {
    if (const Stmt* r = resolved(ri[a], values); r == resolved(wi[a], values))
      if (int axis = injective_axis(r, loop); axis >= 0) covered.insert(axis);
    auto dr = digit_of(ri[a], loop, values), dw = digit_of(wi[a], loop, values);
    if (dr && dw && *dr == *dw) digits.push_back(*dr);
  }
  return covered.size() >= loop_axes(k, loop) || digits_cover(loop, digits);
}

// Whether `s` has one value in every iteration of a top-level loop: constants and scalar
// arguments, and operations on them.
bool loop_invariant(const Stmt* s, int depth = 0) {
  if (depth > 16) return false;
  if (isa<ConstStmt>(s) || isa<ArgLoadStmt>(s) || isa<ExternalTensorShapeAlongAxisStmt>(s))
    return s->type.is_scalar_value();
  if (isa<UnaryOpStmt>(s) || isa<BinaryOpStmt>(s) || isa<TernaryOpStmt>(s)) {
    for (const Stmt* op : s->operands())
      if (!loop_invariant(op, depth + 1)) return false;
    return true;
  }
  return false;
}

// The iterations of top-level loop `loop`, when its bounds or its shape are constants.
std::optional<int64_t> trip_count(const Kernel& k, const Stmt* loop) {
  if (auto* f = dyn_cast<RangeForStmt>(loop)) {
    auto* b = dyn_cast<ConstStmt>(f->begin());
    auto* e = dyn_cast<ConstStmt>(f->end());
    if (!b || !e || !is_integral(b->value.kind()) || !is_integral(e->value.kind())) return std::nullopt;
    return std::max<int64_t>(0, e->value.as_i64() - b->value.as_i64());
  }
  auto* sf = dyn_cast<StructForStmt>(loop);
  if (!sf) return std::nullopt;
  if (is_sparse_snode(k, sf->space) || in_sparse_tree(k, sf->space)) return std::nullopt;  // active cells only
  const Shape* shape = nullptr;
  if (const IndexSpace* sp = k.find_space(sf->space); sp && sp->shape) shape = &*sp->shape;
  if (auto f = k.find_field(sf->space); !shape && f)
    if (const auto& field_shape = k.field(*f).shape) shape = &*field_shape;
  if (!shape) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  return n;
}

// Whether `s` runs in every iteration of `top`: directly in its body, not under an if or a loop.
bool unconditional_in(const Stmt* s, const Stmt* top) { return s->parent() && s->parent()->owner() == top; }

std::string array_name(const Kernel& k, const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return fmt::format("field '{}'", k.field(g->field).name);
  auto* a = dyn_cast<ArgLoadStmt>(static_cast<const ExternalPtrStmt*>(ptr)->base());
  return fmt::format("ndarray argument {}", a ? a->arg_index : -1);
}

}  // namespace

std::vector<GlobalAccessFinding> find_global_access_conflicts(
    const Kernel& k, const std::function<bool(const Stmt*, const Stmt*)>& disjoint) {
  std::map<ArrayKey, std::vector<const Stmt*>> reads, writes;
  std::unordered_map<const Stmt*, size_t> order;
  for (const Stmt* s : collect_preorder(k.root())) {
    order.emplace(s, order.size());
    if (auto* ld = dyn_cast<GlobalLoadStmt>(s)) {
      if (auto key = differentiable_array(k, ld->src())) reads[*key].push_back(s);
    } else if (auto* st = dyn_cast<GlobalStoreStmt>(s)) {
      if (auto key = differentiable_array(k, st->dest())) writes[*key].push_back(s);
    } else if (auto* at = dyn_cast<AtomicOpStmt>(s)) {
      if (auto key = differentiable_array(k, at->dest())) writes[*key].push_back(s);
    }
  }
  const LoadValues values = single_store_loads(k);
  std::vector<GlobalAccessFinding> out;
  for (const auto& [key, rs] : reads) {
    auto ws = writes.find(key);
    if (ws == writes.end()) continue;
    for (const Stmt* read : rs) {
      auto ri = indices_of(read->operand(0));
      for (const Stmt* write : ws->second) {
        auto wi = indices_of(write->operand(0));
        bool apart = false;
        for (size_t a = 0; a < ri.size() && a < wi.size(); ++a) apart = apart || disjoint(ri[a], wi[a]);
        if (apart) continue;
        GlobalAccessFinding f{read, write, false, true};
        bool later = may_run_after(read, write, order);
        const Stmt* top = top_level_of(read);
        bool across = !later && top == top_level_of(write) && is_loop(top) && !iterations_apart(k, top, ri, wi, values);
        if (!later && !across) continue;
        f.same_iteration = later;
        f.same_element = later && std::equal(ri.begin(), ri.end(), wi.begin(), wi.end());
        out.push_back(f);
      }
    }
  }
  return out;
}

std::vector<OverwriteFinding> find_overwrites(const Kernel& k,
                                              const std::function<bool(const Stmt*, const Stmt*)>& disjoint) {
  const LoadValues values = single_store_loads(k);
  std::vector<OverwriteFinding> out;
  for (const Stmt* top : k.root()) {
    if (!isa<RangeForStmt>(top) && !isa<StructForStmt>(top)) continue;
    std::map<ArrayKey, std::vector<const Stmt*>> writes;
    for (const Stmt* s : collect_preorder(*top->blocks()[0])) {
      const Stmt* dest = nullptr;
      if (auto* st = dyn_cast<GlobalStoreStmt>(s)) dest = st->dest();
      if (auto* at = dyn_cast<AtomicOpStmt>(s)) dest = at->dest();
      if (auto key = dest ? differentiable_array(k, dest) : std::nullopt) writes[*key].push_back(s);
    }
    const std::optional<int64_t> trips = trip_count(k, top);
    for (const auto& [key, ws] : writes)
      for (size_t i = 0; i < ws.size(); ++i)
        for (size_t j = i; j < ws.size(); ++j) {
          const Stmt* a = ws[i];
          const Stmt* b = ws[j];
          if (!isa<GlobalStoreStmt>(a) && !isa<GlobalStoreStmt>(b)) continue;  // atomics commute
          auto ai = indices_of(a->operand(0)), bi = indices_of(b->operand(0));
          bool apart = false;
          for (size_t x = 0; x < ai.size() && x < bi.size(); ++x) apart = apart || disjoint(ai[x], bi[x]);
          if (apart || iterations_apart(k, top, ai, bi, values) || (trips && *trips < 2)) continue;
          bool proven = a == b && trips && unconditional_in(a, top) &&
                        std::all_of(ai.begin(), ai.end(), [](const Stmt* x) { return loop_invariant(x); });
          out.push_back({a, b, proven});
        }
  }
  return out;
}

std::string describe_overwrite(const Kernel& k, const OverwriteFinding& f, const std::unordered_map<int, int>& lines) {
  auto line_of = [&](const Stmt* s) {
    auto it = lines.find(s->id);
    return it == lines.end() ? std::string("?") : std::to_string(it->second);
  };
  std::string what = f.proven
                         ? "every iteration of the top-level loop writes the same element"
                         : "maybe the same element from two iterations of the top-level loop (the indices do not prove "
                           "them apart: conservative)";
  std::string stmts = f.first == f.second
                          ? fmt::format("  write: `{}` (line {})", print_stmt(*f.first, k), line_of(f.first))
                          : fmt::format("  write: `{}` (line {})\n  write: `{}` (line {})", print_stmt(*f.first, k),
                                        line_of(f.first), print_stmt(*f.second, k), line_of(f.second));
  return fmt::format(
      "{} is overwritten across iterations ({}); iterations run in any order, and the reverse kernel gives "
      "the stored value's adjoint to every iteration that races on it (a gradient up to the trip count too "
      "large on a parallel backend):\n{}",
      array_name(k, f.first->operand(0)), what, stmts);
}

std::unordered_map<int, int> statement_lines(const Kernel& k) {
  std::unordered_map<int, int> lines;
  std::string text = print_kernel(k);
  int line = 1;
  for (size_t at = 0; at < text.size(); ++line) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    size_t p = text.find_first_not_of(' ', at);
    if (p < end && text[p] == '<') p = text.find("> ", p) + 2;  // the type hint
    if (p < end && text[p] == '$') {
      int id = 0;
      for (size_t q = p + 1; q < end && text[q] >= '0' && text[q] <= '9'; ++q) id = id * 10 + (text[q] - '0');
      lines.emplace(id, line);
    }
    at = end + 1;
  }
  return lines;
}

std::string describe_finding(const Kernel& k, const GlobalAccessFinding& f, const std::unordered_map<int, int>& lines) {
  auto line_of = [&](const Stmt* s) {
    auto it = lines.find(s->id);
    return it == lines.end() ? std::string("?") : std::to_string(it->second);
  };
  std::string where = f.same_element ? "the same element, later in the same iteration"
                      : f.same_iteration
                          ? "maybe the same element, later in the same iteration (the indices are not provably "
                            "different: conservative)"
                          : "maybe the same element in another iteration of the top-level loop (iterations run in "
                            "any order; the indices do not prove them apart: conservative)";
  return fmt::format(
      "{} is read and then written in one launch ({}):\n  read:  `{}` (line {})\n  write: `{}` (line {})"
      "\n  fix: {}",
      array_name(k, f.read->operand(0)), where, print_stmt(*f.read, k), line_of(f.read), print_stmt(*f.write, k),
      line_of(f.write), kGlobalAccessRemedy);
}

}  // namespace pb::passes
