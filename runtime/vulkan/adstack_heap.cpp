#include "runtime/vulkan/adstack_heap.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "ir/diagnostic.h"

namespace pb::runtime::vulkan {

AdStackHeap::~AdStackHeap() {
  vkDeviceWaitIdle(device_.handle());
  for (Retired& r : retired_) device_.release(r.allocation);
  device_.release(current_);
}

Device::Allocation AdStackHeap::allocate(uint64_t bytes) {
  if (limit_ && bytes > limit_) throw std::bad_alloc();
  return device_.allocate(bytes, false);
}

VkBuffer AdStackHeap::acquire(uint64_t bytes, uint64_t serial) {
  if (current_.buffer && current_.bytes >= bytes) {
    current_last_serial_ = serial;
    return current_.buffer;
  }
  uint64_t doubled = std::max<uint64_t>(bytes, 2 * static_cast<uint64_t>(current_.bytes));
  Device::Allocation fresh;
  try {
    fresh = allocate(doubled);
  } catch (const std::bad_alloc&) {
    ++stats_.exact_retries;
    try {
      fresh = allocate(bytes);
    } catch (const std::bad_alloc&) {
      throw UserError(
          fmt::format("Vulkan: the adstack heap needs {} bytes and the device cannot allocate them", bytes),
          "lower the stacks' capacities (max_size, capacity=), the launched invocations, or use storage=function");
    }
  }
  if (current_.buffer) retired_.push_back({current_, current_last_serial_});
  current_ = fresh;
  current_last_serial_ = serial;
  ++stats_.grows;
  stats_.bytes = current_.bytes;
  stats_.peak_bytes = std::max<uint64_t>(stats_.peak_bytes, current_.bytes);
  return current_.buffer;
}

void AdStackHeap::collect(uint64_t completed_serial) {
  std::erase_if(retired_, [&](Retired& r) {
    if (r.last_serial > completed_serial) return false;
    device_.release(r.allocation);
    ++stats_.released;
    return true;
  });
}

HeapStats AdStackHeap::stats() const {
  HeapStats s = stats_;
  s.retired = retired_.size();
  return s;
}

}  // namespace pb::runtime::vulkan
