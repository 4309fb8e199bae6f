// ir/numbering.h: numbers read only through the numbering that gave them. A statement made,
// cloned or renumbered since is refused (an InternalError), never given a stale number.
#include "ir/numbering.h"

#include <gtest/gtest.h>

#include "ir/assert.h"
#include "ir/parser.h"

namespace pb::ir {
namespace {

const char* kKernel = R"(field x : f32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3]
    <f32> $5 = global load $4
  }
  <f32> $6 = const 1
}
)";

TEST(Numbering, PreOrderContainersBeforeTheirBodies) {
  auto k = parse_kernel(kKernel);
  Numbering n(k->root());
  ASSERT_EQ(n.size(), 7u);
  for (uint32_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(n[*n.at(i)], i);
    EXPECT_EQ(n.at(i)->id, static_cast<int>(i));  // the kernel's ids are in pre-order
  }
}

TEST(Numbering, AStatementMadeSinceIsNotNumbered) {
  auto k = parse_kernel(kKernel);
  Numbering n(k->root());
  Stmt* fresh = k->root().push_back(k->root().front()->clone_shallow());
  EXPECT_FALSE(n.contains(*fresh));
  EXPECT_EQ(n.find(*fresh), -1);
  EXPECT_THROW((void)n[*fresh], InternalError);
  EXPECT_EQ(n[*k->root().front()], 0u);  // the clone took nothing from its original
}

TEST(Numbering, ARenumberedStatementIsRefusedByTheOldNumbering) {
  auto k = parse_kernel(kKernel);
  Numbering whole(k->root());
  Numbering last;
  Stmt* six = k->root().back();
  EXPECT_EQ(last.add(*six), 0u);
  EXPECT_EQ(last[*six], 0u);
  // `whole` gave $6 number 6; `last` has since given it 0: reading it through `whole` is a bug
  // in the pass, not a number.
  EXPECT_FALSE(whole.contains(*six));
  EXPECT_THROW((void)whole[*six], InternalError);
  EXPECT_EQ(whole[*k->root().front()], 0u);
}

}  // namespace
}  // namespace pb::ir
