// eliminate_recomputable_pushes: drops stacks whose one value per iteration the reverse code can
// compute again instead of remembering.
//
// A stack is dropped when: it has exactly one push besides the bootstrap push (the first push
// after the alloc in the alloc's block, identified by position, never by value); nothing pops,
// accumulates into or reads the adjoint of it; every load of it comes after that push in the
// push's block (possibly nested in later statements); and the pushed value is a pure expression
// whose leaves are constants, arguments, loop indices, or global loads of fields the kernel never
// writes (so re-reading them in reverse sees the same values). Its loads then read the pushed
// value directly; backup_ssa recomputes it where the reverse code needs it (a loop index maps to
// the index of the reversed clone of its loop). Repeats until nothing changes.
// Pre: verified, after replace_locals_with_stacks. Post: verified; behaviour unchanged.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

int64_t eliminate_recomputable_pushes(ir::Kernel& k);  // returns the number of stacks dropped

class EliminateRecomputablePushesPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
