// What the fuzz targets share: a finding aborts with a message (libFuzzer then saves the input
// and prints the reproducer), the round-trip and pipeline checks, per-target counters printed at
// exit when PASSBENCH_FUZZ_STATS is set (docs/fuzzing.md uses them for the reach figures), and the
// limits that keep one execution cheap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ir/kernel.h"

namespace pb::fuzz {

// Prints "passbench fuzz finding: WHAT" and DETAIL, then aborts.
[[noreturn]] void finding(std::string_view what, std::string_view detail);

// Adds one to the counter NAME (printed at exit, with its share of executions).
void count(const char* name);
// Counts one execution of the target; call first in LLVMFuzzerTestOneInput.
void count_execution();

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// A verified kernel printed, parsed back, verified and printed again gives the same text, and its
// JSON reads back to a kernel that prints the same text and writes the same JSON.
void check_round_trip(const ir::Kernel& k);

// Runs `pipeline` on `k` in place with the verifier after every pass. Returns true when every pass
// ran, false when a pass rejected the kernel with a user error; a broken invariant, an unexpected
// exception or IR the verifier rejects is a finding.
bool run_passes(ir::Kernel& k, const std::string& pipeline);

// Elements the fields with a known shape would get together (saturating), for skipping kernels
// whose buffers would exceed the fuzzer's memory limit although the interpreter accepts them.
int64_t field_elements(const ir::Kernel& k);
inline constexpr int64_t kMaxFuzzElements = int64_t{1} << 20;

}  // namespace pb::fuzz
