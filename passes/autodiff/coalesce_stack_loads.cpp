#include "passes/autodiff/coalesce_stack_loads.h"

#include <unordered_map>

#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

void coalesce_block(Block& b, int64_t& removed) {
  std::unordered_map<const Stmt*, Stmt*> top, top_adj;  // stack -> latest valid read in this block
  for (Stmt* s : b.statements()) {
    if (s->is_container()) {
      for (Block* child : s->blocks())
        if (child) coalesce_block(*child, removed);
      top.clear();
      top_adj.clear();
      continue;
    }
    auto reuse = [&](std::unordered_map<const Stmt*, Stmt*>& cache) {
      auto [it, fresh] = cache.emplace(s->operand(0), s);
      if (fresh) return;
      s->replace_all_uses_with(it->second);
      b.erase(s);
      ++removed;
    };
    if (isa<AdStackLoadTopStmt>(s)) {
      reuse(top);
    } else if (isa<AdStackLoadTopAdjStmt>(s)) {
      reuse(top_adj);
    } else if (isa<AdStackPushStmt>(s) || isa<AdStackPopStmt>(s)) {
      top.erase(s->operand(0));
      top_adj.erase(s->operand(0));
    } else if (isa<AdStackAccAdjointStmt>(s)) {
      top_adj.erase(s->operand(0));
    }
  }
}

}  // namespace

int64_t coalesce_stack_loads(Kernel& k) {
  int64_t removed = 0;
  coalesce_block(k.root(), removed);
  return removed;
}

PassInfo CoalesceStackLoadsPass::info() {
  return declare_pass<CoalesceStackLoadsPass>(
      {.name = "coalesce_stack_loads",
       .summary = "Merges repeated stack top reads with no push or pop between them",
       .options = {},
       .statistics = {"loads_removed"},
       .create = {}});
}

PassResult CoalesceStackLoadsPass::run(Kernel& k, const PassOptions&) {
  int64_t n = coalesce_stack_loads(k);
  return {n > 0, {{"loads_removed", n}}};
}

}  // namespace pb::passes
