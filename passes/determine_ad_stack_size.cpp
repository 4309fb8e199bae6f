#include "passes/determine_ad_stack_size.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/numbering.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/ad_stack_bounds.h"

namespace pb::passes {

using namespace ir;
using detail::BoundBuilder;
using detail::BoundError;
using detail::Depth;

namespace {

using OptDepth = std::optional<Depth>;  // nullopt: no path reaches this point

OptDepth join(const OptDepth& a, const OptDepth& b) {
  if (!a) return b;
  if (!b) return a;
  return detail::max(*a, *b);
}

// Paths that leave a loop body early: `continue` goes to the next iteration, a while control
// leaves the innermost while loop.
struct Exits {
  OptDepth next_iteration;
  OptDepth leave_while;
};

// The paths through a region: the depth at its end and the highest depth on the way.
struct Paths {
  OptDepth end;
  OptDepth peak;
};

const char* kRemedy =
    "give a fixed ad_stack_size (replace_locals_with_stacks{ad_stack_size=N}) or bound the loop by a constant, arg or "
    "field";

const Block* body_of(const Stmt& loop) { return loop.blocks()[0]; }

// What every stack's walk shares: pre-order positions and, per block, its continue and while
// control statements (the only statements besides a stack's own pushes and pops, and the
// containers holding them, that change a path's depth).
struct KernelIndex {
  std::unordered_map<const Block*, std::vector<const Stmt*>> controls;
  std::vector<AdStackAllocaStmt*> stacks;  // in pre-order
  Numbering preorder;

  // One walk for the index and for what `bounds` must see.
  KernelIndex(Kernel& k, BoundBuilder& bounds) {
    preorder.reserve(k.root().total_size());
    walk(k.root(), [&](Stmt& s) {
      preorder.add(s);
      bounds.note(s);
      if (auto* a = dyn_cast<AdStackAllocaStmt>(&s)) stacks.push_back(a);
      // A continue ends paths of its innermost loop's body; a while control, of its while. The
      // statements holding it up to that loop are on the way.
      bool is_continue = isa<ContinueStmt>(&s);
      if (!is_continue && !isa<WhileControlStmt>(&s)) return;
      for (const Stmt* a = &s; a && a->parent(); a = a->parent_stmt()) {
        if (a != &s && (is_continue ? a->is_container() && !isa<IfStmt>(a) : isa<WhileStmt>(a))) break;
        auto& list = controls[a->parent()];
        if (std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
      }
    });
  }
};

// What a stack's sizing walk reads, as bytes: its alloc's block, then each push or pop in
// pre-order with the block it sits in (the blocks fix the containers between it and the alloc,
// and the order fixes how they nest). Two stacks with equal keys get equal bounds, so each key
// is sized once. Loop exits (continue, while control) also steer the walk; in a kernel that has
// any, there is no key (every stack is sized on its own).
bool sizing_key(const AdStackAllocaStmt& stack, const KernelIndex& index,
                std::vector<std::pair<uint32_t, const Stmt*>>& events, std::string& key) {
  if (!index.controls.empty()) return false;
  events.clear();
  for (const Stmt::Use& use : stack.uses())
    if (isa<AdStackPushStmt>(use.user()) || isa<AdStackPopStmt>(use.user()))
      events.emplace_back(index.preorder[*use.user()], use.user());
  std::sort(events.begin(), events.end());
  key.clear();
  auto append = [&](const void* p) {
    auto v = reinterpret_cast<uintptr_t>(p);
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  append(stack.parent());
  for (const auto& [position, s] : events) {
    key += isa<AdStackPushStmt>(s) ? 'P' : 'Q';
    append(s->parent());
  }
  return true;
}

// The longest path of one stack's depth over the structured control flow, from its alloc. Only
// the statements that matter are visited: the stack's pushes and pops, the containers holding
// them, and the loop exits in those containers, so sizing all stacks costs the sum of their
// uses times nesting depth rather than stacks times kernel size.
class StackSizer {
 public:
  StackSizer(const Kernel& k, const AdStackAllocaStmt& stack, BoundBuilder& bounds, const KernelIndex& index)
      : k_(k), stack_(stack), bounds_(bounds), index_(index) {
    for (const Stmt::Use& use : stack.uses()) {
      const Stmt* u = use.user();
      if (!isa<AdStackPushStmt>(u) && !isa<AdStackPopStmt>(u)) continue;
      for (const Stmt* s = u; s && s->parent() && s != &stack_; s = s->parent_stmt()) {
        auto& kids = children_of(s->parent());
        if (std::find(kids.begin(), kids.end(), s) != kids.end()) break;  // ancestors already recorded
        kids.push_back(s);
        if (s->parent() == stack_.parent()) break;
      }
    }
    for (auto& [block, kids] : children_) {
      if (auto it = index_.controls.find(block); it != index_.controls.end())
        kids.insert(kids.end(), it->second.begin(), it->second.end());
      const Numbering& order = index_.preorder;
      std::sort(kids.begin(), kids.end(), [&](const Stmt* a, const Stmt* b) { return order[*a] < order[*b]; });
      kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    }
  }

  SizeExprPtr run() {
    Exits outside;  // leaving the alloc's own block ends the stack's life
    Depth peak = walk(stack_.parent(), index_.preorder[stack_], Depth{}, outside).peak.value_or(Depth{});
    for (const Stmt* p = stack_.parent_stmt(); p; p = p->parent_stmt())
      if (is_counted_loop(p)) peak = bind_loop_vars(peak, *p);
    return detail::to_expr(peak);
  }

 private:
  std::vector<const Stmt*>& children_of(const Block* b) {
    for (auto& [block, kids] : children_)
      if (block == b) return kids;
    return children_.emplace_back(b, std::vector<const Stmt*>{}).second;
  }

  // What walk visits in `b`: this stack's pushes and pops and the containers holding them, or
  // only loop exits, or nothing.
  const std::vector<const Stmt*>* visited_in(const Block* b) const {
    for (const auto& [block, kids] : children_)
      if (block == b) return &kids;
    if (auto c = index_.controls.find(b); c != index_.controls.end()) return &c->second;
    return nullptr;
  }

  // The paths through the part of `b` after pre-order position `after` (all of it: 0).
  Paths walk(const Block* b, uint32_t after, OptDepth d, Exits& exits) {
    OptDepth peak = d;
    const std::vector<const Stmt*>* kids = visited_in(b);
    if (!kids) return {d, peak};
    for (const Stmt* s : *kids) {
      if (!d) break;
      if (after && index_.preorder[*s] <= after) continue;
      if (auto* push = dyn_cast<AdStackPushStmt>(s); push && push->stack() == &stack_) {
        d->offset += 1;
        peak = join(peak, d);
      } else if (auto* pop = dyn_cast<AdStackPopStmt>(s); pop && pop->stack() == &stack_) {
        d->offset -= 1;
      } else if (auto* i = dyn_cast<IfStmt>(s)) {
        Paths t = walk(i->true_block.get(), 0, d, exits);
        Paths f = i->false_block ? walk(i->false_block.get(), 0, d, exits) : Paths{d, d};
        d = join(t.end, f.end);
        peak = join(peak, join(t.peak, f.peak));
      } else if (is_loop(s)) {
        Paths l = loop(*s, *d, exits);
        d = l.end;
        peak = join(peak, l.peak);
      } else if (isa<ContinueStmt>(s)) {
        exits.next_iteration = join(exits.next_iteration, d);
        d.reset();
      } else if (isa<WhileControlStmt>(s)) {
        exits.leave_while = join(exits.leave_while, d);
      }
    }
    return {d, peak};
  }

  Paths loop(const Stmt& s, const Depth& d, Exits& outer) {
    std::optional<SizeExprPtr> trips;
    std::string trips_error;
    if (const auto* f = dyn_cast<RangeForStmt>(&s)) {
      try {
        trips = bounds_.trip_count(*f);
      } catch (const BoundError& e) {
        trips_error = e.what();
      }
    }
    if (trips && (*trips)->is_const() && (*trips)->value() == 0) return {d, d};

    Exits inner;
    Paths body = walk(body_of(s), 0, Depth{}, inner);
    Depth net = bind_loop_vars(join(body.end, inner.next_iteration).value_or(Depth{}), s);
    Depth peak = bind_loop_vars(body.peak.value_or(Depth{}), s);
    OptDepth leave = inner.leave_while;
    if (leave) leave = bind_loop_vars(*leave, s);

    Depth loop_peak = peak, after = d;
    if (!net.is_constant() || net.offset > 0) {  // a positive cycle: bound it by the trip count
      SizeExprPtr n = trip_count_or_fail(s, trips, trips_error);
      Depth total = detail::times(n, net);
      loop_peak = detail::same(peak, net) ? total : plus(detail::times(fold_sub(n, SizeExpr::constant(1)), net), peak);
      after = plus(d, total);
    } else if (net.offset < 0 && trips) {  // pops of earlier pushes: exact for a constant count
      if ((*trips)->is_const())
        after.offset += (*trips)->value() * net.offset;
      else
        detail::cancel_term(after, fold_mul(*trips, SizeExpr::constant(-net.offset)));
    }
    Paths out{after, plus(d, loop_peak)};
    if (isa<WhileStmt>(&s)) {
      out.end = leave ? OptDepth(plus(d, *leave)) : std::nullopt;
    } else if (leave) {  // a while control inside a for leaves the enclosing while
      outer.leave_while = join(outer.leave_while, out.peak);
    }
    return out;
  }

  SizeExprPtr trip_count_or_fail(const Stmt& loop, const std::optional<SizeExprPtr>& trips, const std::string& why) {
    if (trips) return *trips;
    if (isa<WhileStmt>(&loop)) fail(loop, "a while loop, whose trip count is unknown");
    if (isa<StructForStmt>(&loop)) fail(loop, "a struct for, whose iterations would all push onto the one stack");
    fail(loop, "whose bound is outside the size grammar: " + why);
  }

  // Replaces a loop's index variables by their maximum over the loop's range.
  Depth bind_loop_vars(Depth d, const Stmt& loop) {
    if (d.is_constant()) return d;  // mentions no variable (most depths): skip naming them
    for (int axis = 0; axis < bounds_.rank(loop); ++axis) {
      std::string v = BoundBuilder::var_name(loop, axis);
      if (!d.mentions(v)) continue;
      try {
        auto [begin, end] = bounds_.index_range(loop, axis);
        SizeExprPtr e = fold_max_over_range(v, begin, end, detail::to_expr(d));
        d = e->is_const() ? Depth{{}, e->value()} : Depth{{e}, 0};
      } catch (const BoundError& e) {
        fail(loop, e.what(), "its bound uses the index of");
      }
    }
    return d;
  }

  [[noreturn]] void fail(const Stmt& loop, const std::string& why,
                         const char* relation = "its depth grows with each iteration of") const {
    std::string loop_text = print_stmt(loop, k_);
    if (loop_text.size() > 2 && loop_text.ends_with(" {")) loop_text.resize(loop_text.size() - 2);
    throw UserError(
        fmt::format("cannot size autodiff stack `{}`: {} `{}`, {}", print_stmt(stack_, k_), relation, loop_text, why),
        kRemedy);
  }

  const Kernel& k_;
  const AdStackAllocaStmt& stack_;
  BoundBuilder& bounds_;
  const KernelIndex& index_;
  // What walk visits, in order, per block (a stack lives in few blocks: a linear search).
  std::vector<std::pair<const Block*, std::vector<const Stmt*>>> children_;
};

}  // namespace

AdStackSizeResult determine_ad_stack_sizes(Kernel& k) {
  AdStackSizeResult r;
  BoundBuilder bounds(k, BoundBuilder::Unscanned{});
  KernelIndex index(k, bounds);
  struct Sized {
    SizeExprPtr bound;
    std::string text;
  };
  std::unordered_map<std::string, Sized> sized;  // by sizing_key
  Sized unkeyed;
  std::vector<std::pair<uint32_t, const Stmt*>> events;
  std::string key;
  for (AdStackAllocaStmt* stack : index.stacks) {
    if (stack->is_sized()) {
      r.bounds.push_back({stack->id, stack->size ? "size=" + to_string(*stack->size) + " (given)"
                                                 : fmt::format("max_size={} (given)", stack->max_size)});
      continue;
    }
    Sized* entry = &unkeyed;
    if (sizing_key(*stack, index, events, key)) entry = &sized.try_emplace(key).first->second;
    if (!entry->bound) {
      SizeExprPtr bound = StackSizer(k, *stack, bounds, index).run();
      entry->bound = bound;
      entry->text = bound->is_const() ? fmt::format("max_size={}", std::max<int64_t>(bound->value(), 1))
                                      : "size=" + to_string(*bound);
    }
    SizeExprPtr bound = entry->bound;
    if (bound->is_const()) {
      stack->max_size = std::max<int64_t>(bound->value(), 1);
      ++r.constant;
    } else {
      stack->size = bound;
      ++r.symbolic;
    }
    r.bounds.push_back({stack->id, entry->text});
    unkeyed = {};
    ++r.stacks_sized;
  }
  return r;
}

PassInfo DetermineAdStackSizePass::info() {
  return declare_pass<DetermineAdStackSizePass>(
      {.name = "determine_ad_stack_size",
       .summary = "Sizes adaptive autodiff stacks: a constant max_size, or a size expression over args and fields",
       .options = {},
       .statistics = {"stacks_sized", "constant", "symbolic"},
       .create = {}});
}

PassResult DetermineAdStackSizePass::run(Kernel& k, const PassOptions&) {
  AdStackSizeResult r = determine_ad_stack_sizes(k);
  std::vector<std::string> notes;  // one per stack (tens of thousands in big kernels): no fmt here
  notes.reserve(r.bounds.size());
  for (const auto& b : r.bounds) {
    std::string note = "stack $";
    note += std::to_string(b.stack_id);
    note += ": ";
    note += b.bound;
    notes.push_back(std::move(note));
  }
  return {r.stacks_sized > 0,
          {{"stacks_sized", r.stacks_sized}, {"constant", r.constant}, {"symbolic", r.symbolic}},
          std::move(notes)};
}

}  // namespace pb::passes
