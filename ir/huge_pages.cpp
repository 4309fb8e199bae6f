#include "ir/huge_pages.h"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pb::ir {

void* allocate_huge_pages(size_t bytes) {
  size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (!p) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without huge pages the memory works the same
#endif
  return p;
}

void free_huge_pages(void* p) noexcept { std::free(p); }

}  // namespace pb::ir
