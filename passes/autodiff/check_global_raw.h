// check_global_raw: rejects cross-iteration read-after-write on differentiable fields.
//
// In each top-level range-for or struct-for body (the reference checks range fors only), a differentiable field stored
// at one index and loaded at another index of the same loop (out[i] = out[i-1] + x) makes the reverse pass read values
// the forward pass already overwrote: a silently wrong gradient. Loads and stores inside nested loops are not compared.
// Per axis: both index expressions depend on the loop index -> they must be the same statement; exactly one depends on
// it -> conflict; neither -> fine. A conflict is a UserError naming both statements. Changes nothing.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

class CheckGlobalRawPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
