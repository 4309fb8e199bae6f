// backup_ssa: makes every operand the reverse code uses dominate its use.
//
// After make_adjoint, reverse code refers to forward values that may live in a forward loop body
// or if branch that does not enclose it. For each such operand (if conditions and loop bounds
// included), within each independent block:
// - a recomputable value (constants, argloads, arithmetic, pointers, loads of fields the block
//   never writes, `stack load top`, and loop indices, which map to the index of the enclosing
//   reversed clone of their loop) is cloned, with its own non-dominating operands, right before
//   the use. A cloned stack read sees the forward value because the reverse code pops exactly
//   what the forward code pushed after the read (make_adjoint snapshots reads for which that
//   does not hold);
// - any other value (a local load, an atomic's result) is spilled: one alloca at the block's top,
//   a store right after the definition, a load before the use. A spill holds one value, so it is
//   only correct when the definition runs once per execution of the block: a definition inside a
//   loop of the block is a UserError (that value needs an autodiff stack).
// Pre: the output of make_adjoint. Post: verified.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct BackupSsaResult {
  int64_t cloned = 0;
  int64_t spilled = 0;
};

BackupSsaResult backup_ssa(ir::Kernel& k);

class BackupSsaPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
