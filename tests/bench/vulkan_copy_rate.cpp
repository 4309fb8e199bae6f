#include "vulkan_copy_rate.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ir/diagnostic.h"
#include "runtime/vulkan/device.h"

namespace pb::bench {

using runtime::vulkan::check;
using runtime::vulkan::Device;

void submit_and_wait(Device& dev, const std::function<void(VkCommandBuffer)>& record) {
  VkDevice h = dev.handle();
  VkCommandBufferAllocateInfo cbai{};
  cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cbai.commandPool = dev.command_pool();
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(h, &cbai, &cb), "vkAllocateCommandBuffers");
  struct Free {
    Device& dev;
    VkCommandBuffer cb;
    ~Free() {
      vkQueueWaitIdle(dev.queue());
      vkFreeCommandBuffers(dev.handle(), dev.command_pool(), 1, &cb);
    }
  } free_on_exit{dev, cb};
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
  record(cb);
  check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  check(vkQueueSubmit(dev.queue(), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
  check(vkQueueWaitIdle(dev.queue()), "vkQueueWaitIdle");
}

double timed_ms(Device& dev, VkQueryPool queries) {
  uint64_t ticks[2] = {0, 0};
  check(vkGetQueryPoolResults(dev.handle(), queries, 0, 2, sizeof ticks, ticks, 8,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return static_cast<double>(ticks[1] - ticks[0]) * dev.info().timestamp_period_ns * 1e-6;
}

CopyRate vulkan_copy_rate(uint64_t bytes, bool random, int repeat, const std::string& device_name) {
  Device dev(device_name);
  if (!dev.info().timestamps) throw UserError("the device writes no timestamps: no copy rate");
  VkDevice h = dev.handle();
  Device::Allocation staging = dev.allocate(bytes, true);
  Device::Allocation src = dev.allocate(bytes, false);
  Device::Allocation dst = dev.allocate(bytes, false);
  auto* words = static_cast<uint32_t*>(staging.mapped);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint64_t i = 0; i < bytes / 4; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    words[i] = random ? static_cast<uint32_t>(state >> 16) : 0u;
  }
  VkQueryPoolCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 2;
  VkQueryPool queries = VK_NULL_HANDLE;
  check(vkCreateQueryPool(h, &qci, nullptr, &queries), "vkCreateQueryPool");
  std::vector<double> times;
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    submit_and_wait(dev, [&](VkCommandBuffer cb) {
      vkCmdResetQueryPool(cb, queries, 0, 2);
      VkBufferCopy whole{0, 0, bytes};
      vkCmdCopyBuffer(cb, staging.buffer, src.buffer, 1, &whole);
      VkMemoryBarrier mb{};
      mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0,
                           nullptr);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
      vkCmdCopyBuffer(cb, src.buffer, dst.buffer, 1, &whole);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
    });
    times.push_back(timed_ms(dev, queries));
  }
  vkDestroyQueryPool(h, queries, nullptr);
  dev.release(staging);
  dev.release(src);
  dev.release(dst);
  std::sort(times.begin(), times.end());
  CopyRate out;
  out.ms = times[times.size() / 2];
  out.bytes_per_s = out.ms > 0 ? 2.0 * static_cast<double>(bytes) / (out.ms * 1e-3) : 0;
  return out;
}

}  // namespace pb::bench
