// coalesce_stack_loads: merges repeated reads of a stack's top within straight-line code.
//
// In each block, a `stack load top S` with an earlier `stack load top S` in the same block and no
// push or pop of S between them (and no container statement between them: its body might push)
// is replaced by the earlier read; likewise `stack load top adj S`, which is also invalidated by a
// `stack acc adj S`. Pre: verified. Post: verified; behaviour unchanged.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

int64_t coalesce_stack_loads(ir::Kernel& k);  // returns the number of reads removed

class CoalesceStackLoadsPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
