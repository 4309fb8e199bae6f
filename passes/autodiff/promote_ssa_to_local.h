// promote_ssa_to_local: gives every forward value the reverse code will need from each loop
// iteration a local variable of its own, so replace_locals_with_stacks can back it with a stack.
//
// Per independent block (IB):
// - an alloca nested in a loop or if is hoisted to the IB's top and replaced in place by a store
//   of zero, so the stack that may replace it outlives loop iterations and is visible to the
//   reverse code, which lives outside the forward loops and branches;
// For statements inside a loop within the IB (those outside every loop run once per IB
// execution and stay SSA values):
// - an operand the reverse code reads (ad::required_operand_slots) that is a unary, binary or
//   ternary op, a global load or a loop index defined inside such a loop becomes
//   `def; local store [A <- def]; A' = local load [A]` with A a new alloca at the IB's top, and
//   every other use of `def` reads A'.
// Local loads are left alone: their variable itself becomes a stack.
// Pre: verified, after reverse_outer_loops. Post: verified; behaviour unchanged.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct PromoteResult {
  int64_t values_promoted = 0;
  int64_t allocas_hoisted = 0;
};

PromoteResult promote_ssa_to_local(ir::Kernel& k);

class PromoteSsaToLocalPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
