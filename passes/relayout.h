// relayout: moves statements in memory into pre-order (ir/relayout.h); the IR does not change.
// Pre: any kernel. Post: the same kernel, statements of a size class adjacent in pre-order, so
// later passes stream through memory. Never reports a change (nothing observable moved).
#pragma once

#include "passes/pass.h"

namespace pb::passes {

class RelayoutPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
