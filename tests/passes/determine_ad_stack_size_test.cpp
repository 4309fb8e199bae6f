// determine_ad_stack_size: IR in, IR out. Each case gives a kernel with adaptive stacks and the
// bound each stack must get; the output must be the input with exactly those alloc lines changed.
#include "passes/determine_ad_stack_size.h"

#include <gtest/gtest.h>

#include <map>

#include "ir/diagnostic.h"
#include "pass_test_util.h"

using namespace pb;

namespace {

// Runs the pass; the printed result must equal `in` with each `$N = stack alloc (max_size=0)`
// named in `bounds` rewritten to `(BOUND)`.
void expect_sized(const std::string& in, const std::map<std::string, std::string>& bounds, int64_t symbolic = -1) {
  std::string want = in;
  for (const auto& [id, bound] : bounds) {
    std::string from = id + " = stack alloc (max_size=0)";
    size_t at = want.find(from);
    ASSERT_NE(at, std::string::npos) << id;
    want.replace(at, from.size(), id + " = stack alloc (" + bound + ")");
  }
  auto k = test::parse(in);
  auto r = passes::determine_ad_stack_sizes(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_EQ(test::print(*k), want);
  EXPECT_EQ(r.stacks_sized, static_cast<int64_t>(bounds.size()));
  if (symbolic >= 0) {
    EXPECT_EQ(r.symbolic, symbolic);
  }
}

std::string size_error(const std::string& in) {
  auto k = test::parse(in);
  try {
    passes::determine_ad_stack_sizes(*k);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(DetermineAdStackSize, StraightLineIsTheDeepestDepth) {
  // Depths 1 2 1 2 3 2 1 0.
  expect_sized(R"(kernel {
  <f32> $0 = const 1
  <f32> $1 = stack alloc (max_size=0)
  <f32> $2 : stack push $1, val = $0
  <f32> $3 : stack push $1, val = $0
  <f32> $4 : stack pop $1
  <f32> $5 : stack push $1, val = $0
  <f32> $6 : stack push $1, val = $0
  <f32> $7 : stack pop $1
  <f32> $8 : stack pop $1
  <f32> $9 : stack pop $1
}
)",
               {{"$1", "max_size=3"}});
}

TEST(DetermineAdStackSize, UnusedStackGetsOne) {
  expect_sized("kernel {\n  <f32> $0 = stack alloc (max_size=0)\n}\n", {{"$0", "max_size=1"}});
}

TEST(DetermineAdStackSize, IfTakesTheDeeperBranch) {
  expect_sized(R"(kernel {
  <f32> $0 = const 1
  <u1> $1 = const true
  <f32> $2 = stack alloc (max_size=0)
  $3 : if $1 {
    <f32> $4 : stack push $2, val = $0
  } else {
    <f32> $5 : stack push $2, val = $0
    <f32> $6 : stack push $2, val = $0
  }
  <f32> $7 : stack push $2, val = $0
}
)",
               {{"$2", "max_size=3"}});
}

TEST(DetermineAdStackSize, StaticLoopPoppedByAReversedLoopMultipliesItsTripCount) {
  // Bootstrap push, 5 forward pushes, then the reverse pops them: 6 entries at the deepest.
  expect_sized(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 5
  <f32> $2 = const 0
  <f32> $3 = stack alloc (max_size=0)
  <f32> $4 : stack push $3, val = $2
  $5 : for in range($0, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <f32> $7 = cast_value<f32> $6
    <f32> $8 : stack push $3, val = $7
  }
  $9 : reversed for in range($0, $1) block_dim=adaptive {
    <f32> $10 = stack load top $3
    <f32> $11 : stack pop $3
  }
  <f32> $12 : stack pop $3
}
)",
               {{"$3", "max_size=6"}}, 0);
}

TEST(DetermineAdStackSize, BalancedLoopBodyNeedsNoTripCount) {
  // Push and pop in the same iteration: no positive cycle, even though the bound is dynamic.
  expect_sized(R"(arg 0 : i32
kernel {
  <i32> $0 = const 0
  <i32> $1 = argload[0]
  <f32> $2 = const 1
  <f32> $3 = stack alloc (max_size=0)
  $4 : for in range($0, $1) block_dim=adaptive {
    <f32> $5 : stack push $3, val = $2
    <f32> $6 : stack push $3, val = $2
    <f32> $7 : stack pop $3
    <f32> $8 : stack pop $3
  }
}
)",
               {{"$3", "max_size=2"}});
}

TEST(DetermineAdStackSize, ArgBoundIsSymbolic) {
  expect_sized(R"(arg 0 : i32
kernel {
  <i32> $0 = const 0
  <i32> $1 = argload[0]
  <f32> $2 = const 0
  <f32> $3 = stack alloc (max_size=0)
  <f32> $4 : stack push $3, val = $2
  $5 : for in range($0, $1) block_dim=adaptive {
    <f32> $6 : stack push $3, val = $2
  }
  $7 : reversed for in range($0, $1) block_dim=adaptive {
    <f32> $8 : stack pop $3
  }
}
)",
               {{"$3", "max_size=0, size=1 + arg(0)"}}, 1);
}

// `for i in x: acc = 0; for j in range(n[None]): acc += sin(x[i] + j*0.3); y[None] += acc` after
// auto_diff: three stacks, the acc stack with a user push.
const char* k91 = R"(field n : i32[]
field x : f32[4]
kernel {
  <i32> $0 = const 0
  <f32> $1 = const 0
  <f32> $2 = stack alloc (max_size=0)
  <f32> $3 : stack push $2, val = $1
  <f32> $4 = stack alloc (max_size=0)
  <f32> $5 : stack push $4, val = $1
  <f32> $6 : stack push $4, val = $1
  <*i32> $7 = global ptr [n], index [] activate=true
  <i32> $8 = global load $7
  $9 : for in range($0, $8) block_dim=adaptive {
    <i32> $10 = loop $9 index 0
    <f32> $11 = cast_value<f32> $10
    <f32> $12 : stack push $2, val = $11
    <f32> $13 = stack load top $4
    <f32> $14 = add $13 $11
    <f32> $15 : stack push $4, val = $14
  }
  $16 : reversed for in range($0, $8) block_dim=adaptive {
    <f32> $17 : stack pop $4
    <f32> $18 : stack pop $2
  }
  <f32> $19 : stack pop $4
  <f32> $20 : stack pop $4
  <f32> $21 : stack pop $2
}
)";

TEST(DetermineAdStackSize, FieldBoundIsSymbolic) {
  expect_sized(k91, {{"$2", "max_size=0, size=1 + n[]"}, {"$4", "max_size=0, size=2 + n[]"}}, 2);
}

TEST(DetermineAdStackSize, NestedLoopsMultiplySiblingLoopsAdd) {
  expect_sized(R"(field n : i32[]
arg 0 : i32
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <i32> $2 = argload[0]
  <*i32> $3 = global ptr [n], index [] activate=true
  <i32> $4 = global load $3
  <f32> $5 = const 1
  <f32> $6 = stack alloc (max_size=0)
  <f32> $7 = stack alloc (max_size=0)
  $8 : for in range($0, $1) block_dim=adaptive {
    $9 : for in range($0, $4) block_dim=adaptive {
      <f32> $10 : stack push $6, val = $5
    }
  }
  $11 : for in range($0, $2) block_dim=adaptive {
    <f32> $12 : stack push $7, val = $5
  }
  $13 : for in range($1, $4) block_dim=adaptive {
    <f32> $14 : stack push $7, val = $5
  }
}
)",
               {{"$6", "max_size=0, size=4 * n[]"}, {"$7", "max_size=0, size=arg(0) + (n[] - 4)"}});
}

// Stacks allocated in one block with the same pushes and pops in the same blocks share one
// sizing; any difference in order, count or place must give each its own bound.
TEST(DetermineAdStackSize, StacksOfTheSameShapeShareABoundOthersDoNot) {
  expect_sized(R"(field n : i32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <*i32> $2 = global ptr [n], index [] activate=true
  <i32> $3 = global load $2
  <f32> $4 = const 1
  <f32> $5 = stack alloc (max_size=0)
  <f32> $6 = stack alloc (max_size=0)
  <f32> $7 = stack alloc (max_size=0)
  <f32> $8 = stack alloc (max_size=0)
  <f32> $9 : stack push $5, val = $4
  <f32> $10 : stack push $6, val = $4
  <f32> $11 : stack push $8, val = $4
  $12 : for in range($0, $3) block_dim=adaptive {
    <f32> $13 : stack push $5, val = $4
    <f32> $14 : stack push $6, val = $4
    <f32> $15 : stack push $7, val = $4
    <f32> $16 : stack push $7, val = $4
  }
  $17 : for in range($0, $1) block_dim=adaptive {
    <f32> $18 : stack push $8, val = $4
  }
  <f32> $19 : stack pop $5
  <f32> $20 : stack pop $8
}
)",
               {{"$5", "max_size=0, size=1 + n[]"},
                {"$6", "max_size=0, size=1 + n[]"},
                {"$7", "max_size=0, size=2 * n[]"},
                {"$8", "max_size=4"}});
}

TEST(DetermineAdStackSize, TriangularLoopIsBoundedByTheOuterLoop) {
  // for i in range(n[]): for j in range(i): push. j < i <= n[] - 1; range(n[] - i) is largest at i = 0.
  expect_sized(R"(field n : i32[]
kernel {
  <i32> $0 = const 0
  <*i32> $1 = global ptr [n], index [] activate=true
  <i32> $2 = global load $1
  <f32> $3 = const 1
  <f32> $4 = stack alloc (max_size=0)
  <f32> $5 = stack alloc (max_size=0)
  $6 : for in range($0, $2) block_dim=adaptive {
    <i32> $7 = loop $6 index 0
    $8 : for in range($0, $7) block_dim=adaptive {
      <f32> $9 : stack push $4, val = $3
    }
    <i32> $10 = sub $2 $7
    $11 : for in range($0, $10) block_dim=adaptive {
      <f32> $12 : stack push $5, val = $3
    }
  }
}
)",
               {{"$4", "max_size=0, size=n[] * (n[] - 1)"},
                {"$5", "max_size=0, size=n[] * max(i6 in range(0, n[]): n[] - i6)"}});
}

TEST(DetermineAdStackSize, EnclosingLoopIndexIsBoundedByItsLoop) {
  // The alloc runs in every iteration of a loop over [0, 8) and over a 4-cell space.
  expect_sized(R"(dense S : [4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 8
  <f32> $2 = const 1
  $3 : struct for in S block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : for in range($0, $1) block_dim=adaptive {
      <i32> $6 = loop $5 index 0
      <f32> $7 = stack alloc (max_size=0)
      <i32> $8 = add $6 $4
      $9 : for in range($0, $8) block_dim=adaptive {
        <f32> $10 : stack push $7, val = $2
      }
    }
  }
}
)",
               {{"$7", "max_size=10"}});
}

TEST(DetermineAdStackSize, LocalLoadBoundIsTheMaxOfItsStores) {
  expect_sized(R"(field n : i32[]
arg 0 : i32
kernel {
  <i32> $0 = const 0
  <*i32> $1 = alloca
  <i32> $2 = argload[0]
  <i32> $3 : local store [$1 <- $2]
  <*i32> $4 = global ptr [n], index [] activate=true
  <i32> $5 = global load $4
  <i32> $6 : local store [$1 <- $5]
  <i32> $7 = local load [$1]
  <f32> $8 = const 1
  <f32> $9 = stack alloc (max_size=0)
  $10 : for in range($0, $7) block_dim=adaptive {
    <f32> $11 : stack push $9, val = $8
  }
}
)",
               {{"$9", "max_size=0, size=max(arg(0), n[])"}});
}

TEST(DetermineAdStackSize, ReversedLoopCancelsTheForwardLoopInsideAnOuterLoop) {
  // Each outer iteration pushes n[] and pops them again: the depth never exceeds n[].
  expect_sized(R"(field n : i32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <*i32> $2 = global ptr [n], index [] activate=true
  <i32> $3 = global load $2
  <f32> $4 = const 1
  <f32> $5 = stack alloc (max_size=0)
  $6 : for in range($0, $1) block_dim=adaptive {
    $7 : for in range($0, $3) block_dim=adaptive {
      <f32> $8 : stack push $5, val = $4
    }
    $9 : reversed for in range($0, $3) block_dim=adaptive {
      <f32> $10 : stack pop $5
    }
  }
}
)",
               {{"$5", "max_size=0, size=n[]"}});
}

TEST(DetermineAdStackSize, ContinueBeforeThePopIsAPositiveCycle) {
  expect_sized(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <f32> $2 = const 1
  <f32> $3 = stack alloc (max_size=0)
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <f32> $6 : stack push $3, val = $2
    <u1> $7 = cmp_lt $5 $1
    $8 : if $7 {
      $9 continue
    }
    <f32> $10 : stack pop $3
  }
}
)",
               {{"$3", "max_size=3"}});
}

TEST(DetermineAdStackSize, SizedStacksAreUntouched) {
  const char* in = R"(field n : i32[]
kernel {
  <f32> $0 = const 1
  <f32> $1 = stack alloc (max_size=7)
  <f32> $2 = stack alloc (max_size=0, size=1 + n[])
  <f32> $3 : stack push $1, val = $0
  <f32> $4 : stack push $2, val = $0
}
)";
  auto k = test::parse(in);
  auto r = passes::determine_ad_stack_sizes(*k);
  EXPECT_EQ(test::print(*k), in);
  EXPECT_EQ(r.stacks_sized, 0);
}

const char* kWhile = R"(kernel {
  <f32> $0 = const 1
  <i32> $1 = const 1
  <*i32> $2 = alloca
  <i32> $3 : local store [$2 <- $1]
  <f32> $4 = stack alloc (max_size=0)
  $5 : while true {
    <f32> $6 : stack push $4, val = $0
    <i32> $7 = const 0
    $8 : while control $2, $7
  }
  <f32> $9 : stack pop $4
}
)";

TEST(DetermineAdStackSize, WhileLoopIsAnErrorNamingStackAndLoop) {
  std::string e = size_error(kWhile);
  EXPECT_TRUE(has(e, "cannot size autodiff stack `<f32> $4 = stack alloc (max_size=0)`")) << e;
  EXPECT_TRUE(has(e, "each iteration of `$5 : while true`, a while loop")) << e;
  EXPECT_TRUE(has(e, "replace_locals_with_stacks{ad_stack_size=N}")) << e;
}

TEST(DetermineAdStackSize, StructForBetweenAllocAndPushIsAnError) {
  std::string e = size_error(R"(dense S : [4]
kernel {
  <f32> $0 = const 1
  <f32> $1 = stack alloc (max_size=0)
  $2 : struct for in S block_dim=adaptive {
    <f32> $3 : stack push $1, val = $0
  }
}
)");
  EXPECT_TRUE(has(e, "`$2 : struct for in S block_dim=adaptive`, a struct for")) << e;
}

TEST(DetermineAdStackSize, IndexOfAStructForOfUnknownShapeIsAnError) {
  std::string e = size_error(R"(kernel {
  <i32> $0 = const 0
  <f32> $1 = const 1
  $2 : struct for in S block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <f32> $4 = stack alloc (max_size=0)
    $5 : for in range($0, $3) block_dim=adaptive {
      <f32> $6 : stack push $4, val = $1
    }
  }
}
)");
  EXPECT_TRUE(has(e,
                  "its bound uses the index of `$2 : struct for in S block_dim=adaptive`, struct for over 'S', "
                  "whose shape is not declared"))
      << e;
}

TEST(DetermineAdStackSize, BoundOutsideTheGrammarIsAnError) {
  std::string in = R"(field n : i32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  <*i32> $2 = global ptr [n], index [] activate=true
  <i32> $3 = global load $2
  <i32> $4 = bit_xor $3 $1
  <f32> $5 = const 1
  <f32> $6 = stack alloc (max_size=0)
  $7 : for in range($0, $4) block_dim=adaptive {
    <f32> $8 : stack push $6, val = $5
  }
  LAST
}
)";
  auto with = [&](const std::string& last) { return std::string(in).replace(in.find("  LAST\n"), 7, last); };
  std::string e = size_error(with(""));
  EXPECT_TRUE(has(e, "`$7 : for in range($0, $4) block_dim=adaptive`, whose bound is outside the size grammar")) << e;
  EXPECT_TRUE(has(e, "`<i32> $4 = bit_xor $3 $1` uses bit_xor")) << e;
  // Division and remainder are in the grammar by a positive constant only.
  std::string by_field = with("");
  by_field.replace(by_field.find("bit_xor $3 $1"), 13, "div $3 $3");
  EXPECT_TRUE(has(size_error(by_field), "divides by something other than a positive constant")) << size_error(by_field);
  std::string by_constant = with("");
  by_constant.replace(by_constant.find("bit_xor $3 $1"), 13, "floordiv $3 $1");
  EXPECT_EQ(size_error(by_constant), "<no error>");
  // A field the kernel writes cannot bound a loop: its value at the alloc may differ.
  std::string written = with("  $9 : global store [$2 <- $1]\n");
  written.replace(written.find("bit_xor $3 $1"), 13, "add $3 $1");
  EXPECT_TRUE(has(size_error(written), "reads field 'n', which the kernel writes")) << size_error(written);
}

TEST(DetermineAdStackSize, PassReportsStatistics) {
  auto k = test::parse(k91);
  passes::DetermineAdStackSizePass pass;
  auto r = pass.run(*k, passes::PassOptions{});
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.stats.at("stacks_sized"), 2);
  EXPECT_EQ(r.stats.at("constant"), 0);
  EXPECT_EQ(r.stats.at("symbolic"), 2);
  auto again = pass.run(*k, passes::PassOptions{});
  EXPECT_FALSE(again.changed);
}

}  // namespace
