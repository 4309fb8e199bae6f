// The device's own copy rate, the reference for the bandwidth the benchmark's kernels reach:
// vkCmdCopyBuffer between two device-local buffers, timed with timestamp queries, with the source
// holding pseudo-random words or zeros (NVIDIA compresses constant data, which flatters zeros).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/vulkan/device.h"

namespace pb::bench {

struct CopyRate {
  double ms = 0;           // one copy, the median over `repeat`
  double bytes_per_s = 0;  // 2 x bytes (read and written) / time
};

// Records `record` into a fresh one-time command buffer, submits it to the device's queue and
// waits for the queue to be idle; the command buffer is freed on every exit.
void submit_and_wait(runtime::vulkan::Device& dev, const std::function<void(VkCommandBuffer)>& record);

// The milliseconds between timestamps 0 and 1 of `queries` (waits for them).
double timed_ms(runtime::vulkan::Device& dev, VkQueryPool queries);

// Throws UserError without a device or timestamps.
CopyRate vulkan_copy_rate(uint64_t bytes, bool random, int repeat, const std::string& device = "");

}  // namespace pb::bench
