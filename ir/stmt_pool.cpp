#include "ir/stmt_pool.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

#include "ir/assert.h"
#include "ir/huge_pages.h"

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define PB_HAVE_SINGLE_THREADED 1
#endif

#if defined(__SANITIZE_ADDRESS__)
#define PB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PB_ASAN 1
#endif
#endif

#ifdef PB_ASAN
#include <sanitizer/asan_interface.h>
// Free blocks and untouched slab space are poisoned, so a use after free is still reported.
#define PB_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define PB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define PB_POISON(p, n) ((void)(p), (void)(n))
#define PB_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace pb::ir::stmt_pool {
namespace {

constexpr size_t kMaxBlock = 512;  // larger objects go to ::operator new
constexpr size_t kClasses = kMaxBlock / kGranule;
constexpr size_t kSlabBytes = size_t{64} << 10;  // aligned to its size: a block finds its slab by masking
constexpr size_t kHeaderBytes = 64;
// Slabs are carved from chunks of one huge page each: a 1M-statement kernel then spans ~70 TLB
// entries instead of ~36,000 (where Linux grants huge pages).
constexpr size_t kChunkBytes = kHugePageBytes;
constexpr uint32_t kSlabsPerChunk = static_cast<uint32_t>(kChunkBytes / kSlabBytes);

struct Chunk {
  char* base;
  uint32_t carved = 0;  // slabs handed out so far, in address order
  uint32_t spare = 0;   // of those, how many are on the spare list
};

struct FreeBlock {
  FreeBlock* next;
};

// The header at the start of every slab. A slab serves one size class at a time.
struct Slab {
  const Pool* owner = nullptr;  // the pool that carved it
  Slab* prev = nullptr;         // neighbours on the one list it is on: its class's slabs with room, or spare
  Slab* next = nullptr;
  FreeBlock* free = nullptr;  // freed blocks, most recent first
  char* bump = nullptr;       // first block never handed out
  char* end = nullptr;        // end of the last whole block
  Chunk* chunk = nullptr;
  uint16_t live = 0;         // at most (kSlabBytes - kHeaderBytes) / kGranule blocks
  uint16_t block_bytes = 0;  // at most kMaxBlock
  bool listed = false;       // full slabs are on no list
  bool has_room() const { return free || bump != end; }
};
static_assert(sizeof(Slab) <= kHeaderBytes);
static_assert((kSlabBytes - kHeaderBytes) / kGranule <= UINT16_MAX && kMaxBlock <= UINT16_MAX);

struct SlabList {
  Slab* head = nullptr;
  size_t size = 0;
  void push_front(Slab* s) {
    s->prev = nullptr;
    s->next = head;
    if (head) head->prev = s;
    head = s;
    s->listed = true;
    ++size;
  }
  void remove(Slab* s) {
    if (s->prev)
      s->prev->next = s->next;
    else
      head = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = nullptr;
    s->listed = false;
    --size;
  }
};

size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }
// A block's slab is found by masking its address (slabs are aligned to their size).
Slab* slab_of(void* p) {
  uintptr_t slab = reinterpret_cast<uintptr_t>(p) & ~(kSlabBytes - 1);
  return reinterpret_cast<Slab*>(slab);  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace

// Allocation takes the first slab with room (a slab that regains room goes to the front): its
// next untouched block, else its most recently freed block. Untouched space first keeps runs of
// statements created together adjacent (a pass's insertions); freed blocks are still reused
// before a new slab is taken.
class Pool {
 public:
  std::mutex mutex;

  void* allocate(size_t bytes) {
    size_t cls = class_of(bytes);
    if (fresh_scopes_ > 0) return allocate_fresh(cls);
    SlabList& room = room_[cls];
    if (!room.head) room.push_front(take_slab((cls + 1) * kGranule));
    Slab* s = room.head;
    void* p;
    if (s->bump != s->end) {
      p = s->bump;
      PB_UNPOISON(p, s->block_bytes);
      s->bump += s->block_bytes;
    } else {
      FreeBlock* f = s->free;
      PB_UNPOISON(f, s->block_bytes);
      s->free = f->next;
      p = f;
    }
    ++s->live;
    ++live_;
    if (!s->has_room()) room.remove(s);
    return p;
  }

  // Never throws (it runs in destructors): a block it must not take is reported and left alone.
  void deallocate(void* p, size_t bytes) noexcept {
    Slab* s = slab_of(p);
    PB_ASSERT_DEFERRED(s->owner == this, "statement memory freed into a pool that did not allocate it");
    PB_ASSERT_DEFERRED(s->block_bytes == (class_of(bytes) + 1) * kGranule && s->live > 0,
                       "statement freed with the wrong size or twice");
    if (s->owner != this || s->block_bytes != (class_of(bytes) + 1) * kGranule || s->live == 0) return;
    auto* f = static_cast<FreeBlock*>(p);
    f->next = s->free;
    s->free = f;
    PB_POISON(p, s->block_bytes);
    --s->live;
    --live_;
    if (fresh_scopes_ > 0 && fresh_[class_of(bytes)] == s) return;  // still filling: end_fresh lists it
    SlabList& room = room_[class_of(s->block_bytes)];
    if (s->live == 0) {
      if (s->listed) room.remove(s);
      retire(s);
    } else if (!s->listed) {
      room.push_front(s);
    }
  }

  // Scopes may overlap (two threads relaying out two kernels): they share the fresh slabs.
  void begin_fresh() { ++fresh_scopes_; }

  // When the last scope ends, fresh slabs with room left join their class's list, where normal
  // allocation finds them.
  void end_fresh() {
    if (--fresh_scopes_ > 0) return;
    for (Slab*& s : fresh_) {
      if (s && s->has_room() && !s->listed) room_[class_of(s->block_bytes)].push_front(s);
      s = nullptr;
    }
  }

  Stats stats() const { return {live_, slabs_ - spare_.size, spare_.size}; }

 private:
  Slab* take_slab(size_t block_bytes) {
    Slab* s = spare_.head;
    if (s) {
      spare_.remove(s);
      --s->chunk->spare;
    } else {
      if (!chunk_ || chunk_->carved == kSlabsPerChunk) chunk_ = new_chunk();
      s = ::new (chunk_->base + chunk_->carved * kSlabBytes) Slab;
      s->owner = this;
      s->chunk = chunk_;
      ++chunk_->carved;
      ++slabs_;
    }
    char* first = reinterpret_cast<char*>(s) + kHeaderBytes;
    s->free = nullptr;
    s->live = 0;
    s->block_bytes = static_cast<uint16_t>(block_bytes);
    s->bump = first;
    s->end = first + (kSlabBytes - kHeaderBytes) / block_bytes * block_bytes;
    PB_POISON(first, kSlabBytes - kHeaderBytes);
    return s;
  }

  void retire(Slab* s) {
    spare_.push_front(s);
    Chunk* c = s->chunk;
    if (++c->spare < kSlabsPerChunk || spare_.size <= kMaxSpareSlabs) return;
    // Every slab of this chunk is empty and enough others are spare: give the chunk back.
    for (uint32_t i = 0; i < kSlabsPerChunk; ++i) spare_.remove(reinterpret_cast<Slab*>(c->base + i * kSlabBytes));
    if (c == chunk_) chunk_ = nullptr;
    PB_UNPOISON(c->base, kChunkBytes);
    free_huge_pages(c->base, kChunkBytes);
    delete c;
    slabs_ -= kSlabsPerChunk;
  }

  void* allocate_fresh(size_t cls) {
    Slab*& s = fresh_[cls];
    if (!s || s->bump == s->end) s = take_slab((cls + 1) * kGranule);  // a full one is on no list
    void* p = s->bump;
    PB_UNPOISON(p, s->block_bytes);
    s->bump += s->block_bytes;
    ++s->live;
    ++live_;
    return p;
  }

  static Chunk* new_chunk() { return new Chunk{static_cast<char*>(allocate_huge_pages(kChunkBytes))}; }

  SlabList room_[kClasses];
  SlabList spare_;
  int fresh_scopes_ = 0;        // FreshSlabs alive
  Slab* fresh_[kClasses] = {};  // per class, the slab a FreshSlabs scope is filling
  Chunk* chunk_ = nullptr;      // the chunk slabs are being carved from
  size_t live_ = 0;
  size_t slabs_ = 0;
};

namespace {

std::atomic<Pool*>& adopted() {
  static std::atomic<Pool*> host{nullptr};
  return host;
}

// Never destroyed: statements owned by static objects may be freed after it would have been.
Pool& pool() {
  if (Pool* host = adopted().load(std::memory_order_acquire)) return *host;
  static Pool* const instance = new Pool;
  return *instance;
}

// Locks unless the process has a single thread (then no other thread can be inside the pool,
// and a thread created later synchronises with everything done before its creation).
class PoolLock {
 public:
  explicit PoolLock(std::mutex& m) : m_(single_threaded() ? nullptr : &m) {
    if (m_) m_->lock();
  }
  ~PoolLock() {
    if (m_) m_->unlock();
  }
  PoolLock(const PoolLock&) = delete;
  PoolLock& operator=(const PoolLock&) = delete;

 private:
  static bool single_threaded() {
#ifdef PB_HAVE_SINGLE_THREADED
    return __libc_single_threaded;
#else
    return false;
#endif
  }
  std::mutex* m_;
};

}  // namespace

void* allocate(size_t bytes) {
  if (bytes > kMaxBlock) return ::operator new(bytes);
  Pool& p = pool();
  PoolLock lock(p.mutex);
  return p.allocate(bytes);
}

void deallocate(void* ptr, size_t bytes) noexcept {
  if (!ptr) return;
  if (bytes > kMaxBlock) {
    ::operator delete(ptr);  // from ::operator new(bytes); unsized, which every compiler accepts
    return;
  }
  Pool& p = pool();
  PoolLock lock(p.mutex);
  p.deallocate(ptr, bytes);
}

FreshSlabs::FreshSlabs() {
  Pool& p = pool();
  PoolLock lock(p.mutex);
  p.begin_fresh();
}

FreshSlabs::~FreshSlabs() {
  Pool& p = pool();
  PoolLock lock(p.mutex);
  p.end_fresh();
}

Pool* current_pool() { return &pool(); }

void adopt_pool(Pool* host) { adopted().store(host, std::memory_order_release); }

Stats stats() {
  Pool& p = pool();
  PoolLock lock(p.mutex);
  return p.stats();
}

}  // namespace pb::ir::stmt_pool
