// Buffers the Vulkan runtime keeps between launches. A launch takes its field, temps, flags,
// activity and staging buffers here and gives them back once its work has completed (launches
// wait for their fence), so a kernel launched again binds memory the device has already mapped
// and touched instead of fresh allocations (docs/performance.md has what that is worth). A buffer
// is reused for a request of at most its size and at least half of it; the pool keeps at most
// kMaxPooledBytes of each kind (device-local, host-visible) and releases what would exceed it.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "runtime/vulkan/device.h"

namespace pb::runtime::vulkan {

struct PoolStats {
  uint64_t allocated = 0;     // buffers allocated for a request
  uint64_t reused = 0;        // requests served from the pool
  uint64_t pooled_bytes = 0;  // bytes the pool holds now, both kinds
};

class BufferPool {
 public:
  static constexpr uint64_t kMaxPooledBytes = uint64_t{1} << 30;
  explicit BufferPool(Device& device) : device_(device) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `bytes`; throws UserError as Device::allocate does.
  Device::Allocation take(uint64_t bytes, bool host_visible);
  // Back to the pool; no submitted work may use it any more.
  void give(Device::Allocation& a, bool host_visible);
  PoolStats stats() const { return stats_; }

 private:
  Device& device_;
  std::multimap<std::pair<bool, uint64_t>, Device::Allocation> free_;  // by (host visible, bytes)
  uint64_t pooled_[2] = {0, 0};
  PoolStats stats_;
};

}  // namespace pb::runtime::vulkan
