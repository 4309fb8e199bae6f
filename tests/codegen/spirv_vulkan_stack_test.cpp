// Autodiff stacks run on the Vulkan device (vulkan_host.h) under all 16 lowerings (unoptimized and
// optimized): counts that cross ifs, `continue`, while loops and nested loops, stacks that share a
// count with a bias, generated reverse kernels, and overflows, where flag word 0 must hold the
// largest id + 1 among the stacks that overflowed (and nothing when none did).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ad_kernel_gen.h"
#include "codegen/spirv/compile.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "vulkan_host.h"

namespace pb::codegen::spirv {
namespace {

// Every lowering, with and without spirv-opt, against the reference interpreter.
void expect_matches_interpreter(const ir::Kernel& k, const runtime::State& state) {
  runtime::State want = state;
  runtime::run_kernel(k, want);
  for (const LoweringOptions& o : all_stack_lowerings()) {
    CompiledKernel ck = compile(k, o);
    for (bool optimize : {false, true}) {
      runtime::State got = state;
      std::string where = fmt::format("{}{}", lowering_name(o), optimize ? ", optimized" : "");
      test::HostRun r;
      try {
        r = test::run_on_host(k, ck, got, optimize);
      } catch (const UserError& e) {  // name the lowering the device refused, and try the others
        ADD_FAILURE() << where << ": " << e.what();
        continue;
      }
      EXPECT_EQ(r.stack_overflow, 0u) << where;
      for (const auto& [name, buf] : want.fields)
        for (size_t i = 0; i < buf.data.size(); ++i)
          ASSERT_TRUE(test::matches_reference(buf.data[i], got.fields.at(name).data[i]))
              << name << "[" << i << "]: interpreter " << buf.data[i].to_string() << ", SPIR-V "
              << got.fields.at(name).data[i].to_string() << " (" << where << ")";
    }
  }
}

runtime::State state_of(const ir::Kernel& k, const std::string& inputs) {
  return runtime::make_state(k, nlohmann::json::parse(inputs));
}

// s and t are pushed and popped alike (t holds one entry more: they share a count with biases
// 1 and 2); c records per iteration whether the if pushed twice; the if ends with `continue`.
constexpr const char* kIfContinue = R"(field x : f32[8]
field y : f32[8]
field n : i32[]
kernel "if_continue" {
  <i32> $0 = const 0
  <i32> $1 = const 8
  <i32> $2 = const 1
  <i32> $3 = const 2
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <f32> $6 = stack alloc (max_size=32)
    <f32> $7 = stack alloc (max_size=32)
    <i32> $8 = stack alloc (max_size=32)
    <*f32> $9 = global ptr [x], index [$5] activate=true
    <f32> $10 = global load $9
    <f32> $11 : stack push $6, val = $10
    <f32> $12 : stack push $7, val = $10
    <f32> $13 : stack push $7, val = $10
    <*i32> $14 = global ptr [n], index [] activate=true
    <i32> $15 = global load $14
    $16 : for in range($0, $15) block_dim=adaptive {
      <i32> $17 = loop $16 index 0
      <f32> $18 = stack load top $6
      <f32> $19 = sin $18
      <f32> $20 : stack push $6, val = $19
      <f32> $21 : stack push $7, val = $19
      <i32> $22 = bit_and $17 $2
      <u1> $23 = cmp_eq $22 $2
      $24 : if $23 {
        <f32> $25 = cos $19
        <f32> $26 : stack push $6, val = $25
        <f32> $27 : stack push $7, val = $25
        <i32> $28 : stack push $8, val = $3
        $29 continue
      }
      <i32> $30 : stack push $8, val = $2
    }
    <*f32> $31 = alloca
    $32 : reversed for in range($0, $15) block_dim=adaptive {
      <i32> $33 = stack load top $8
      <i32> $34 : stack pop $8
      <u1> $35 = cmp_eq $33 $3
      $36 : if $35 {
        <f32> $37 = stack load top $6
        <f32> $38 = stack load top $7
        <f32> $39 = local load [$31]
        <f32> $40 = add $39 $37
        <f32> $41 = add $40 $38
        <f32> $42 : local store [$31 <- $41]
        <f32> $43 : stack pop $6
        <f32> $44 : stack pop $7
      }
      <f32> $45 = stack load top $6
      <f32> $46 : stack acc adj $6, val = $45
      <f32> $47 = stack load top adj $6
      <f32> $48 = local load [$31]
      <f32> $49 = add $48 $47
      <f32> $50 : local store [$31 <- $49]
      <f32> $51 : stack pop $6
      <f32> $52 : stack pop $7
    }
    <f32> $53 = stack load top $7
    <f32> $54 : stack pop $7
    <f32> $55 = stack load top $7
    <f32> $56 = stack load top $6
    <f32> $57 = local load [$31]
    <f32> $58 = add $57 $53
    <f32> $59 = add $58 $55
    <f32> $60 = add $59 $56
    <*f32> $61 = global ptr [y], index [$5] activate=true
    $62 : global store [$61 <- $60]
  }
}
)";

TEST(StackExecution, CountsAcrossIfsAndContinue) {
  PB_REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kIfContinue, "if_continue.chi");
  for (int n : {0, 1, 5})
    expect_matches_interpreter(
        *k,
        state_of(
            *k,
            fmt::format(
                R"({{"fields": {{"n": {{"data": [{}]}}, "x": {{"data": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]}}}}}})",
                n)));
}

// A while loop pushes until its counter reaches n (while control); a reversed loop pops them.
constexpr const char* kWhile = R"(field x : f32[4]
field y : f32[4]
field n : i32[]
kernel "while_stack" {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <i32> $2 = const 1
  <f32> $3 = const 0.9
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <f32> $6 = stack alloc (max_size=16)
    <*f32> $7 = global ptr [x], index [$5] activate=true
    <f32> $8 = global load $7
    <f32> $9 : stack push $6, val = $8
    <*i32> $10 = global ptr [n], index [] activate=true
    <i32> $11 = global load $10
    <*i32> $12 = alloca
    <*i32> $13 = alloca
    <i32> $14 : local store [$13 <- $2]
    $15 : while true {
      <i32> $16 = local load [$12]
      <u1> $17 = cmp_lt $16 $11
      <i32> $18 = cast_value<i32> $17
      $19 : while control $13, $18
      <f32> $20 = stack load top $6
      <f32> $21 = mul $20 $3
      <f32> $22 : stack push $6, val = $21
      <i32> $23 = add $16 $2
      <i32> $24 : local store [$12 <- $23]
    }
    <i32> $25 = local load [$12]
    <*f32> $26 = alloca
    $27 : reversed for in range($0, $25) block_dim=adaptive {
      <f32> $28 = stack load top $6
      <f32> $29 = local load [$26]
      <f32> $30 = add $29 $28
      <f32> $31 : local store [$26 <- $30]
      <f32> $32 : stack pop $6
    }
    <f32> $33 = stack load top $6
    <f32> $34 = local load [$26]
    <f32> $35 = add $34 $33
    <*f32> $36 = global ptr [y], index [$5] activate=true
    $37 : global store [$36 <- $35]
  }
}
)";

TEST(StackExecution, CountsAcrossWhileLoops) {
  PB_REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kWhile, "while.chi");
  for (int n : {0, 3, 15})
    expect_matches_interpreter(
        *k, state_of(*k, fmt::format(R"({{"fields": {{"n": {{"data": [{}]}}, "x": {{"data": [1, 2, 3, 4]}}}}}})", n)));
}

TEST(StackExecution, GeneratedReverseKernels) {
  PB_REQUIRE_VULKAN();
  for (size_t depth : {2, 4}) {
    bench::AdWorkload shape;
    shape.depth = depth;
    auto k = ir::parse_kernel(bench::generate_ad_kernel(150, shape, true), "generated.chi");
    passes::RunOptions ro;
    ro.capture = passes::Capture::none;
    ASSERT_FALSE(passes::run_pipeline(*k, passes::parse_pipeline("reverse_ad"), ro).failed);
    runtime::State state = state_of(*k, R"({"fields": {"n": {"data": [2]}}})");
    for (auto& [name, buf] : state.fields)
      for (size_t i = 0; i < buf.data.size(); ++i)
        if (buf.dtype == ir::ScalarKind::f32)
          buf.data[i] = ir::Value::make_f32(name == "out_grad" ? 1.0f : 0.05f * static_cast<float>(i % 7) + 0.1f);
    expect_matches_interpreter(*k, state);
  }
}

// The overflow flag of each lowering: the largest id + 1 among overflowing stacks, 0 with
// bounds=off (and for every lowering when nothing overflows).
void expect_overflow_flag(const std::string& text, const std::string& inputs, uint32_t flag) {
  auto k = ir::parse_kernel(text, "overflow.chi");
  for (const LoweringOptions& o : all_stack_lowerings()) {
    CompiledKernel ck = compile(*k, o);
    for (bool optimize : {false, true}) {
      runtime::State state = state_of(*k, inputs);
      test::HostRun r = test::run_on_host(*k, ck, state, optimize);
      EXPECT_EQ(r.stack_overflow, o.bounds_check ? flag : 0u) << lowering_name(o) << (optimize ? ", optimized" : "");
    }
  }
}

// Stacks 0 (capacity a) and 1 (capacity b) are pushed alike: p times where they are allocated,
// then q times per iteration of a loop of n[] iterations, after popping once.
std::string two_stacks(int a, int b, int p, int q) {
  std::string s = fmt::format(R"(field n : i32[]
field y : f32[2]
kernel "overflow" {{
  <i32> $0 = const 0
  <i32> $1 = const 2
  <f32> $2 = const 1.5
  $3 : for in range($0, $1) block_dim=adaptive {{
    <i32> $4 = loop $3 index 0
    <f32> $5 = stack alloc (max_size={})
    <f32> $6 = stack alloc (max_size={})
)",
                              a, b);
  int id = 7;
  for (int i = 0; i < p; ++i)
    s += fmt::format("    <f32> ${} : stack push $5, val = $2\n    <f32> ${} : stack push $6, val = $2\n", id, id + 1),
        id += 2;
  s += "    <*i32> $100 = global ptr [n], index [] activate=true\n    <i32> $101 = global load $100\n";
  s += "    $102 : for in range($0, $101) block_dim=adaptive {\n";
  s += "      <f32> $103 : stack pop $5\n      <f32> $104 : stack pop $6\n";
  for (int i = 0; i < q; ++i)
    s += fmt::format("      <f32> ${} : stack push $5, val = $2\n      <f32> ${} : stack push $6, val = $2\n", id,
                     id + 1),
        id += 2;
  s +=
      "    }\n    <f32> $200 = stack load top $5\n    <f32> $201 = stack load top $6\n    <f32> $202 = add $200 $201\n";
  s += "    <*f32> $203 = global ptr [y], index [$4] activate=true\n    $204 : global store [$203 <- $202]\n  }\n}\n";
  return s;
}

TEST(StackExecution, OverflowFlagNamesTheLargestOverflowingStack) {
  PB_REQUIRE_VULKAN();
  auto n = [](int v) { return fmt::format(R"({{"fields": {{"n": {{"data": [{}]}}}}}})", v); };
  // Where the stacks are allocated (the counts are known constants).
  expect_overflow_flag(two_stacks(4, 4, 4, 0), n(0), 0);
  expect_overflow_flag(two_stacks(4, 4, 5, 0), n(0), 2);
  expect_overflow_flag(two_stacks(4, 8, 5, 0), n(0), 1);
  expect_overflow_flag(two_stacks(8, 4, 5, 0), n(0), 2);
  // In a loop: one pop and q pushes per iteration; after 1 + (q - 1) * n entries.
  expect_overflow_flag(two_stacks(4, 4, 1, 2), n(3), 0);    // at most 4 entries
  expect_overflow_flag(two_stacks(4, 4, 1, 2), n(4), 2);    // 5
  expect_overflow_flag(two_stacks(4, 8, 1, 2), n(4), 1);    // only stack 0 (capacity 4)
  expect_overflow_flag(two_stacks(4, 8, 1, 2), n(8), 2);    // both
  expect_overflow_flag(two_stacks(8, 4, 1, 3), n(2), 2);    // 5 entries: only stack 1
  expect_overflow_flag(two_stacks(2, 64, 1, 9), n(1), 1);   // 9 pushes in a row, from 0
  expect_overflow_flag(two_stacks(16, 16, 1, 9), n(1), 0);  // 9 entries fit
}

}  // namespace
}  // namespace pb::codegen::spirv
