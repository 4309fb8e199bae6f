// Memory for large, randomly accessed arrays (the statement pool's chunks, hash tables over a
// whole kernel): 2 MiB aligned and advised for transparent huge pages on Linux, so that random
// accesses over hundreds of MiB miss the TLB far less often. Elsewhere it is plain aligned memory.
#pragma once

#include <cstddef>
#include <new>

namespace pb::ir {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` is rounded up to a multiple of kHugePageBytes. Throws std::bad_alloc.
void* allocate_huge_pages(size_t bytes);
// `bytes` must be the size given to allocate_huge_pages.
void free_huge_pages(void* p, size_t bytes) noexcept;

// For std::vector: arrays of at least one huge page use allocate_huge_pages, smaller ones the
// ordinary heap.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);  // NOLINT(bugprone-sizeof-expression): T may be a pointer type
    return static_cast<T*>(bytes >= kHugePageBytes ? allocate_huge_pages(bytes) : ::operator new(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    size_t bytes = n * sizeof(T);  // NOLINT(bugprone-sizeof-expression): T may be a pointer type
    if (bytes >= kHugePageBytes)
      free_huge_pages(p, bytes);
    else
      ::operator delete(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace pb::ir
