#include "passes/relayout.h"

#include "ir/relayout.h"

namespace pb::passes {

PassInfo RelayoutPass::info() {
  return declare_pass<RelayoutPass>(
      {.name = "relayout",
       .summary = "Moves statements in memory into pre-order so later passes walk memory in order (IR unchanged)",
       .options = {},
       .statistics = {"moved"},
       .create = {},
       // It changes no IR, so it keeps whatever held before, which may be make_adjoint's output
       // (dominance not yet restored by backup_ssa) when a pipeline runs it there.
       .may_break_dominance = true});
}

PassResult RelayoutPass::run(ir::Kernel& k, const PassOptions&) {
  return {false, {{"moved", static_cast<int64_t>(ir::relayout(k))}}};
}

}  // namespace pb::passes
