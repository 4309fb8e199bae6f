// Count groups of the shared-array lowering (codegen/spirv/stack_counts.h): which stacks share a
// stored count, with which bias, and after which statement a group's count is dead.
#include "codegen/spirv/stack_counts.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv::detail {
namespace {

struct Plan {
  std::unique_ptr<ir::Kernel> kernel;
  CountGroups groups;
  const ir::Stmt* stmt(int id) const {
    const ir::Stmt* found = nullptr;
    ir::walk(kernel->root(), [&](ir::Stmt& s) { found = s.id == id ? &s : found; });
    return found;
  }
};

// `body` inside a parallel loop (the kernel's last statement), whose body is the task body.
Plan plan(const std::string& body) {
  Plan p;
  p.kernel = ir::parse_kernel(
      "field n : i32[]\nkernel {\n  <i32> $0 = const 0\n  <i32> $1 = const 4\n"
      "  $2 : for in range($0, $1) block_dim=adaptive {\n    <f32> $3 = const 1\n" +
          body + "  }\n}\n",
      "groups.chi");
  std::vector<const ir::AdStackAllocaStmt*> stacks;
  std::vector<const ir::Stmt*> statements;
  const ir::Stmt* loop = p.kernel->root().back();
  for (const ir::Stmt* s : *loop->blocks().at(0)) statements.push_back(s);
  ir::walk(p.kernel->root(), [&](ir::Stmt& s) {
    if (const auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&s)) stacks.push_back(a);
  });
  p.groups = plan_count_groups(stacks, statements);
  return p;
}

constexpr const char* kLoopHead = R"(    <f32> $10 = stack alloc (max_size=8)
    <f32> $11 = stack alloc (max_size=8)
    <f32> $12 : stack push $10, val = $3
    <f32> $13 : stack push $11, val = $3
    <*i32> $14 = global ptr [n], index [] activate=true
    <i32> $15 = global load $14
)";

TEST(CountGroups, StacksPushedAndPoppedAlikeShareACount) {
  Plan p = plan(std::string(kLoopHead) + R"(    $16 : for in range($0, $15) block_dim=adaptive {
      <f32> $17 : stack push $10, val = $3
      <f32> $18 : stack push $11, val = $3
    }
    <f32> $19 = stack load top $10
    <f32> $20 = stack load top $11
)");
  EXPECT_EQ(p.groups.groups, 1u);
  EXPECT_EQ(p.groups.group_of, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(p.groups.bias, (std::vector<int64_t>{1, 1}));
}

TEST(CountGroups, DifferentChangesInALoopMeanDifferentCounts) {
  Plan p = plan(std::string(kLoopHead) + R"(    $16 : for in range($0, $15) block_dim=adaptive {
      <f32> $17 : stack push $10, val = $3
      <f32> $18 : stack push $11, val = $3
      <f32> $19 : stack push $11, val = $3
    }
    <f32> $20 = stack load top $10
    <f32> $21 = stack load top $11
)");
  EXPECT_EQ(p.groups.groups, 2u);
}

TEST(CountGroups, ACountThatDiffersByAConstantIsABias) {
  Plan p = plan(std::string(kLoopHead) + R"(    <f32> $16 : stack push $11, val = $3
    $17 : for in range($0, $15) block_dim=adaptive {
      <f32> $18 : stack push $10, val = $3
      <f32> $19 : stack push $11, val = $3
    }
    $20 : for in range($0, $15) block_dim=adaptive {
      <f32> $21 : stack pop $10
      <f32> $22 : stack pop $11
    }
)");
  EXPECT_EQ(p.groups.groups, 1u);
  EXPECT_EQ(p.groups.bias, (std::vector<int64_t>{1, 2}));
}

TEST(CountGroups, StacksAllocatedInDifferentSegmentsHaveDifferentCounts) {
  // $10 is dead after the first segment; $11 is read in the loop; $18 and $19 are allocated in
  // the loop and pushed alike.
  Plan p = plan(R"(    <f32> $10 = stack alloc (max_size=8)
    <f32> $11 = stack alloc (max_size=8)
    <*i32> $14 = global ptr [n], index [] activate=true
    <i32> $15 = global load $14
    $16 : for in range($0, $15) block_dim=adaptive {
      <f32> $17 = stack load top $11
      <f32> $18 = stack alloc (max_size=8)
      <f32> $19 = stack alloc (max_size=8)
      <f32> $20 : stack push $18, val = $17
      <f32> $21 : stack push $19, val = $17
    }
)");
  EXPECT_EQ(p.groups.group_of, (std::vector<uint32_t>{0, 1, 2, 2}));
}

TEST(CountGroups, WhatTheLastTopLevelSegmentLeavesDoesNotMatter) {
  // $10 and $11 differ only in their final pops, at the task's top level, after which the next
  // iteration allocates them again: they share a count, dead after their last statement.
  Plan p = plan(std::string(kLoopHead) + R"(    <f32> $16 : stack push $11, val = $3
    $17 : for in range($0, $15) block_dim=adaptive {
      <f32> $18 : stack push $10, val = $3
      <f32> $19 : stack push $11, val = $3
    }
    <f32> $20 : stack pop $10
    <f32> $21 : stack pop $11
    <f32> $22 : stack pop $11
    <f32> $23 = stack load top $10
)");
  EXPECT_EQ(p.groups.groups, 1u);
  EXPECT_EQ(p.groups.last_use.at(0), p.stmt(23));
  // Popped in a loop instead, the counts matter after it: two groups, neither dead.
  Plan q = plan(std::string(kLoopHead) + R"(    <f32> $16 : stack push $11, val = $3
    $17 : for in range($0, $15) block_dim=adaptive {
      <f32> $18 : stack pop $10
      <f32> $19 : stack pop $11
      <f32> $20 : stack pop $11
    }
)");
  EXPECT_EQ(q.groups.groups, 2u);
  EXPECT_EQ(q.groups.last_use, (std::vector<const ir::Stmt*>{nullptr, nullptr}));
}

}  // namespace
}  // namespace pb::codegen::spirv::detail
