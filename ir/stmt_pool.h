// Memory for statements: size classes carved from 64 KiB slabs (themselves carved from 2 MiB
// chunks, huge pages where Linux offers them), so statements created together lie together
// and a freed statement's block is reused before a new slab is taken.
// Stmt's class-specific operator new/delete call this; nothing else should.
// One pool per process, guarded by a mutex (skipped while the process has a single thread):
// a statement may be created on one thread and destroyed on another. A loaded module with its
// own copy of this code (libpassbench_cpu.so) adopts its host's pool, since it clones and edits
// the host's statements (a clone joins its operands' use lists).
#pragma once

#include <cstddef>

namespace pb::ir::stmt_pool {

// Empty 64 KiB slabs kept for reuse (256 MiB) before whole empty chunks go back to the system.
// Generous because fresh memory is dear: the kernel zeroes each new page on first touch
// (figures in docs/performance.md, "Memory layout of statements").
inline constexpr size_t kMaxSpareSlabs = 4096;

// Block sizes are multiples of the granule, which is also their alignment: an object of `bytes`
// takes block_bytes(bytes). 8 rather than 16 because most statements are 112 or 120 bytes.
inline constexpr size_t kGranule = 8;
constexpr size_t block_bytes(size_t bytes) { return (bytes + kGranule - 1) / kGranule * kGranule; }

void* allocate(size_t bytes);
// `bytes` must be the size given to allocate (sized delete supplies it). A block this pool did
// not hand out, or one freed twice or with another size, is left alone (leaked) and reported by
// pb::raise_deferred_internal_error (ir/assert.h): throwing here would terminate the process.
void deallocate(void* p, size_t bytes) noexcept;

class Pool;
// The pool this image allocates from: its own, or the one it adopted.
Pool* current_pool();
// From now on this image allocates from and frees into `host` (another image's current_pool(),
// which outlives it). Call it before this image creates any statement.
void adopt_pool(Pool* host);

// While one of these lives, every allocation comes from slabs that were empty when it began
// (or were taken since), each size class filling its slab front to back: consecutive
// allocations of a class are adjacent, as ir::relayout needs. Freed blocks of older slabs are
// not reused meanwhile. Scopes may overlap (other threads' allocations then come from the fresh
// slabs too, which only affects where they land).
class FreshSlabs {
 public:
  FreshSlabs();
  ~FreshSlabs();
  FreshSlabs(const FreshSlabs&) = delete;
  FreshSlabs& operator=(const FreshSlabs&) = delete;
};

struct Stats {
  size_t live_blocks = 0;  // allocated and not yet freed, across all size classes
  size_t slabs = 0;        // slabs holding at least one live block
  size_t spare_slabs = 0;  // empty slabs kept for reuse by any size class
};
Stats stats();

}  // namespace pb::ir::stmt_pool
