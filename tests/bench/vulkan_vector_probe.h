// What Vulkan compute reaches on y[i] = x[i] * 1.5 - 0.3 when written by hand, the reference for
// the generated elementwise kernel's bandwidth (docs/performance.md): the same arithmetic as
// hand-written SPIR-V over `width`-wide vectors (1: float, 4: vec4), each invocation taking
// `unroll` elements per step of its grid-stride loop (the loads first), timed with timestamps on
// pseudo-random data. Before each timed dispatch a 256 MB fill evicts the freshly uploaded x from
// the L2 cache, so the kernel moves its bytes through device memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pb::bench {

struct ProbeRate {
  double ms = 0;           // one dispatch, the median over `repeat`
  double bytes_per_s = 0;  // 2 x 4 x elements (read and written) / time
  uint32_t workgroups = 0;
};

// `elements` floats (a multiple of width x unroll). `workgroups` 0: enough for one step per
// invocation, at most 65,535. `fresh`: x and y are allocated anew before each timed run (a launch
// that allocates its buffers does so). Throws UserError without a device or timestamps.
ProbeRate vulkan_vector_probe(uint64_t elements, uint32_t width, uint32_t unroll, uint32_t workgroups, int repeat,
                              bool fresh = false);

// Times any module of the same interface (x at binding 0, y at binding 1, no push constants,
// y = x * 1.5 - 0.3 over `elements` floats) with `groups` workgroups: a generated kernel in this
// harness. `pattern`: x holds the benchmark's i % 13 pattern and y zeros, instead of random data.
ProbeRate vulkan_module_probe(const std::vector<uint32_t>& words, const std::string& entry, uint64_t elements,
                              uint32_t groups, int repeat, bool fresh, bool pattern);

}  // namespace pb::bench
