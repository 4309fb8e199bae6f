// reverse_outer_loops: outside the independent blocks, iterate loops and sibling loops backwards.
//
// The reverse pass runs the reverse code of each independent block (IB) in the opposite order of
// the forward execution. Walking from the root and entering only non-IB loop bodies (and ifs):
// every range-for at loop depth >= 1 gets `reversed` toggled (top-level loops are the parallel
// dimension and are never flipped, nor are struct fors). In each non-IB block holding two or more
// sibling loops (the root included), the statements at or after the first loop that the loops
// use (bounds, outer values read inside the bodies, and their in-block operands) are hoisted
// before the first loop, then the loops are reordered last-to-first with the other statements
// kept in their slots (docs/autodiff.md, "Sibling loops keep what they read").
// Pre: verified. Post: verified (hoisting keeps every use dominated).
#pragma once

#include "passes/pass.h"

namespace pb::passes {

class ReverseOuterLoopsPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
