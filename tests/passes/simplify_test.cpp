// simplify: IR in, IR out, one rewrite per test.
#include "passes/simplify.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/dce.h"

using namespace pb;

namespace {

// simplify then dce, so the expected text shows only what survives.
std::string cleanup(const std::string& in) {
  auto k = test::parse(in);
  passes::simplify(*k);
  EXPECT_EQ(test::verify_text(*k), "") << test::print(*k);
  passes::eliminate_dead_code(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  return test::print(*k);
}

std::string store_of(const std::string& type, const std::string& body, const std::string& result) {
  return "field y : " + type + "[]\nkernel {\n" + body + "  <*" + type +
         "> $90 = global ptr [y], index [] activate=true\n  $91 : global store [$90 <- " + result + "]\n}\n";
}

TEST(Simplify, FoldsFloatArithmeticInF32) {
  auto out = cleanup(store_of("f32", "  <f32> $0 = const 0.1\n  <f32> $1 = const 0.2\n  <f32> $2 = add $0 $1\n", "$2"));
  // 0.1f + 0.2f rounds to 0.3f exactly in f32 (not the f64 0.30000000000000004).
  EXPECT_NE(out.find("= const 0.3\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("add"), std::string::npos);
}

TEST(Simplify, FoldsIntegerWrapAround) {
  auto out =
      cleanup(store_of("i32", "  <i32> $0 = const 2147483647\n  <i32> $1 = const 1\n  <i32> $2 = add $0 $1\n", "$2"));
  EXPECT_NE(out.find("= const -2147483648\n"), std::string::npos) << out;
}

TEST(Simplify, LeavesIntegerDivisionByZero) {
  auto out = cleanup(store_of("i32", "  <i32> $0 = const 7\n  <i32> $1 = const 0\n  <i32> $2 = div $0 $1\n", "$2"));
  EXPECT_NE(out.find("div"), std::string::npos) << out;
}

TEST(Simplify, FoldsUnaryCastsAndComparisons) {
  auto out = cleanup(store_of("i32",
                              "  <f32> $0 = const -2.7\n  <i32> $1 = cast_value<i32> $0\n  <f32> $2 = abs $0\n  <u1> "
                              "$3 = cmp_lt $0 $2\n  <i32> $4 = cast_value<i32> $3\n  <i32> $5 = add $1 $4\n",
                              "$5"));
  EXPECT_NE(out.find("= const -1\n"), std::string::npos) << out;  // -2 + 1
}

TEST(Simplify, ExactFloatIdentities) {
  auto out = cleanup(store_of(
      "f32",
      "  <*f32> $0 = global ptr [y], index [] activate=true\n  <f32> $1 = global load $0\n  <f32> $2 = const 1\n"
      "  <f32> $3 = mul $1 $2\n  <f32> $4 = const -0.0\n  <f32> $5 = add $3 $4\n  <f32> $6 = const 0\n  <f32> $7 = sub "
      "$5 $6\n"
      "  <f32> $8 = div $7 $2\n",
      "$8"));
  EXPECT_NE(out.find("$91 : global store [$0 <- $1]"), std::string::npos) << out;
}

TEST(Simplify, InexactFloatIdentitiesAreLeft) {
  // x + 0.0 is -0 -> +0 and x * 0 is NaN/inf-sensitive: neither may be simplified for floats.
  auto out = cleanup(store_of(
      "f32",
      "  <*f32> $0 = global ptr [y], index [] activate=true\n  <f32> $1 = global load $0\n  <f32> $2 = const 0\n"
      "  <f32> $3 = add $1 $2\n  <f32> $4 = mul $3 $2\n  <f32> $5 = sub $4 $4\n",
      "$5"));
  EXPECT_NE(out.find("add $1"), std::string::npos) << out;
  EXPECT_NE(out.find("mul $3"), std::string::npos) << out;
  EXPECT_NE(out.find("sub $4 $4"), std::string::npos) << out;
}

TEST(Simplify, IntegerIdentities) {
  auto out = cleanup(store_of(
      "i32",
      "  <*i32> $0 = global ptr [y], index [] activate=true\n  <i32> $1 = global load $0\n  <i32> $2 = const 0\n"
      "  <i32> $3 = add $1 $2\n  <i32> $4 = sub $3 $3\n  <i32> $5 = mul $1 $2\n  <i32> $6 = bit_or $1 $2\n"
      "  <i32> $7 = bit_xor $6 $6\n  <i32> $8 = add $4 $5\n  <i32> $9 = add $8 $7\n  <i32> $10 = bit_and $1 $1\n  "
      "<i32> $11 = add $9 $10\n",
      "$11"));
  EXPECT_NE(out.find("$91 : global store [$0 <- $1]"), std::string::npos) << out;
}

TEST(Simplify, NegNegSameTypeCastSelectSameArms) {
  auto out = cleanup(store_of(
      "f32",
      "  <*f32> $0 = global ptr [y], index [] activate=true\n  <f32> $1 = global load $0\n  <f32> $2 = neg $1\n"
      "  <f32> $3 = neg $2\n  <f32> $4 = cast_value<f32> $3\n  <u1> $5 = cmp_lt $1 $4\n  <f32> $6 = select($5, $4, "
      "$4)\n",
      "$6"));
  EXPECT_NE(out.find("$91 : global store [$0 <- $1]"), std::string::npos) << out;
}

TEST(Simplify, FoldsIfAndSelectOnConstants) {
  auto out = cleanup(R"(field y : i32[]
kernel {
  <i32> $0 = const 1
  <i32> $1 = const 2
  <u1> $2 = cmp_lt $0 $1
  <*i32> $3 = global ptr [y], index [] activate=true
  $4 : if $2 {
    $5 : global store [$3 <- $0]
  } else {
    $6 : global store [$3 <- $1]
  }
  <i32> $7 = select($2, $1, $0)
  <i32> $8 = atomic add($3, $7)
}
)");
  EXPECT_EQ(out, R"(field y : i32[]
kernel {
  <i32> $0 = const 1
  <i32> $1 = const 2
  <*i32> $3 = global ptr [y], index [] activate=true
  $5 : global store [$3 <- $0]
  <i32> $8 = atomic add($3, $1)
}
)");
}

TEST(Simplify, CseWithinABlockAndFromEnclosingBlocks) {
  auto out = cleanup(R"(field x : f32[4]
field y : f32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <f32> $2 = const 2
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <*f32> $5 = global ptr [x], index [$4] activate=true
    <f32> $6 = global load $5
    <*f32> $7 = global ptr [x], index [$4] activate=true
    <f32> $8 = global load $7
    <f32> $9 = mul $6 $8
    <f32> $10 = const 2
    <f32> $11 = mul $9 $10
    <f32> $12 = mul $9 $2
    <f32> $13 = add $11 $12
    <*f32> $14 = global ptr [y], index [$4] activate=true
    $15 : global store [$14 <- $13]
  }
}
)");
  // The second pointer and the duplicate constant merge; loads are never merged.
  EXPECT_EQ(out.find("$7 = global ptr"), std::string::npos) << out;
  EXPECT_EQ(out.find("$10 = const"), std::string::npos) << out;
  EXPECT_EQ(out.find("$12 = mul"), std::string::npos) << out;
  EXPECT_NE(out.find("$8 = global load $5"), std::string::npos) << out;
  EXPECT_NE(out.find("$13 = add $11 $11"), std::string::npos) << out;
}

TEST(Simplify, CseDoesNotLeakOutOfABlock) {
  const char* in = R"(field y : i32[]
kernel {
  <*i32> $0 = global ptr [y], index [] activate=true
  <i32> $1 = global load $0
  <u1> $2 = cast_value<u1> $1
  $3 : if $2 {
    <i32> $4 = add $1 $1
    $5 : global store [$0 <- $4]
  }
  <i32> $6 = add $1 $1
  <i32> $7 = atomic add($0, $6)
}
)";
  auto out = cleanup(in);
  EXPECT_NE(out.find("$6 = add $1 $1"), std::string::npos) << out;
}

// The CSE table starts small, grows while an inner block is open, and undoes the inner block's
// entries when it closes: what the enclosing block made available must still be found, and
// nothing from a closed block may be.
TEST(Simplify, CseScopesStayExactWhileTheTableGrows) {
  constexpr int kChain = 3000;  // distinct keys in each branch: the table grows several times
  std::string text = "field y : f32[]\nkernel {\n";
  text += "  <*f32> $0 = global ptr [y], index [] activate=true\n  <f32> $1 = global load $0\n";
  text += "  <f32> $2 = mul $1 $1\n  <u1> $3 = cmp_lt $1 $2\n";
  int id = 10;
  for (int branch = 0; branch < 2; ++branch) {
    text += "  $" + std::to_string(id++) + " : if $3 {\n";
    int prev = 1;
    for (int i = 0; i < kChain; ++i) {
      text += "    <f32> $" + std::to_string(id) + " = add $" + std::to_string(prev) + " $1\n";
      prev = id++;
    }
    text += "    <f32> $" + std::to_string(id++) + " = mul $1 $1\n";  // same as $2: merges
    text += "    $" + std::to_string(id++) + " : global store [$0 <- $" + std::to_string(prev) + "]\n  }\n";
  }
  int again = id;
  text += "  <f32> $" + std::to_string(id++) + " = add $1 $1\n";  // first link of both chains: must stay
  text += "  <f32> $" + std::to_string(id++) + " = mul $1 $1\n";  // same as $2: merges
  text +=
      "  <f32> $" + std::to_string(id) + " = add $" + std::to_string(again) + " $" + std::to_string(again + 1) + "\n";
  text += "  <*f32> $" + std::to_string(id + 1) + " = global ptr [y], index [] activate=true\n";  // the first entry
  text += "  $" + std::to_string(id + 2) + " : global store [$" + std::to_string(id + 1) + " <- $" +
          std::to_string(id) + "]\n}\n";
  auto k = test::parse(text);
  auto r = passes::simplify(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_EQ(r.cse, 4);  // three copies of `mul $1 $1` and the pointer; neither chain merges with the other
  std::string out = test::print(*k);
  EXPECT_NE(out.find("$" + std::to_string(again) + " = add $1 $1\n"), std::string::npos);
  EXPECT_EQ(out.find("$" + std::to_string(again + 1) + " = mul"), std::string::npos);
}

TEST(Simplify, ForwardsStoresToLoadsInABlock) {
  auto out = cleanup(store_of("f32",
                              "  <f32> $0 = const 3\n  <*f32> $1 = alloca\n  <f32> $2 = local load [$1]\n  <f32> $3 : "
                              "local store [$1 <- $0]\n  <f32> $4 = local load [$1]\n  <f32> $5 = add $2 $4\n",
                              "$5"));
  // The first load reads the alloca's zero, the second the stored 3: the sum folds to 3.
  EXPECT_EQ(out,
            "field y : f32[]\nkernel {\n  <f32> $0 = const 3\n  <*f32> $90 = global ptr [y], index [] activate=true\n  "
            "$91 : global store [$90 <- $0]\n}\n");
}

TEST(Simplify, ForwardingStopsAtANestedStoreAndAtLoopHeads) {
  const char* in = R"(field y : f32[]
kernel {
  <f32> $0 = const 3
  <i32> $1 = const 0
  <i32> $2 = const 4
  <*f32> $3 = alloca
  <f32> $4 : local store [$3 <- $0]
  $5 : for in range($1, $2) block_dim=adaptive {
    <f32> $6 = local load [$3]
    <f32> $7 = add $6 $0
    <f32> $8 : local store [$3 <- $7]
  }
  <f32> $9 = local load [$3]
  <*f32> $10 = global ptr [y], index [] activate=true
  $11 : global store [$10 <- $9]
}
)";
  EXPECT_EQ(cleanup(in), in);
}

TEST(Simplify, ReachesAFixedPoint) {
  auto k = test::parse(store_of("i32",
                                "  <i32> $0 = const 5\n  <i32> $1 = const 0\n  <i32> $2 = mul $0 $1\n  <u1> $3 = "
                                "cmp_eq $2 $1\n  <i32> $4 = select($3, $0, $1)\n",
                                "$4"));
  auto r = passes::simplify(*k);
  EXPECT_TRUE(r.changed());
  // Folds feed each other within the round; with no `if` folded inside a container, one round
  // is the fixed point (fixtures/passes/simplify_fixed_point_rounds needs two).
  EXPECT_EQ(r.rounds, 1);
  auto again = passes::simplify(*k);
  EXPECT_FALSE(again.changed());
  EXPECT_EQ(again.rounds, 1);
}

}  // namespace
