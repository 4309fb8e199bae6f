#include "passes/autodiff/reverse_outer_loops.h"

#include <algorithm>
#include <unordered_set>

#include "ir/visitor.h"
#include "passes/autodiff/independent_blocks.h"

namespace pb::passes {

using namespace ir;

namespace {

bool is_loop(const Stmt* s) { return isa<RangeForStmt>(s) || isa<StructForStmt>(s); }

struct Reverser {
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

  // Statements of `b` that the loops use, transitively through in-block operands.
  static void close_over(const Stmt* s, const Block& b, std::unordered_set<const Stmt*>& out) {
    for (const Stmt* op : s->operands()) {
      if (!op || op->parent() != &b || is_loop(op) || out.count(op)) continue;
      out.insert(op);
      close_over(op, b, out);
    }
  }

  void reorder(Block& b) {
    std::vector<Stmt*> all = b.statements();
    auto first = std::find_if(all.begin(), all.end(), is_loop);
    if (first == all.end() || std::count_if(first, all.end(), is_loop) < 2) return;
    std::unordered_set<const Stmt*> needed;
    for (auto it = first; it != all.end(); ++it) {
      if (!is_loop(*it)) continue;
      close_over(*it, b, needed);
      walk(*(*it)->blocks()[0], [&](Stmt& inner) {
        for (const Stmt* op : inner.operands())
          if (op && op->parent() == &b && !is_loop(op) && !needed.count(op)) {
            needed.insert(op);
            close_over(op, b, needed);
          }
      });
    }
    std::vector<Stmt*> order(all.begin(), first);
    std::vector<Stmt*> rest;
    for (auto it = first; it != all.end(); ++it) (needed.count(*it) ? order : rest).push_back(*it);
    std::vector<Stmt*> loops;
    for (Stmt* s : rest)
      if (is_loop(s)) loops.push_back(s);
    std::reverse(loops.begin(), loops.end());
    size_t next_loop = 0;
    for (Stmt* s : rest) order.push_back(is_loop(s) ? loops[next_loop++] : s);
    for (Stmt* s : all) (void)b.detach(s).release();  // re-linked below in the new order
    for (Stmt* s : order) b.push_back(std::unique_ptr<Stmt>(s));
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
  Reverser r;
  for (Block* b : find_independent_blocks(k)) r.ibs.insert(b);
  r.visit(k.root(), 0);
  return {r.flipped + r.reordered > 0, {{"loops_flipped", r.flipped}, {"blocks_reordered", r.reordered}}};
}

}  // namespace pb::passes
