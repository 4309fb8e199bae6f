#include "passes/autodiff/coalesce_stack_loads.h"

#include <vector>

#include "ir/numbering.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

// The latest valid `load top` / `load top adj` of each stack in the block being scanned. Stacks
// get dense numbers (Stmt::position) when the walk meets their alloc, which dominates every
// access; an entry counts only if its epoch is current, so forgetting everything (entering or
// leaving a container) is one increment.
class Coalescer {
 public:
  int64_t removed = 0;

  void block(Block& b) {
    ++epoch_;
    for (Stmt* s = b.empty() ? nullptr : b.front(); s;) {
      Stmt* next = s->next();
      visit(b, s);
      s = next;
    }
  }

 private:
  struct Slot {
    uint64_t top_epoch = 0, adj_epoch = 0;
    Stmt* top = nullptr;
    Stmt* adj = nullptr;
  };

  void visit(Block& b, Stmt* s) {
    if (auto* alloc = dyn_cast<AdStackAllocaStmt>(s)) {
      stacks_.add(*alloc);
      slots_.emplace_back();
      return;
    }
    if (s->is_container()) {
      for (Block* child : s->blocks())
        if (child) block(*child);
      ++epoch_;
      return;
    }
    bool top = isa<AdStackLoadTopStmt>(s), adj = isa<AdStackLoadTopAdjStmt>(s);
    bool write = isa<AdStackPushStmt>(s) || isa<AdStackPopStmt>(s), acc = isa<AdStackAccAdjointStmt>(s);
    if (!top && !adj && !write && !acc) return;
    Slot& slot = slots_.at(stacks_[*s->operand(0)]);
    if (top || adj) {
      uint64_t& e = top ? slot.top_epoch : slot.adj_epoch;
      Stmt*& seen = top ? slot.top : slot.adj;
      if (e == epoch_) {
        s->replace_all_uses_with(seen);
        b.erase(s);
        ++removed;
      } else {
        e = epoch_;
        seen = s;
      }
      return;
    }
    slot.adj_epoch = 0;             // push, pop and acc adj change the top's adjoint
    if (write) slot.top_epoch = 0;  // push and pop change the top
  }

  Numbering stacks_;  // the stack allocs seen, numbered as their slots
  std::vector<Slot> slots_;
  uint64_t epoch_ = 0;
};

}  // namespace

int64_t coalesce_stack_loads(Kernel& k) {
  Coalescer c;
  c.block(k.root());
  return c.removed;
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
