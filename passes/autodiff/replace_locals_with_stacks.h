// replace_locals_with_stacks{ad_stack_size=0}: backs each local variable whose per-iteration
// values the reverse code reads with an autodiff stack.
//
// In each independent block (IB), an alloca is judged stack-needed when it is written at least
// once and one of its loads inside a loop within the IB is an operand the reverse code reads
// (ad::required_operand_slots). Such an alloca becomes `stack alloc (max_size=N)` followed by a
// bootstrap `stack push` of zero (a stack has no implicit value); its loads become
// `stack load top`, its stores `stack push`, and an atomic on it a load top, the op and a push.
// N = ad_stack_size; 0 means adaptive (determine_ad_stack_size computes it after make_adjoint).
// Other allocas stay: their reverse is linear and needs no history.
// Pre: verified, after promote_ssa_to_local. Post: verified; behaviour unchanged.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct ReplaceLocalsResult {
  int64_t stacks = 0;
  int64_t pushes = 0;
  int64_t loads = 0;
};

ReplaceLocalsResult replace_locals_with_stacks(ir::Kernel& k, int64_t ad_stack_size);

class ReplaceLocalsWithStacksPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
