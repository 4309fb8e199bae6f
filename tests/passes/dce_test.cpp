// dce: IR in, IR out, with its statistics. IR-only cases are in tests/passes/dce.chi (FileCheck).
#include "passes/dce.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

using namespace pb;

namespace {

std::string dce(const std::string& in, passes::DceResult* result = nullptr) {
  auto k = test::parse(in);
  auto r = passes::eliminate_dead_code(*k);
  if (result) *result = r;
  EXPECT_EQ(test::verify_text(*k), "");
  return test::print(*k);
}

TEST(Dce, RemovesDeadChainsKeepsStores) {
  passes::DceResult r;
  EXPECT_EQ(dce(R"(field y : f32[]
kernel {
  <f32> $0 = const 1
  <f32> $1 = sin $0
  <f32> $2 = mul $1 $1
  <*f32> $3 = global ptr [y], index [] activate=true
  <f32> $4 = global load $3
  $5 : global store [$3 <- $0]
}
)",
                &r),
            R"(field y : f32[]
kernel {
  <f32> $0 = const 1
  <*f32> $3 = global ptr [y], index [] activate=true
  $5 : global store [$3 <- $0]
}
)");
  EXPECT_EQ(r.removed, 3);
}

TEST(Dce, StoreOnlyAllocaGoesWithItsStores) {
  passes::DceResult r;
  EXPECT_EQ(dce(R"(kernel {
  <f32> $0 = const 1
  <*f32> $1 = alloca
  <f32> $2 : local store [$1 <- $0]
  <f32> $3 = sin $0
  <f32> $4 : local store [$1 <- $3]
}
)",
                &r),
            "kernel {\n}\n");
  EXPECT_EQ(r.allocas_removed, 1);
  EXPECT_EQ(r.removed, 5);
}

// Nothing here is dead at the start: the load dies first, which leaves the alloca store-only,
// so its stores go, which empties the if and frees the values they stored and the condition.
// dce's first walk queues only what is dead already; the rest must be queued as it dies.
TEST(Dce, DeathsThatFollowOtherDeathsAreFound) {
  passes::DceResult r;
  EXPECT_EQ(dce(R"(field y : f32[]
kernel {
  <*f32> $0 = global ptr [y], index [] activate=true
  <f32> $1 = global load $0
  <*f32> $2 = alloca
  <u1> $3 = cmp_lt $1 $1
  $4 : if $3 {
    <f32> $5 = sin $1
    <f32> $6 : local store [$2 <- $5]
  } else {
  }
  <f32> $7 = local load [$2]
  <f32> $8 = cos $7
}
)",
                &r),
            "field y : f32[]\nkernel {\n}\n");
  EXPECT_EQ(r.allocas_removed, 1);
  EXPECT_EQ(r.removed, 9);
}

TEST(Dce, LinearOnALongChain) {
  // 50k statements where each uses the previous: a quadratic rescan would take minutes.
  std::string text = "field y : i32[]\nkernel {\n  <i32> $0 = const 1\n";
  const int n = 50000;
  for (int i = 1; i <= n; ++i) text += "  <i32> $" + std::to_string(i) + " = add $" + std::to_string(i - 1) + " $0\n";
  text += "}\n";
  auto k = test::parse(text);
  auto r = passes::eliminate_dead_code(*k);
  EXPECT_EQ(r.removed, n + 1);
  EXPECT_EQ(k->count_statements(), 0u);
}

}  // namespace

namespace {

// acc = acc + sin(x[j]) in a loop, and nothing reads acc afterwards: the variable is read only
// to compute its own next value, so it goes with its loop (kept before, since it is loaded).
TEST(Dce, AccumulatorNothingReadsGoesWithItsLoop) {
  const char* in = R"(field x : f32[4]
field n : i32[]
kernel {
  <i32> $0 = const 0
  <f32> $1 = const 0
  <*f32> $2 = alloca
  <f32> $3 : local store [$2 <- $1]
  <*i32> $4 = global ptr [n], index [] activate=true
  <i32> $5 = global load $4
  $6 : for in range($0, $5) block_dim=adaptive {
    <i32> $7 = loop $6 index 0
    <*f32> $8 = global ptr [x], index [$7] activate=true
    <f32> $9 = global load $8
    <f32> $10 = sin $9
    <f32> $11 = local load [$2]
    <f32> $12 = add $11 $10
    <f32> $13 : local store [$2 <- $12]
  }
}
)";
  passes::DceResult r;
  EXPECT_EQ(dce(in, &r), "field x : f32[4]\nfield n : i32[]\nkernel {\n}\n");
  EXPECT_EQ(r.dead_variables, 1);
}

// The same loop, but acc feeds a global store afterwards, or an if condition that guards one,
// or another variable that is stored: every one of these keeps it.
TEST(Dce, AccumulatorReachingAnEffectIsKept) {
  std::string loop = R"(field x : f32[4]
field y : f32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <f32> $2 = const 0
  <*f32> $3 = alloca
  <f32> $4 : local store [$3 <- $2]
  <*f32> $20 = alloca
  $5 : for in range($0, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = global ptr [x], index [$6] activate=true
    <f32> $8 = global load $7
    <f32> $9 = local load [$3]
    <f32> $10 = add $9 $8
    <f32> $11 : local store [$3 <- $10]
  }
  <f32> $12 = local load [$3]
  <*f32> $13 = global ptr [y], index [] activate=true
)";
  for (const char* tail : {"  $14 : global store [$13 <- $12]\n}\n",
                           "  <u1> $14 = cmp_gt $12 $2\n  $15 : if $14 {\n    $16 : global store [$13 <- $2]\n  }\n}\n",
                           "  <f32> $21 : local store [$20 <- $12]\n  <f32> $22 = local load [$20]\n"
                           "  $23 : global store [$13 <- $22]\n}\n"}) {
    std::string in = loop + tail;
    std::string out = in;
    const std::string unused = "  <*f32> $20 = alloca\n";
    if (in.find("$20 <-") == std::string::npos) out.erase(out.find(unused), unused.size());
    EXPECT_EQ(dce(in), out);
  }
}

// Two variables that only feed each other are dead together.
TEST(Dce, VariablesFeedingOnlyEachOtherGoTogether) {
  const char* in = R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <f32> $2 = const 1
  <*f32> $3 = alloca
  <*f32> $4 = alloca
  $5 : for in range($0, $1) block_dim=adaptive {
    <f32> $6 = local load [$3]
    <f32> $7 = local load [$4]
    <f32> $8 = add $6 $2
    <f32> $9 : local store [$4 <- $8]
    <f32> $10 = mul $7 $2
    <f32> $11 : local store [$3 <- $10]
  }
}
)";
  passes::DceResult r;
  EXPECT_EQ(dce(in, &r), "kernel {\n}\n");
  EXPECT_EQ(r.dead_variables, 2);
}

}  // namespace
