#include "ir/huge_pages.h"

#include <cstdint>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define PB_HEAP_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PB_HEAP_ONLY 1
#endif
#endif

namespace pb::ir {

namespace {
size_t round_up(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }
}  // namespace

// On Linux the memory is mapped directly, so freeing it returns it to the system at once (the
// heap would keep it, fragmented by the alignment). Under AddressSanitizer it comes from the
// heap instead, where LeakSanitizer looks for pointers held by statements.
#if defined(__linux__) && !defined(PB_HEAP_ONLY)

void* allocate_huge_pages(size_t bytes) {
  size_t size = round_up(bytes);
  void* raw = mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // Aligned by offsetting the mapping's pointer (not by casting an integer back to a pointer).
  auto start = reinterpret_cast<uintptr_t>(raw);
  size_t lead = ((start + kHugePageBytes - 1) & ~(kHugePageBytes - 1)) - start;
  char* aligned = static_cast<char*>(raw) + lead;
  if (lead > 0) munmap(raw, lead);
  if (size_t tail = kHugePageBytes - lead) munmap(aligned + size, tail);
  madvise(aligned, size, MADV_HUGEPAGE);  // a hint: it works the same without
  return aligned;
}

void free_huge_pages(void* p, size_t bytes) noexcept { munmap(p, round_up(bytes)); }

#else

void* allocate_huge_pages(size_t bytes) {
  void* p = std::aligned_alloc(kHugePageBytes, round_up(bytes));
  if (!p) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  madvise(p, round_up(bytes), MADV_HUGEPAGE);
#endif
  return p;
}

void free_huge_pages(void* p, size_t) noexcept { std::free(p); }

#endif

}  // namespace pb::ir
