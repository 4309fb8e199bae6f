// What Vulkan compute reaches on y[i] = x[i] * 1.5 - 0.3 when written by hand, the reference for
// the generated elementwise kernel's bandwidth (docs/performance.md): the same arithmetic as
// hand-written SPIR-V over `width`-wide vectors (1: float, 4: vec4), each invocation taking
// `unroll` elements per step of its grid-stride loop (the loads first), timed with timestamps on
// pseudo-random data.
#pragma once

#include <cstdint>
#include <string>

namespace pb::bench {

struct ProbeRate {
  double ms = 0;           // one dispatch, the median over `repeat`
  double bytes_per_s = 0;  // 2 x 4 x elements (read and written) / time
  uint32_t workgroups = 0;
};

// `elements` floats (a multiple of width x unroll). `workgroups` 0: enough for one step per
// invocation, at most 65,535. Throws UserError without a device or timestamps.
ProbeRate vulkan_vector_probe(uint64_t elements, uint32_t width, uint32_t unroll, uint32_t workgroups, int repeat);

}  // namespace pb::bench
