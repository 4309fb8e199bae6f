// ir/iteration_private.h: which root locals each iteration of a parallel loop may keep for itself.
#include "ir/iteration_private.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/parser.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

// Whether the root local `$0` of a kernel whose root starts with it is iteration-private.
bool private_local(const std::string& body) {
  auto k = parse_kernel(
      "field x : i32[4]\nkernel {\n  <*i32> $0 = alloca\n  <i32> $1 = const 0\n"
      "  <i32> $2 = const 4\n" +
      body + "}\n");
  const Stmt* a = k->root().front();
  EXPECT_TRUE(isa<AllocaStmt>(a));
  return iteration_private(*a);
}

TEST(IterationPrivate, StoreThenLoadInTheSameIteration) {
  // The Taichi 0.5 loop variable: the index is stored to the root local, then read.
  EXPECT_TRUE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : local store [$0 <- $4]
    <i32> $6 = local load [$0]
    <i32> $7 = atomic add($0, $6)
    <u1> $8 = cmp_lt $6 $2
    $9 : if $8 {
      <i32> $10 = local load [$0]
    }
  }
)"));
}

TEST(IterationPrivate, StoresOutsideTheLoopAreNeverRead) {
  EXPECT_TRUE(private_local(R"(  $3 : local store [$0 <- $2]
  $4 : for in range($1, $2) block_dim=adaptive {
    $5 : local store [$0 <- $1]
    <i32> $6 = local load [$0]
  }
)"));
}

TEST(IterationPrivate, LoadBeforeStoreSeesAnotherIteration) {
  EXPECT_FALSE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    <i32> $4 = local load [$0]
    $5 : local store [$0 <- $4]
  }
)"));
}

TEST(IterationPrivate, StoreBeforeTheLoopIsSharedByIterations) {
  EXPECT_FALSE(private_local(R"(  $3 : local store [$0 <- $2]
  $4 : for in range($1, $2) block_dim=adaptive {
    <i32> $5 = local load [$0]
  }
)"));
}

TEST(IterationPrivate, StoreInABranchDoesNotCoverWhatFollowsIt) {
  EXPECT_FALSE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <u1> $5 = cmp_lt $4 $2
    $6 : if $5 {
      $7 : local store [$0 <- $4]
    }
    <i32> $8 = local load [$0]
  }
)"));
}

TEST(IterationPrivate, AnAtomicReadsTheLocal) {
  EXPECT_FALSE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    <i32> $4 = atomic add($0, $2)
  }
)"));
}

TEST(IterationPrivate, AReadAfterTheLoopSeesTheLastIteration) {
  EXPECT_FALSE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : local store [$0 <- $4]
  }
  <i32> $6 = local load [$0]
)"));
}

TEST(IterationPrivate, ALoopCarriedValueInANestedLoop) {
  // The inner loop's second iteration reads what its first stored: not dominated in the inner
  // body, and no store before the inner loop in the outer body.
  EXPECT_FALSE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    $4 : for in range($1, $2) block_dim=adaptive {
      <i32> $5 = local load [$0]
      <i32> $6 = add $5 $2
      $7 : local store [$0 <- $6]
    }
  }
)"));
  EXPECT_TRUE(private_local(R"(  $3 : for in range($1, $2) block_dim=adaptive {
    $4 : local store [$0 <- $1]
    $5 : for in range($1, $2) block_dim=adaptive {
      <i32> $6 = local load [$0]
      <i32> $7 = add $6 $2
      $8 : local store [$0 <- $7]
    }
  }
)"));
}

}  // namespace
}  // namespace pb::ir
