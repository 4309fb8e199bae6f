// The device's own copy rate, the reference for the bandwidth the benchmark's kernels reach:
// vkCmdCopyBuffer between two device-local buffers, timed with timestamp queries, with the source
// holding pseudo-random words or zeros (NVIDIA compresses constant data, which flatters zeros).
#pragma once

#include <cstdint>
#include <string>

namespace pb::bench {

struct CopyRate {
  double ms = 0;           // one copy, the median over `repeat`
  double bytes_per_s = 0;  // 2 x bytes (read and written) / time
};

// Throws UserError without a device or timestamps.
CopyRate vulkan_copy_rate(uint64_t bytes, bool random, int repeat, const std::string& device = "");

}  // namespace pb::bench
