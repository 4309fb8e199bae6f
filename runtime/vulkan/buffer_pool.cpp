#include "runtime/vulkan/buffer_pool.h"

namespace pb::runtime::vulkan {

BufferPool::~BufferPool() {
  for (auto& [key, a] : free_) device_.release(a);
}

Device::Allocation BufferPool::take(uint64_t bytes, bool host_visible) {
  auto it = free_.lower_bound({host_visible, bytes});
  if (it != free_.end() && it->first.first == host_visible && it->first.second / 2 <= bytes) {
    Device::Allocation a = it->second;
    pooled_[host_visible ? 1 : 0] -= a.bytes;
    stats_.pooled_bytes -= a.bytes;
    free_.erase(it);
    ++stats_.reused;
    return a;
  }
  ++stats_.allocated;
  return device_.allocate(bytes, host_visible);
}

void BufferPool::give(Device::Allocation& a, bool host_visible) {
  if (!a.buffer) return;
  uint64_t& pooled = pooled_[host_visible ? 1 : 0];
  if (pooled + a.bytes > kMaxPooledBytes) {
    device_.release(a);
    return;
  }
  pooled += a.bytes;
  stats_.pooled_bytes += a.bytes;
  free_.emplace(std::make_pair(host_visible, static_cast<uint64_t>(a.bytes)), a);
  a = Device::Allocation{};
}

}  // namespace pb::runtime::vulkan
