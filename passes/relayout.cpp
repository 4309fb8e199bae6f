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
       // It changes no IR, so it keeps whatever held before: after make_adjoint, in `reverse_ad`,
       // that is IR whose dominance backup_ssa has yet to restore.
       .may_break_dominance = true});
}

PassResult RelayoutPass::run(ir::Kernel& k, const PassOptions&) {
  return {false, {{"moved", static_cast<int64_t>(ir::relayout(k))}}};
}

}  // namespace pb::passes
