// Target: pass pipelines on kernels that verify (kernel_decoder.h: a text kernel that verifies, else
// the bytes decoded into one). The first byte picks the pipeline; the verifier runs after every
// pass, and the output must verify and round-trip through text and JSON. A pass rejecting the
// kernel with a user error (a documented unsupported construct) is fine.
#include <array>
#include <string>

#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/kernel_decoder.h"

using namespace pb;

namespace {
const std::array<std::string, 8> kPipelines = {"simplify,dce",
                                               "reverse_ad",
                                               "reverse_ad{use_stack=false}",
                                               "cleanup,reverse_ad",
                                               "reverse_ad,cleanup",
                                               "reverse_ad{ad_stack_size=16}",
                                               "offload,lower_access,demote_atomics,cleanup",
                                               "reverse_ad,offload,lower_access"};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  fuzz::FuzzKernel fk = fuzz::kernel_from_bytes(data, size);
  fuzz::count(fk.decoded ? "kernel decoded from bytes" : "kernel parsed from text");
  const std::string& pipeline = kPipelines[size ? data[0] % kPipelines.size() : 0];
  fuzz::count("reached the passes");
  if (!fuzz::run_passes(*fk.kernel, pipeline)) {
    fuzz::count("a pass rejected the kernel (user error)");
    return 0;
  }
  fuzz::count("every pass ran (output checked)");
  fuzz::check_round_trip(*fk.kernel);
  return 0;
}
