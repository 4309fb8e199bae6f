// Random kernels for differential testing and fuzzing: a stream of choices becomes a kernel that
// verifies, plus inputs it can run on. The kernels are shaped like differentiable simulation code:
// a parallel loop over small fields, nested loops with trip counts from fields, ifs, locals
// carried across iterations, float and integer arithmetic, global and ndarray loads, stores and
// atomics. Every stream decodes; the libFuzzer targets feed fuzzer bytes (tests/fuzz), `passbench
// difftest --seeds` a seeded generator.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "ir/kernel.h"

namespace pb::workbench {

// Where the decoder's choices come from. A source past its end (exhausted) still answers; the
// decoder stops opening statements once it is.
class KernelChoices {
 public:
  virtual ~KernelChoices() = default;
  virtual int64_t in_range(int64_t lo, int64_t hi) = 0;  // lo <= result <= hi
  virtual bool flag() = 0;
  virtual double real() = 0;  // an unusual float constant
  virtual bool exhausted() = 0;
};

struct DecodedKernel {
  std::unique_ptr<ir::Kernel> kernel;
  nlohmann::json inputs;  // the inputs JSON for runtime::make_state
};

struct DecodeOptions {
  // No two iterations of a parallel loop touch one element of y (read or written only at the
  // loop's own index), and s is written only by atomics. The old value an atomic returns still
  // depends on the order; difftest finds such results by running the iterations shuffled.
  bool race_free = false;
};

// Always returns a kernel; ir::verify accepts it. The same choices give the same kernel.
DecodedKernel decode_kernel(KernelChoices& choices, const DecodeOptions& options = {});

// The race-free kernel of `seed`: decode_kernel over choices from std::mt19937_64(seed). The same
// seed gives the same kernel and inputs on every machine.
DecodedKernel generate_kernel(uint64_t seed);

}  // namespace pb::workbench
