// check_global_raw: rejects cross-iteration read-after-write on differentiable fields and ndarrays.
//
// In each top-level range-for or struct-for body (the reference checks range fors only), a differentiable field stored
// at one index and loaded at another index of the same loop (out[i] = out[i-1] + x) makes the reverse pass read values
// the forward pass already overwrote: a silently wrong gradient. Loads and stores inside nested loops are not compared.
// Ndarray arguments are checked like fields. A pair is fine when, on some axis, the ranges of values the two index
// expressions can take are disjoint (constants, loop indices over constant ranges, plus or minus constants): then
// no element is both read and written. Otherwise, per axis: both index expressions depend on the loop index -> they
// must be the same statement; exactly one depends on it -> conflict; neither -> fine. A conflict is a UserError
// naming both statements. Then the write-after-read rule of passes/autodiff/write_after_read.h.
// Changes nothing.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

class CheckGlobalRawPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
