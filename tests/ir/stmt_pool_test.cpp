// The statement pool: statements created together are adjacent, freed blocks are reused before new slabs, empty
// slabs are given back, spilled operand/use storage is pooled, and statements may be created on
// one thread and destroyed on another.
#include "ir/stmt_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "ir/assert.h"
#include "ir/kernel.h"

namespace pb::ir {
namespace {

std::unique_ptr<Stmt> make_const(float v) { return std::make_unique<ConstStmt>(Value::make_f32(v)); }

TEST(StmtPool, StatementsStaySmall) {
  // Walks over large kernels are memory-bound, so statement size is a speed budget
  // (docs/performance.md): 24 bytes of header, 24 of links, 40 for operands with their use
  // positions, 24 for packed 8-byte uses. It was 144 bytes before the operand and use lists were
  // packed.
  EXPECT_LE(sizeof(Stmt), 112u);
  EXPECT_LE(sizeof(BinaryOpStmt), 120u);
  EXPECT_LE(sizeof(ConstStmt), 128u);
}

// A ConstStmt's block: its size rounded up to the pool's granule.
constexpr size_t kConstBlock = stmt_pool::block_bytes(sizeof(ConstStmt));

TEST(StmtPool, ConsecutiveStatementsAreAdjacent) {
  std::vector<std::unique_ptr<Stmt>> made;
  for (int i = 0; i < 200; ++i) made.push_back(make_const(static_cast<float>(i)));
  // A run of fresh blocks is contiguous except where a slab ends (or a freed block is reused).
  int adjacent = 0;
  for (size_t i = 1; i < made.size(); ++i) {
    auto gap = reinterpret_cast<uintptr_t>(made[i].get()) - reinterpret_cast<uintptr_t>(made[i - 1].get());
    if (gap == kConstBlock) ++adjacent;
  }
  EXPECT_GE(adjacent, 190);
}

TEST(StmtPool, FreedBlockIsReusedBeforeANewSlab) {
  // 1,000 statements fill the first slab they start in (about 500 fit in 64 KiB) and go on;
  // freeing one there gives that slab room again, and the next statement takes the freed block
  // rather than the untouched tail of the newest slab.
  std::vector<std::unique_ptr<Stmt>> made;
  for (int i = 0; i < 1000; ++i) made.push_back(make_const(static_cast<float>(i)));
  Stmt* where = made[0].get();
  made[0].reset();
  auto b = make_const(3.0f);
  EXPECT_EQ(b.get(), where);
}

TEST(StmtPool, UntouchedSpaceOfTheSlabComesBeforeItsFreedBlocks) {
  // Within one slab, statements created in a row stay adjacent even when an earlier one was
  // freed: passes that insert runs of statements keep them together in memory.
  auto a = make_const(1.0f);
  auto b = make_const(2.0f);
  Stmt* freed = a.get();
  a.reset();
  auto c = make_const(3.0f);
  auto d = make_const(4.0f);
  if (reinterpret_cast<uintptr_t>(c.get()) - reinterpret_cast<uintptr_t>(b.get()) == kConstBlock) {
    EXPECT_NE(c.get(), freed);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(d.get()) - reinterpret_cast<uintptr_t>(c.get()), kConstBlock);
  } else {
    EXPECT_EQ(c.get(), freed);  // b was the last block of its slab: the freed block is next
  }
}

TEST(StmtPool, CountsLiveBlocksAndGivesBackEmptySlabs) {
  auto before = stmt_pool::stats();
  {
    std::vector<std::unique_ptr<Stmt>> made;
    for (int i = 0; i < 5000; ++i) made.push_back(make_const(0.5f));  // several 64 KiB slabs
    auto during = stmt_pool::stats();
    EXPECT_EQ(during.live_blocks, before.live_blocks + 5000);
    EXPECT_GE(during.slabs, before.slabs + 5000 * kConstBlock / (64 * 1024));
  }
  auto after = stmt_pool::stats();
  EXPECT_EQ(after.live_blocks, before.live_blocks);
  EXPECT_LE(after.slabs, before.slabs + 1);  // emptied slabs went to the spare list
}

TEST(StmtPool, EmptyChunksGoBackBeyondTheSpareLimit) {
  // 500 slabs beyond the spare limit of 512-byte blocks (127 a slab), then all freed: at most
  // the limit plus the rest of one partly spare 2 MiB chunk (32 slabs) stay.
  const size_t n = (stmt_pool::kMaxSpareSlabs + 500) * 127;
  std::vector<void*> blocks;
  for (size_t i = 0; i < n; ++i) blocks.push_back(stmt_pool::allocate(512));
  EXPECT_GE(stmt_pool::stats().slabs, n / 127);
  for (void* p : blocks) stmt_pool::deallocate(p, 512);
  EXPECT_LE(stmt_pool::stats().spare_slabs, stmt_pool::kMaxSpareSlabs + 32u);
  EXPECT_GE(stmt_pool::stats().spare_slabs, stmt_pool::kMaxSpareSlabs - 32u);
}

TEST(StmtPool, SpilledUsesAndOperandsArePooled) {
  auto c = make_const(1.0f);
  std::vector<std::unique_ptr<Stmt>> users;
  for (int i = 0; i < 100; ++i) users.push_back(std::make_unique<BinaryOpStmt>(BinaryOp::add, c.get(), c.get()));
  EXPECT_EQ(c->num_uses(), 200u);
  std::vector<Stmt*> indices(10, c.get());
  auto ptr = std::make_unique<GlobalPtrStmt>(0, indices);  // 10 operands: spills
  EXPECT_EQ(ptr->num_operands(), 10u);
  EXPECT_EQ(c->num_uses(), 210u);
  users.resize(50);
  EXPECT_EQ(c->num_uses(), 110u);
  ptr.reset();
  EXPECT_EQ(c->num_uses(), 100u);
}

TEST(StmtPool, LargeObjectsBypassThePool) {
  void* p = stmt_pool::allocate(4096);
  ASSERT_NE(p, nullptr);
  stmt_pool::deallocate(p, 4096);
}

TEST(StmtPool, StatementsCrossThreads) {
  // Built on one thread, destroyed on another, while a third builds and destroys its own.
  std::unique_ptr<Kernel> built;
  std::thread maker([&] {
    built = std::make_unique<Kernel>();
    for (int i = 0; i < 20000; ++i) built->root().push_back(built->make<ConstStmt>(Value::make_i32(i)));
  });
  std::thread churn([] {
    for (int round = 0; round < 20; ++round) {
      Kernel k;
      Stmt* c = k.root().push_back(k.make<ConstStmt>(Value::make_f32(1.0f)));
      for (int i = 0; i < 1000; ++i) k.root().push_back(k.make<BinaryOpStmt>(BinaryOp::mul, c, c));
    }
  });
  maker.join();
  std::thread destroyer([&] { built.reset(); });
  destroyer.join();
  churn.join();
  EXPECT_EQ(built, nullptr);
}

// A free the pool must not take (here: the wrong size) runs where throwing would terminate the
// process; it is left alone and thrown at the next check instead.
TEST(StmtPool, BadFreeIsReportedNotFatal) {
  void* p = stmt_pool::allocate(16);
  stmt_pool::deallocate(p, 24);
  EXPECT_THROW(raise_deferred_internal_error(), InternalError);
  EXPECT_NO_THROW(raise_deferred_internal_error());  // reported once
  stmt_pool::deallocate(p, 16);
  EXPECT_NO_THROW(raise_deferred_internal_error());
}

// A module that adopted another image's pool allocates from it; adopting this image's own pool
// changes nothing.
TEST(StmtPool, AdoptingTheCurrentPoolKeepsIt) {
  stmt_pool::Pool* mine = stmt_pool::current_pool();
  stmt_pool::adopt_pool(mine);
  EXPECT_EQ(stmt_pool::current_pool(), mine);
  auto s = make_const(1.0f);
  s.reset();
  EXPECT_NO_THROW(raise_deferred_internal_error());
}

}  // namespace
}  // namespace pb::ir
