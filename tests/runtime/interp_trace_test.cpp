// The decision trace (RunOptions::trace_decisions): runs that take the same branches hash the
// same; flipping one decision changes the hash.
#include <gtest/gtest.h>

#include "interp_test_util.h"

namespace pb::runtime::test {
namespace {

// y[] = OP applied to x[0] (and the constant 0.5 for binary ops), as `$3`.
std::string kernel(const std::string& op_lines) {
  return "field x : f32[1]\nfield y : f32[]\nkernel {\n"
         "  <i32> $0 = const 0\n"
         "  <*f32> $1 = global ptr [x], index [$0] activate=true\n"
         "  <f32> $2 = global load $1\n"
         "  <f32> $10 = const 0.5\n" +
         op_lines +
         "  <*f32> $4 = global ptr [y], index [] activate=true\n"
         "  $5 : global store [$4 <- $3]\n"
         "}\n";
}

struct Trace {
  uint64_t hash;
  uint64_t count;
  bool operator==(const Trace&) const = default;
};

Trace trace(const std::string& text, double x) {
  RunOptions o;
  o.trace_decisions = true;
  auto r = run_text(text, {{"fields", {{"x", {{"data", {x}}}}}}}, o);
  return {r.result.decision_hash, r.result.decisions};
}

struct Case {
  const char* name;
  std::string ops;
  double same_a, same_b;  // two inputs on the same side of every decision
  double other;           // an input on the other side of one decision
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class DecisionTraceTest : public testing::TestWithParam<Case> {};

TEST_P(DecisionTraceTest, SameSideSameHashOtherSideDifferent) {
  const Case& c = GetParam();
  std::string text = kernel(c.ops);
  Trace a = trace(text, c.same_a), b = trace(text, c.same_b), other = trace(text, c.other);
  EXPECT_GT(a.count, 0u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.hash, other.hash);
}

INSTANTIATE_TEST_SUITE_P(
    Decisions, DecisionTraceTest,
    testing::Values(
        Case{"select_flip", "  <u1> $11 = cmp_gt $2 $10\n  <f32> $12 = mul $2 $2\n  <f32> $3 = select($11, $2, $12)\n",
             0.6, 0.9, 0.4},
        Case{"max_side", "  <f32> $3 = max $2 $10\n", 0.7, 3, 0.2},
        Case{"min_side", "  <f32> $3 = min $2 $10\n", -1, 0.1, 0.6},
        Case{"abs_sign", "  <f32> $3 = abs $2\n", 1, 2, -1}, Case{"abs_at_zero", "  <f32> $3 = abs $2\n", 1e-9, 3, 0},
        Case{"sgn_sign", "  <f32> $3 = sgn $2\n", -1, -2, 1},
        Case{"floor_result", "  <f32> $3 = floor $2\n", 1.1, 1.9, 2.1},
        Case{"round_result", "  <f32> $3 = round $2\n", 1.6, 2.4, 2.6},
        Case{"float_to_int", "  <i32> $11 = cast_value<i32> $2\n  <f32> $3 = cast_value<f32> $11\n", 3.2, 3.9, 4.1},
        Case{"float_floordiv", "  <f32> $3 = floordiv $2 $10\n", 1.1, 1.4, 1.6},
        Case{"float_mod", "  <f32> $3 = mod $2 $10\n", 1.1, 1.4, 1.6},
        Case{"if_condition",
             "  <u1> $11 = cmp_lt $2 $10\n  $12 : if $11 {\n    <*f32> $13 = global ptr [y], index [] activate=true\n"
             "    $14 : global store [$13 <- $2]\n  }\n  <f32> $3 = add $2 $2\n",
             0.1, 0.2, 0.8}),
    [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(DecisionTrace, LoopTripCountIsADecision) {
  auto text =
      "field y : f32[]\nkernel {\n"
      "  <i32> $0 = const 0\n"
      "  <i32> $1 = argload[0]\n"
      "  <*f32> $2 = global ptr [y], index [] activate=true\n"
      "  <f32> $3 = const 1\n"
      "  $4 : for in range($0, $1) block_dim=adaptive {\n"
      "    <i32> $5 = loop $4 index 0\n"
      "    <f32> $6 = atomic add($2, $3)\n"
      "  }\n"
      "}\n";
  auto trips = [&](int n) {
    RunOptions o;
    o.trace_decisions = true;
    auto r = run_text(text, {{"args", {n}}}, o);
    return Trace{r.result.decision_hash, r.result.decisions};
  };
  EXPECT_EQ(trips(3), trips(3));
  EXPECT_EQ(trips(3).count, 1u);
  EXPECT_NE(trips(3).hash, trips(4).hash);
}

TEST(DecisionTrace, OffByDefault) {
  auto r = run_text(kernel("  <f32> $3 = abs $2\n"), {{"fields", {{"x", {{"data", {-1}}}}}}});
  EXPECT_EQ(r.result.decision_hash, 0u);
  EXPECT_EQ(r.result.decisions, 0u);
}

TEST(DecisionTrace, SmoothArithmeticRecordsNothing) {
  std::string text = kernel("  <f32> $11 = mul $2 $10\n  <f32> $12 = sin $11\n  <f32> $3 = add $12 $2\n");
  EXPECT_EQ(trace(text, 0.3).count, 0u);
  EXPECT_EQ(trace(text, -5), trace(text, 7));
}

}  // namespace
}  // namespace pb::runtime::test
