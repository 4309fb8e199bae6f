// determine_ad_stack_size against the interpreter: with static bounds the size is exactly the
// deepest depth a run reaches; a symbolic size is evaluated when the alloc runs, so it follows
// the field and argument values of each run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/diagnostic.h"
#include "pass_test_util.h"
#include "passes/determine_ad_stack_size.h"
#include "runtime/interp/interpreter.h"

using namespace pb;

namespace {

struct Sized {
  std::unique_ptr<ir::Kernel> kernel;
  passes::AdStackSizeResult sizes;
  runtime::RunResult run;
};

Sized size_and_run(const std::string& text, const nlohmann::json& inputs = nullptr) {
  Sized s;
  s.kernel = test::parse(text);
  s.sizes = passes::determine_ad_stack_sizes(*s.kernel);
  auto state = runtime::make_state(*s.kernel, inputs);
  s.run = runtime::run_kernel(*s.kernel, state);
  return s;
}

std::string nest(int outer, int inner) {
  return "kernel {\n  <i32> $0 = const 0\n  <i32> $1 = const " + std::to_string(outer) + "\n  <i32> $2 = const " +
         std::to_string(inner) + R"(
  <f32> $3 = const 1
  <f32> $4 = stack alloc (max_size=0)
  <f32> $5 : stack push $4, val = $3
  $6 : for in range($0, $1) block_dim=adaptive {
    $7 : for in range($0, $2) block_dim=adaptive {
      <f32> $8 : stack push $4, val = $3
      <f32> $9 : stack push $4, val = $3
      <f32> $10 : stack pop $4
    }
  }
  $11 : reversed for in range($0, $1) block_dim=adaptive {
    $12 : reversed for in range($0, $2) block_dim=adaptive {
      <f32> $13 : stack pop $4
    }
  }
  $14 : for in range($0, $2) block_dim=adaptive {
    <f32> $15 : stack push $4, val = $3
    <f32> $16 : stack pop $4
  }
}
)";
}

// The alloc runs once per cell of S and per i; the inner loop pushes i + cell times.
const char* kEnclosed = R"(dense S : [4]
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
)";

TEST(DetermineAdStackSizeRun, StaticBoundsGiveExactlyTheDeepestDepth) {
  for (const std::string& text : {nest(3, 4), nest(1, 1), nest(5, 2), nest(0, 3), std::string(kEnclosed)}) {
    auto s = size_and_run(text);
    ASSERT_EQ(s.sizes.constant, 1) << text;
    ASSERT_FALSE(s.run.max_stack_depth.empty()) << text;
    for (const auto& [id, depth] : s.run.max_stack_depth) {
      int64_t max_size = s.run.stack_capacity.at(id);
      // nest(o, i): 1 + o*i entries plus one transient push in the last iteration.
      EXPECT_EQ(max_size, std::max<int64_t>(depth, 1)) << text;
    }
  }
}

const char* kFieldBound = R"(field n : i32[]
kernel {
  <i32> $0 = const 0
  <f32> $1 = const 0
  <f32> $2 = stack alloc (max_size=0)
  <f32> $3 : stack push $2, val = $1
  <f32> $4 : stack push $2, val = $1
  <*i32> $5 = global ptr [n], index [] activate=true
  <i32> $6 = global load $5
  $7 : for in range($0, $6) block_dim=adaptive {
    <f32> $8 : stack push $2, val = $1
  }
  $9 : reversed for in range($0, $6) block_dim=adaptive {
    <f32> $10 : stack pop $2
  }
}
)";

nlohmann::json with_n(int n) { return {{"fields", {{"n", {{"data", {n}}}}}}}; }

TEST(DetermineAdStackSizeRun, SymbolicSizeFollowsTheFieldOfEachRun) {
  for (int n : {0, 3, 7}) {
    auto s = size_and_run(kFieldBound, with_n(n));
    ASSERT_EQ(s.sizes.bounds.at(0).bound, "size=2 + n[]");
    EXPECT_EQ(s.run.stack_capacity.at(2), 2 + n);
    EXPECT_EQ(s.run.max_stack_depth.at(2), 2 + n);
  }
}

// Parses and runs `text`, which must fail with a user error: its message and remedy.
struct RunError {
  std::string message;
  std::string remedy;
};
RunError run_error(const std::string& text, const nlohmann::json& inputs) {
  auto k = test::parse(text);
  auto state = runtime::make_state(*k, inputs);
  try {
    runtime::run_kernel(*k, state);
  } catch (const UserError& e) {
    return {e.what(), e.diagnostic().remedy};
  }
  ADD_FAILURE() << "the run did not fail";
  return {};
}

TEST(DetermineAdStackSizeRun, OverflowNamesTheEvaluatedSize) {
  std::string text = kFieldBound;
  text.replace(text.find("(max_size=0)"), 12, "(max_size=0, size=n[])");
  RunError e = run_error(text, with_n(3));
  EXPECT_NE(e.message.find("autodiff stack overflow: stack $2"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("exceeded max_size=0, size n[] evaluated to 3 at the stack alloc"), std::string::npos)
      << e.message;
  // A size that evaluates below 1 still holds one entry.
  text.replace(text.find("size=n[]"), 8, "size=n[] - 9");
  e = run_error(text, with_n(3));
  EXPECT_NE(e.message.find("evaluated to 1"), std::string::npos) << e.message;
}

TEST(DetermineAdStackSizeRun, SizeReadingPastAFieldNamesTheStackAndTheRemedy) {
  std::string text = kFieldBound;
  text.replace(text.find("(max_size=0)"), 12, "(max_size=0, size=max(i in range(0, 3): m[i]))");
  text.insert(0, "field m : i32[2]\n");
  RunError e = run_error(text, {{"fields", {{"n", {{"data", {1}}}}, {"m", {{"data", {1, 1}}}}}}});
  EXPECT_NE(e.message.find("cannot evaluate the size of stack $2"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("index 2 is out of bounds for axis 0 of field 'm'"), std::string::npos) << e.message;
  EXPECT_NE(e.remedy.find("ad_stack_size=N"), std::string::npos) << e.remedy;
}

TEST(DetermineAdStackSizeRun, UnsizedStacksCanRunUnlimitedToMeasureDepth) {
  auto k = test::parse(kFieldBound);
  auto state = runtime::make_state(*k, with_n(5));
  EXPECT_THROW(runtime::run_kernel(*k, state), UserError);
  runtime::RunOptions o;
  o.unsized_stacks_unlimited = true;
  auto r = runtime::run_kernel(*k, state, o);
  EXPECT_EQ(r.max_stack_depth.at(2), 7);
  EXPECT_EQ(r.stack_capacity.at(2), 0);
}

}  // namespace
