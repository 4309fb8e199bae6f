// simplify: statistics, rounds and CSE scoping on a generated kernel. The IR-in/IR-out cases, one
// rewrite each, are in tests/passes/simplify.chi (FileCheck).
#include "passes/simplify.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

using namespace pb;

namespace {

std::string store_of(const std::string& type, const std::string& body, const std::string& result) {
  return "field y : " + type + "[]\nkernel {\n" + body + "  <*" + type +
         "> $90 = global ptr [y], index [] activate=true\n  $91 : global store [$90 <- " + result + "]\n}\n";
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

// A call may write a variable passed to it by `ref`: the value stored before the call is not
// forwarded to a load after it.
TEST(Simplify, ALoadAfterACallIsNotForwardedFromAStoreBeforeIt) {
  auto k = test::parse(store_of("i32",
                                "  <*i32> $0 = alloca\n  <i32> $1 = const 7\n  <i32> $2 : local store [$0 <- $1]\n"
                                "  <*i32> $3 = ref($0)\n  <i32> $4 = call \"f\", args = {$3}\n"
                                "  <i32> $5 = local load [$0]\n",
                                "$5"));
  passes::simplify(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_NE(test::print(*k).find("= local load [$0]"), std::string::npos) << test::print(*k);
}
