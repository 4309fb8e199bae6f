// The reference interpreter: memory (locals, fields, ndarrays, atomics), loops, branches,
// continue, while control, print and assert.
#include "interp_test_util.h"

namespace pb::runtime::test {
namespace {

TEST(InterpMemory, AtomicsReturnTheOldValue) {
  auto r = run_text(R"(field c : i32[]
field old : i32[8]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 6
  <i32> $2 = const 3
  <*i32> $3 = global ptr [c], index [] activate=true
  <i32> $4 = atomic add($3, $1)
  <i32> $5 = atomic sub($3, $2)
  <i32> $6 = atomic mul($3, $1)
  <i32> $7 = atomic max($3, $1)
  <i32> $8 = atomic min($3, $2)
  <i32> $9 = atomic bit_or($3, $1)
  <i32> $10 = atomic bit_and($3, $2)
  <i32> $11 = atomic bit_xor($3, $1)
  <*i32> $20 = alloca
  <i32> $21 = atomic add($20, $2)
  <i32> $22 = atomic add($20, $2)
  <i32> $23 = local load [$20]
  print $4, " ", $5, " ", $6, " ", $7, " ", $8, " ", $9, " ", $10, " ", $11, " | ", $21, " ", $22, " ", $23
}
)");
  // c: 0 -> 6 -> 3 -> 18 -> 18 -> 3 -> 7 -> 3 -> 5
  EXPECT_EQ(r.result.printed, "0 6 3 18 18 3 7 3 | 0 3 6");
  EXPECT_EQ(r.at("c").as_i64(), 5);
}

TEST(InterpMemory, AllocaIsZeroedEachTimeItExecutes) {
  auto r = run_text(R"(field out : f32[3]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <f32> $2 = const 1.5
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : for in range($0, $1) block_dim=adaptive {
      <*f32> $6 = alloca
      <f32> $7 = local load [$6]
      <f32> $8 = add $7 $2
      $9 : local store [$6 <- $8]
      <f32> $10 = local load [$6]
      <*f32> $11 = global ptr [out], index [$4] activate=true
      <f32> $12 = atomic add($11, $10)
    }
  }
}
)");
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r.at("out", i).as_f32(), 4.5f) << i;  // 3 x 1.5, not 1.5 + 3.0 + 4.5
}

TEST(InterpMemory, OutOfBoundsIndexNamesFieldIndexAndShape) {
  std::string text = R"(field x : f32[4]
kernel "oob" {
  <i32> $1 = argload[0]
  <*f32> $2 = global ptr [x], index [$1] activate=true
  <f32> $3 = global load $2
}
)";
  std::string msg = run_error(text, {{"args", {4}}});
  EXPECT_CONTAINS(msg, "index [4] is out of bounds for field 'x' of shape [4]");
  EXPECT_CONTAINS(msg, "<*f32> $2 = global ptr [x], index [$1] activate=true");
  EXPECT_CONTAINS(msg, "kernel \"oob\"");
  EXPECT_CONTAINS(run_error(text, {{"args", {-1}}}), "index [-1] is out of bounds");
  EXPECT_EQ(run_error(text, {{"args", {3}}}), "<no error>");
}

TEST(InterpMemory, NdarrayArgumentsAndTheirGradients) {
  std::string text = R"(arg 0 : ndarray<f32, 1>
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <f32> $2 = const 2
  <*f32> $3 = argload[0]
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f32> $6 = external_ptr $3, [$5] layout=AOS is_grad=false
    <f32> $7 = global load $6
    <f32> $8 = mul $7 $2
    <*f32> $9 = external_ptr $3, [$5] layout=AOS is_grad=true
    $10 : global store [$9 <- $8]
  }
}
)";
  auto r = run_text(text, {{"args", {{{"data", {1, 2, 3}}, {"grad", {0, 0, 0}}}}}});
  ASSERT_TRUE(r.state.args[0].grad);
  EXPECT_EQ(r.state.args[0].grad->data[2].as_f32(), 6.0f);
  // A float ndarray gets a zero gradient array when the inputs give none, like a gradient field.
  auto zero = run_text(text, {{"args", {{{"data", {1, 2, 3}}}}}});
  ASSERT_TRUE(zero.state.args[0].grad);
  EXPECT_EQ(zero.state.args[0].grad->data[1].as_f32(), 4.0f);
  // An integer ndarray has no gradient array to write.
  std::string ints = text;
  for (auto [from, to] : {std::pair<std::string, std::string>{"ndarray<f32", "ndarray<i32"},
                          {"<*f32>", "<*i32>"},
                          {"<f32> $7", "<i32> $7"},
                          {"<f32> $8", "<i32> $8"},
                          {"<f32> $2 = const 2", "<i32> $2 = const 2"}})
    for (size_t at = ints.find(from); at != std::string::npos; at = ints.find(from, at))
      ints.replace(at, from.size(), to);
  EXPECT_CONTAINS(run_error(ints, {{"args", {{{"data", {1, 2, 3}}}}}}), "ndarray argument 0 has no gradient array");
}

TEST(InterpControl, NestedAndReversedLoops) {
  auto r = run_text(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  <i32> $2 = const 3
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : reversed for in range($0, $2) block_dim=adaptive {
      <i32> $6 = loop $5 index 0
      $20 : print $4, $6, " "
    }
  }
  $7 : reversed for in range($1, $2) block_dim=adaptive {
    <i32> $8 = loop $7 index 0
    $21 : print "r", $8
  }
  $9 : for in range($2, $1) block_dim=adaptive {
    $22 : print "never"
  }
}
)");
  EXPECT_EQ(r.result.printed, "02 01 00 12 11 10 r2");
}

TEST(InterpControl, StructForWalksDenseSpacesInRowMajorOrder) {
  auto r = run_text(R"(dense S : [2, 3]
dense L : [4]
field out : i32[2, 3] in S
kernel {
  <i32> $0 = const 10
  $1 : struct for in S noneblock_dim=adaptive {
    <i32> $2 = loop $1 index 0
    <i32> $3 = loop $1 index 1
    <i32> $4 = mul $2 $0
    <i32> $5 = add $4 $3
    <*i32> $6 = global ptr [out], index [$2, $3] activate=true
    $7 : global store [$6 <- $5]
    $20 : print $5, " "
  }
  $8 : struct for in L block_dim=adaptive {
    <i32> $9 = loop $8 index 0
    $21 : print $9
  }
}
)");
  EXPECT_EQ(r.result.printed, "0 1 2 10 11 12 0123");
  EXPECT_EQ(r.at("out", 4).as_i64(), 11);  // out[1, 1]
}

TEST(InterpControl, StructForOverAFieldAndSpacesFromInputs) {
  std::string text = R"(field x : f32[3]
kernel {
  $1 : struct for in x block_dim=adaptive {
    <i32> $2 = loop $1 index 0
    $20 : print $2
  }
  $3 : struct for in S1dense noneblock_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $21 : print "s", $4
  }
}
)";
  EXPECT_EQ(run_text(text, {{"spaces", {{"S1dense", {2}}}}}).result.printed, "012s0s1");
  std::string msg = run_error(text);
  EXPECT_CONTAINS(msg, "index space 'S1dense'");
  EXPECT_CONTAINS(msg, "dense S1dense : [N]");
}

TEST(InterpControl, ContinueSkipsTheRestOfTheInnermostLoopBody) {
  auto r = run_text(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 5
  <i32> $2 = const 2
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <i32> $5 = mod $4 $2
    <u1> $6 = cmp_eq $5 $0
    $7 : if $6 {
      $8 continue
    }
    print $4
  }
}
)");
  EXPECT_EQ(r.result.printed, "13");
}

TEST(InterpControl, WhileControlLeavesTheLoopWhenTheMaskBecomesZero) {
  auto r = run_text(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 1
  <i32> $2 = const 5
  <*i32> $3 = alloca
  <*i32> $4 = alloca
  $5 : local store [$4 <- $1]
  $6 : while true {
    <i32> $7 = local load [$3]
    <u1> $8 = cmp_lt $7 $2
    $9 : while control $4, $8
    <i32> $10 = add $7 $1
    $11 : local store [$3 <- $10]
    <u1> $12 = cmp_eq $7 $1
    $13 : if $12 {
      $14 continue
    }
    $20 : print $7, " "
  }
  <i32> $15 = local load [$3]
  <i32> $16 = local load [$4]
  print "end ", $15, " mask ", $16
}
)");
  EXPECT_EQ(r.result.printed, "0 2 3 4 end 5 mask 0");
}

TEST(InterpControl, WhileControlInsideANestedLoopLeavesTheWhile) {
  auto r = run_text(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 1
  <i32> $2 = const 3
  <*i32> $3 = alloca
  $4 : local store [$3 <- $1]
  $5 : while true {
    $6 : for in range($0, $2) block_dim=adaptive {
      <i32> $7 = loop $6 index 0
      <u1> $8 = cmp_lt $7 $1
      $9 : while control $3, $8
      $20 : print "i", $7
    }
    $21 : print "unreached"
  }
  print " done"
}
)");
  EXPECT_EQ(r.result.printed, "i0 done");
}

TEST(InterpControl, WhileTrueWithoutExitHitsMaxSteps) {
  RunOptions o;
  o.max_steps = 1000;
  std::string msg = run_error(
      "kernel \"spin\" {\n  $1 : while true {\n  }\n  $2 : while true {\n    <i32> $3 = const 0\n  }\n}\n", nullptr, o);
  EXPECT_CONTAINS(msg, "max_steps=1000");
  EXPECT_CONTAINS(msg, "kernel \"spin\"");
}

// Loop iterations count against the budget too: an empty body with a trip count of 2e9 ran
// unbounded before. The default budget is finite.
TEST(InterpControl, HugeTripCountHitsMaxStepsNamingTheLoop) {
  RunOptions o;
  o.max_steps = 100000;
  std::string msg = run_error(R"(kernel "big" {
  <i32> $0 = const 0
  <i32> $1 = const 2000000000
  $2 : for in range($0, $1) block_dim=adaptive {
    $3 : for in range($0, $1) block_dim=adaptive {
    }
  }
}
)",
                              nullptr, o);
  EXPECT_CONTAINS(msg, "max_steps=100000");
  EXPECT_CONTAINS(msg, "`$3 : for in range($0, $1)");
  EXPECT_CONTAINS(msg, "--max-steps");
  EXPECT_GT(RunOptions{}.max_steps, 0u);
}

TEST(InterpControl, PrintFormatsValuesLikeTheIrPrinter) {
  auto r = run_text(R"(kernel {
  <f32> $1 = const 0.5
  <i32> $2 = const -3
  <u1> $3 = const true
  <f32> $4 = const 0.1
  print "a=", $1, ", b=", $2, ", c=", $3, ", d=", $4, "\n"
}
)");
  EXPECT_EQ(r.result.printed, "a=0.5, b=-3, c=true, d=0.1\n");
}

TEST(InterpControl, FailedAssertFormatsItsMessage) {
  std::string text = R"(kernel "checked" {
  <i32> $1 = argload[0]
  <i32> $2 = const 5
  <f32> $3 = const 2.5
  <u1> $4 = cmp_lt $1 $2
  6 : assert $4, "x is %d, limit %.1f, 100%%", $1, $3
}
)";
  std::string msg = run_error(text, {{"args", {7}}});
  EXPECT_CONTAINS(msg, "assertion failed: x is 7, limit 2.5, 100%");
  EXPECT_CONTAINS(msg, "6 : assert $4");
  EXPECT_CONTAINS(msg, "kernel \"checked\"");
  EXPECT_EQ(run_error(text, {{"args", {4}}}), "<no error>");
}

// Huge field widths are clamped (a %999999999d built a gigabyte string); zero padding stays.
TEST(InterpControl, AssertMessageWidthsAreClamped) {
  std::string text = R"(kernel "wide" {
  <i32> $1 = const 7
  <u1> $2 = const false
  3 : assert $2, "[%999999999d] [%05d] [%.9999f]", $1, $1, $1
}
)";
  std::string msg = run_error(text, nullptr);
  EXPECT_CONTAINS(msg, "[" + std::string(255, ' ') + "7] [00007]");
  EXPECT_LT(msg.size(), 2000u);
}

TEST(InterpControl, AKernelThatDoesNotVerifyIsRefused) {
  std::string msg = run_error(R"(kernel {
  <f32> $1 = const 1
  <i32> $2 = const 2
  <f32> $3 = add $1 $2
}
)");
  EXPECT_CONTAINS(msg, "does not verify");
}

}  // namespace
}  // namespace pb::runtime::test
