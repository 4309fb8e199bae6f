// Memory for statements: size classes carved from 64 KiB slabs (themselves carved from 2 MiB
// chunks, huge pages where Linux offers them), so statements created together lie together
// and a freed statement's block is reused before a new slab is taken.
// Stmt's class-specific operator new/delete call this; nothing else should.
// One pool per process, guarded by a mutex (skipped while the process has a single thread):
// a statement may be created on one thread and destroyed on another.
#pragma once

#include <cstddef>

namespace pb::ir::stmt_pool {

void* allocate(size_t bytes);
// `bytes` must be the size given to allocate (sized delete supplies it).
void deallocate(void* p, size_t bytes) noexcept;

struct Stats {
  size_t live_blocks = 0;  // allocated and not yet freed, across all size classes
  size_t slabs = 0;        // slabs holding at least one live block
  size_t spare_slabs = 0;  // empty slabs kept for reuse by any size class
};
Stats stats();

}  // namespace pb::ir::stmt_pool
