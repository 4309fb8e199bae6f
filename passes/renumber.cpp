#include "passes/renumber.h"

#include "ir/visitor.h"

namespace pb::passes {

PassInfo RenumberPass::info() {
  return declare_pass<RenumberPass>({.name = "renumber",
                                     .summary = "Numbers statements densely in pre-order ($0, $1, ...)",
                                     .options = {},
                                     .statistics = {"moved"},
                                     .create = {},
                                     .takes_tensors = true});
}

PassResult RenumberPass::run(ir::Kernel& k, const PassOptions&) {
  int64_t moved = 0;
  int next = 0;
  ir::walk(k.root(), [&](ir::Stmt& s) { moved += s.id != next++; });
  k.renumber(0);
  return {moved > 0, {{"moved", moved}}};
}

}  // namespace pb::passes
