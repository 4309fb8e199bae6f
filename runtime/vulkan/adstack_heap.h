// The adstack heap of the Vulkan runtime: one storage buffer that every dispatch of a task with
// heap stacks binds, sliced per invocation (stride words x dispatched invocations). It is reused
// across launches and grows by doubling (max(need, 2 x current)), retrying at exactly the need
// when the doubled allocation fails. A replaced buffer may still be in use by a submitted
// command buffer: it is retired with the serial of its last submission and released only once
// that submission is known to have completed (collect()).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/vulkan/device.h"

namespace pb::runtime::vulkan {

struct HeapStats {
  uint64_t bytes = 0;          // the current buffer's size (0: none yet)
  uint64_t peak_bytes = 0;     // the largest buffer ever held
  uint64_t grows = 0;          // buffers allocated
  uint64_t exact_retries = 0;  // doubled allocations that failed and were retried at the need
  uint64_t released = 0;       // retired buffers released
  uint64_t retired = 0;        // retired buffers still waiting for their work to complete
};

class AdStackHeap {
 public:
  explicit AdStackHeap(Device& device) : device_(device) {}
  ~AdStackHeap();
  AdStackHeap(const AdStackHeap&) = delete;
  AdStackHeap& operator=(const AdStackHeap&) = delete;

  // A buffer of at least `bytes` that submission `serial` will use. Throws UserError when even
  // the exact size cannot be allocated (naming the bytes, with the remedy).
  VkBuffer acquire(uint64_t bytes, uint64_t serial);
  // Releases the retired buffers whose last submission is <= `completed_serial`.
  void collect(uint64_t completed_serial);
  HeapStats stats() const;
  // Allocations above `bytes` fail as if the device were out of memory (0: no limit), so the
  // exact-size retry and the out-of-memory error can be exercised on any device.
  void set_allocation_limit(uint64_t bytes) { limit_ = bytes; }

 private:
  Device::Allocation allocate(uint64_t bytes);
  uint64_t limit_ = 0;
  struct Retired {
    Device::Allocation allocation;
    uint64_t last_serial = 0;
  };
  Device& device_;
  Device::Allocation current_;
  uint64_t current_last_serial_ = 0;
  std::vector<Retired> retired_;
  HeapStats stats_;
};

}  // namespace pb::runtime::vulkan
