// Target: the reference interpreter within a small step budget, on kernels that verify
// (kernel_decoder.h), optionally after reverse_ad. First byte: bit 0 runs reverse_ad first,
// bit 1 shuffles the parallel loop, bit 2 computes in f64, bit 3 traces decisions, bit 4 also
// runs the kernel offloaded and lowered to the SNode access chain (`offload,lower_access`), which
// must leave the same memory and printed text. Run-time errors (out-of-bounds index, stack
// overflow, step budget) are user errors and fine.
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "runtime/core/state.h"
#include "runtime/interp/interpreter.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/kernel_decoder.h"

using namespace pb;

namespace {

// The kernel moved to the offloaded stage and to the access chain computes what it did: the same
// fields, ndarrays and printed text. It runs more statements (temporaries, chains), so it gets a
// larger step budget; running out of that is not a finding.
void compare_lowered(const ir::Kernel& k, const nlohmann::json& inputs, runtime::RunOptions options,
                     const runtime::State& before, const runtime::RunResult& before_result) {
  auto lowered = k.clone();
  if (!fuzz::run_passes(*lowered, "offload,lower_access")) {
    fuzz::count("offload,lower_access rejected the kernel");
    return;
  }
  runtime::State state = runtime::make_state(*lowered, inputs);
  options.max_steps *= 16;
  runtime::RunResult result;
  try {
    result = runtime::run_kernel(*lowered, state, options);
  } catch (const UserError& e) {
    if (std::string(e.what()).find("step budget") != std::string::npos) {
      fuzz::count("offloaded run over its step budget");
      return;
    }
    fuzz::finding("the offloaded, lowered kernel fails where the kernel ran",
                  std::string(e.what()) + "\n--- kernel:\n" + ir::print_kernel(k) + "--- lowered:\n" +
                      ir::print_kernel(*lowered));
  }
  auto want = runtime::state_to_json(k, before), got = runtime::state_to_json(*lowered, state);
  if (want != got || result.printed != before_result.printed)
    fuzz::finding("the offloaded, lowered kernel computes something else",
                  "before: " + want.dump() + "\nafter: " + got.dump() + "\n--- kernel:\n" + ir::print_kernel(k) +
                      "--- lowered:\n" + ir::print_kernel(*lowered));
  fuzz::count("offloaded and lowered: same memory and text");
}

}  // namespace

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
  runtime::RunResult result;
  bool ran = false;
  try {
    result = runtime::run_kernel(*fk.kernel, state, options);
    ran = true;
    fuzz::count("ran to the end");
  } catch (const UserError&) {
    fuzz::count("run-time error (user error)");
  }
  (void)runtime::state_to_json(*fk.kernel, state).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (ran && (flags & 16)) compare_lowered(*fk.kernel, fk.inputs, options, state, result);
  return 0;
}
