// Target: the reference interpreter within a small step budget, on kernels that verify
// (kernel_decoder.h), optionally after reverse_ad. First byte: bit 0 runs reverse_ad first,
// bit 1 shuffles the parallel loop, bit 2 computes in f64, bit 3 traces decisions. Run-time
// errors (out-of-bounds index, stack overflow, step budget) are user errors and fine.
#include "ir/diagnostic.h"
#include "runtime/interp/interpreter.h"
#include "runtime/interp/state.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/kernel_decoder.h"

using namespace pb;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  uint8_t flags = size ? data[0] : 0;
  fuzz::FuzzKernel fk = fuzz::kernel_from_bytes(data, size);
  fuzz::count(fk.decoded ? "kernel decoded from bytes" : "kernel parsed from text");
  if (fuzz::field_elements(*fk.kernel) > fuzz::kMaxFuzzElements) {
    fuzz::count("skipped: fields over the fuzz memory cap");
    return 0;
  }
  if ((flags & 1) && !fuzz::run_passes(*fk.kernel, "reverse_ad")) {
    fuzz::count("reverse_ad rejected the kernel");
    return 0;
  }
  runtime::State state;
  try {
    state = runtime::make_state(*fk.kernel, fk.inputs);
  } catch (const UserError&) {
    fuzz::count("inputs rejected");
    return 0;
  }
  runtime::RunOptions options;
  options.max_steps = 20'000;
  options.shuffle = flags & 2;
  options.seed = size;
  options.f64 = flags & 4;
  options.trace_decisions = flags & 8;
  fuzz::count("reached the interpreter");
  try {
    runtime::run_kernel(*fk.kernel, state, options);
    fuzz::count("ran to the end");
  } catch (const UserError&) {
    fuzz::count("run-time error (user error)");
  }
  (void)runtime::state_to_json(*fk.kernel, state).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
