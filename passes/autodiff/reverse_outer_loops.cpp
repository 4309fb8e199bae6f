#include "passes/autodiff/reverse_outer_loops.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/memory_footprint.h"

namespace pb::passes {

using namespace ir;

namespace {

struct Reverser {
  explicit Reverser(const Kernel& kernel) : k(kernel) {}
  const Kernel& k;
  std::unordered_set<const Block*> ibs;
  int64_t flipped = 0;
  int64_t reordered = 0;

  void visit(Block& b, int depth) {
    if (ibs.count(&b)) return;
    for (Stmt* s : b.statements()) {
      if (auto* f = dyn_cast<RangeForStmt>(s)) {
        if (depth >= 1) {
          f->reversed = !f->reversed;
          ++flipped;
        }
        visit(*f->body, depth + 1);
      } else if (auto* sf = dyn_cast<StructForStmt>(s)) {
        visit(*sf->body, depth + 1);
      } else if (auto* i = dyn_cast<IfStmt>(s)) {
        visit(*i->true_block, depth);
        if (i->false_block) visit(*i->false_block, depth);
      }
    }
    reorder(b);
  }

  // The statements of `b` at or after the first loop that must run before the reordered loops:
  // every statement of `b` a loop reads (bound, or an outer value used inside its body) with its
  // in-block operands, and every statement between them that touches the memory they touch (a
  // store to a local a hoisted load reads, say), so that each keeps the value it had in the
  // forward order. Where that cannot hold, an error names the statements, never a silently
  // different value: a loop before a hoisted statement touching a local it touches, or a
  // hoisted read of global memory that something after it writes (the reverse kernel starts
  // from the values the forward kernel left).
  std::unordered_set<const Stmt*> hoisted_after_first_loop(const Block& b, const std::vector<Stmt*>& all,
                                                           size_t first) {
    using Scope = MemoryFootprint::Scope;
    std::unordered_set<const Stmt*> needed;
    std::vector<const Stmt*> work;
    auto need_operands_of = [&](const Stmt& s) {
      for (const Stmt* op : s.operands())
        if (op && op->parent() == &b && !is_counted_loop(op) && needed.insert(op).second) work.push_back(op);
    };
    auto close = [&](const Stmt& root) {
      work.push_back(&root);
      while (!work.empty()) {
        const Stmt* s = work.back();
        work.pop_back();
        need_operands_of(*s);
        if (s->is_container())
          for (const Block* child : s->blocks())
            if (child) walk(*child, [&](Stmt& inner) { need_operands_of(inner); });
      }
    };
    for (size_t i = first; i < all.size(); ++i)
      if (is_counted_loop(all[i])) close(*all[i]);

    // Footprints of what lies after the statement being looked at: of the needed statements
    // (locals and globals apart), and of everything (globals), the last built only as far as a
    // needed global read asks for it (loop bodies can hold nearly the whole kernel).
    MemoryFootprint needed_locals(Scope::locals), needed_globals(Scope::globals), later_globals(Scope::globals);
    bool any_needed_local = false;
    size_t later_from = all.size();  // later_globals covers all[later_from..]
    for (size_t i = all.size(); i-- > first;) {
      const Stmt* s = all[i];
      if (is_counted_loop(s)) {
        if (any_needed_local) {
          MemoryFootprint locals(Scope::locals);
          locals.add_tree(*s);
          if (locals.conflicts(needed_locals)) reject_order(all, i, Scope::locals);
        }
        continue;
      }
      MemoryFootprint locals(Scope::locals), globals(Scope::globals);
      locals.add_tree(*s);
      globals.add_tree(*s);
      if (!needed.count(s) && (locals.conflicts(needed_locals) || globals.conflicts(needed_globals))) {
        needed.insert(s);
        close(*s);
      }
      if (!needed.count(s)) continue;
      if (globals.reads_anything()) {
        for (; later_from > i + 1; --later_from) later_globals.add_tree(*all[later_from - 1]);
        if (globals.reads_what_is_written_by(later_globals)) reject_read_then_written(all, i);
      }
      needed_locals.add_tree(*s);
      needed_globals.add_tree(*s);
      any_needed_local = any_needed_local || locals.touches_anything();
    }
    return needed;
  }

  [[noreturn]] void reject_order(const std::vector<Stmt*>& all, size_t loop_at, MemoryFootprint::Scope scope) {
    MemoryFootprint loop(scope);
    loop.add_tree(*all[loop_at]);
    for (size_t j = loop_at + 1; j < all.size(); ++j) {
      MemoryFootprint f(scope);
      f.add_tree(*all[j]);
      if (is_counted_loop(all[j]) || !f.conflicts(loop)) continue;
      throw UserError(
          fmt::format("cannot run these sibling loops in reverse order: `{}` must run before every loop of its block "
                      "(a later loop reads it), but it touches {}, which the earlier loop `{}` also touches, so "
                      "its value would change",
                      print_stmt(*all[j], k), f.shared_location(loop, k), print_stmt(*all[loop_at], k)),
          "compute the value the later loop reads before the first sibling loop");
    }
    PB_ASSERT(false, "a loop conflicts with one of the statements hoisted past it");
  }

  [[noreturn]] void reject_read_then_written(const std::vector<Stmt*>& all, size_t read_at) {
    MemoryFootprint read(MemoryFootprint::Scope::globals);
    read.add_tree(*all[read_at]);
    for (size_t j = read_at + 1; j < all.size(); ++j) {
      MemoryFootprint later(MemoryFootprint::Scope::globals);
      later.add_tree(*all[j]);
      if (!read.reads_what_is_written_by(later)) continue;
      throw UserError(
          fmt::format("`{}` reads {} to drive sibling loops (a bound, or a value a loop reads), but `{}` writes it "
                      "later in the forward kernel; the reverse kernel starts from the values the forward kernel "
                      "left and would read the later value",
                      print_stmt(*all[read_at], k), read.shared_location(later, k), print_stmt(*all[j], k)),
          "do not write that data after reading it for a loop in the same kernel: write to another field, or "
          "split the kernel");
    }
    PB_ASSERT(false, "a hoisted read conflicts with a later write");
  }

  void reorder(Block& b) {
    std::vector<Stmt*> all = b.statements();
    auto first_it = std::find_if(all.begin(), all.end(), [](const Stmt* s) { return is_counted_loop(s); });
    if (first_it == all.end() ||
        std::count_if(first_it, all.end(), [](const Stmt* s) { return is_counted_loop(s); }) < 2)
      return;
    auto first = static_cast<size_t>(first_it - all.begin());
    std::unordered_set<const Stmt*> needed = hoisted_after_first_loop(b, all, first);
    std::vector<Stmt*> order(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(first));
    std::vector<Stmt*> rest;
    for (size_t i = first; i < all.size(); ++i) (needed.count(all[i]) ? order : rest).push_back(all[i]);
    std::vector<Stmt*> loops;
    for (Stmt* s : rest)
      if (is_counted_loop(s)) loops.push_back(s);
    std::reverse(loops.begin(), loops.end());
    size_t next_loop = 0;
    for (Stmt* s : rest) order.push_back(is_counted_loop(s) ? loops[next_loop++] : s);
    std::unordered_map<Stmt*, std::unique_ptr<Stmt>> detached;  // re-linked below in the new order
    for (Stmt* s : all) detached.emplace(s, b.detach(s));
    for (Stmt* s : order) b.push_back(std::move(detached.at(s)));
    ++reordered;
  }
};

}  // namespace

PassInfo ReverseOuterLoopsPass::info() {
  return declare_pass<ReverseOuterLoopsPass>(
      {.name = "reverse_outer_loops",
       .summary =
           "Outside independent blocks: flip nested loops to run backwards and reorder sibling loops last-to-first",
       .options = {},
       .statistics = {"loops_flipped", "blocks_reordered"},
       .create = {}});
}

PassResult ReverseOuterLoopsPass::run(Kernel& k, const PassOptions&) {
  Reverser r(k);
  for (Block* b : find_independent_blocks(k)) r.ibs.insert(b);
  r.visit(k.root(), 0);
  return {r.flipped + r.reordered > 0, {{"loops_flipped", r.flipped}, {"blocks_reordered", r.reordered}}};
}

}  // namespace pb::passes
