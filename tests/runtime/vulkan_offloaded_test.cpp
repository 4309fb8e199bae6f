// Kernels in the offloaded stage on the Vulkan runtime (lavapipe here and in CI) give the
// interpreter's fields: the dense SNode access chain, global temporaries (atomics on them and
// range_for bounds read from them), a bound computed by an earlier task, the loop's linear
// index, thread-local reductions through tls prologue and epilogue, and struct_for over a
// declared dense space; each with one workgroup (a grid stride), three, and one per iteration.
// Kernels the offload and lower_access passes produce match the interpreter run of the kernel
// before them. Tests skip, saying why, only when there is no Vulkan device.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codegen/spirv/options.h"
#include "ir/parser.h"
#include "kernel_gen.h"
#include "offloaded_kernels.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "runtime/vulkan/run.h"
#include "vulkan_test_util.h"

namespace pb::runtime::vulkan {
namespace {

using test::device;
using test::expect_same;

// b[i] = a[i]^2 through the access chain; tmp0 = sum of i (atomics); a serial task derives the
// next loop's end from it with bit_extract and an integer offset; that loop writes d[i] = i
// through its linear index.
constexpr const char* kChain = R"(field a : f32[1000]
field b : f32[1000]
field c : i32[2]
field d : i32[200]
kernel "chain" {
  $0 = offloaded range_for(0, 1000) grid_dim=0 block_dim=128
  body {
    <i32> $1 = loop $0 index 0
    <*gen> $2 = get root nullptr
    <i32> $3 = linearized(ind {$1}, stride {1000})
    <*gen> $4 = [S1dense][dense]::lookup($2, $3) activate = false
    <*f32> $5 = get child [S1dense->a] $4
    <f32> $6 = global load $5
    <f32> $7 = mul $6 $6
    <*f32> $8 = get child [S1dense->b] $4
    $9 : global store [$8 <- $7]
    <*i32> $10 = global tmp var (offset = 0 B)
    <i32> $11 = atomic add($10, $1)
  }
  $12 = offloaded
  body {
    <*i32> $13 = global tmp var (offset = 0 B)
    <i32> $14 = global load $13
    <i32> $15 = bit_extract($14) bit_range=[4, 10)
    <i32> $16 = offset $15 + 100
    <*i32> $17 = global tmp var (offset = 4 B)
    $18 : global store [$17 <- $16]
    <i32> $19 = const 0
    <*i32> $20 = global ptr [c], index [$19] activate=true
    $21 : global store [$20 <- $14]
    <i32> $22 = const 1
    <*i32> $23 = global ptr [c], index [$22] activate=true
    $24 : global store [$23 <- $16]
  }
  $25 = offloaded range_for(0, tmp(offset=4B)) grid_dim=0 block_dim=64
  body {
    <i32> $26 = loop $25 index linear
    <*i32> $27 = global ptr [d], index [$26] activate=true
    $28 : global store [$27 <- $26]
  }
  $29 = offloaded listgen S0root->S1dense
  $30 = offloaded garbage collect S1dense
}
)";

// A range_for whose bounds are values of an earlier serial task (an argument plus a constant).
constexpr const char* kOperandBound = R"(arg 0 : i32
field d : i32[64]
kernel "operand_bound" {
  $0 = offloaded
  body {
    <i32> $1 = const 40
    <i32> $2 = argload[0]
    <i32> $3 = add $1 $2
  }
  $4 = offloaded range_for($2, $3) grid_dim=0 block_dim=8
  body {
    <i32> $5 = loop $4 index 0
    <*i32> $6 = global ptr [d], index [$5] activate=true
    <i32> $7 = mul $5 $5
    $8 : global store [$6 <- $7]
  }
}
)";

// Field values: element i of every float field is (i % 17) * 0.25 - 1, of every int field i % 5.
State inputs_of(const ir::Kernel& k, const nlohmann::json& extra = nlohmann::json::object()) {
  State s = make_state(k, extra);
  for (auto& [name, buf] : s.fields)
    for (size_t i = 0; i < buf.data.size(); ++i)
      buf.data[i] = ir::is_float(buf.dtype) ? ir::Value::make_f32(static_cast<float>(i % 17) * 0.25f - 1.0f)
                                            : ir::Value::make_i32(static_cast<int32_t>(i % 5));
  return s;
}

// Runs `k` on the interpreter and on Vulkan with 1, 3 and 65535 workgroups at most; the fields
// must match. `reference`: the kernel the interpreter runs (default: `k` itself).
void expect_matches_interpreter(const ir::Kernel& k, const State& state, const ir::Kernel* reference = nullptr) {
  State want = state;
  run_kernel(reference ? *reference : k, want);
  for (uint32_t groups : {1u, 3u, 65535u}) {
    State got = state;
    LaunchOptions lo;
    lo.max_workgroups = groups;
    run_kernel(*device(), k, got, {}, lo);
    EXPECT_GT(expect_same(want, got, fmt::format("{}, at most {} workgroups", k.name, groups)), 0u);
  }
}

TEST(VulkanOffloaded, AccessChainTemporariesAndBoundsFromTemporariesMatchTheInterpreter) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kChain, "chain.chi");
  State state = inputs_of(*k);
  expect_matches_interpreter(*k, state);
  State got = state;
  run_kernel(*device(), *k, got);
  EXPECT_EQ(got.fields.at("c").data[0].as_i64(), 499500);  // sum of 0..999
  EXPECT_EQ(got.fields.at("c").data[1].as_i64(), ((499500 >> 4) & 63) + 100);
}

TEST(VulkanOffloaded, ThreadLocalReductionsMatchTheInterpreterWithAnyNumberOfInvocations) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(pb::test::kThreadLocal, "thread_local.chi");
  State state = inputs_of(*k);
  expect_matches_interpreter(*k, state);
  State got = state;
  run_kernel(*device(), *k, got);
  EXPECT_EQ(got.fields.at("total").data[0].as_i64(), 499500);
  EXPECT_EQ(got.fields.at("top").data[0].as_f64(), 3.0);
}

TEST(VulkanOffloaded, ABoundComputedByAnEarlierTaskMatchesTheInterpreter) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kOperandBound, "operand_bound.chi");
  State state = inputs_of(*k, {{"args", {7}}});
  expect_matches_interpreter(*k, state);
  State got = state;
  run_kernel(*device(), *k, got);
  EXPECT_EQ(got.fields.at("d").data[46].as_i64(), 46 * 46);
  EXPECT_EQ(got.fields.at("d").data[47].as_i64(), 47 % 5);  // past the end: untouched
}

std::unique_ptr<ir::Kernel> after(const ir::Kernel& k, const std::string& pipeline) {
  auto out = k.clone();
  passes::RunOptions ro;
  ro.capture = passes::Capture::none;
  EXPECT_FALSE(passes::run_pipeline(*out, passes::parse_pipeline(pipeline), ro).failed) << pipeline;
  return out;
}

// A struct for over a declared 2-D space, a range for with bounds from an argument and a field,
// and values crossing the loops: offloading adds global temporaries, lower_access the chain.
constexpr const char* kBeforeOffload = R"(dense S : [24, 20]
arg 0 : i32
field a : f32[24, 20] in S
field n : i32[]
field total : f32[]
field y : i32[64]
kernel "before_offload" {
  $0 : struct for in S block_dim=adaptive {
    <i32> $1 = loop $0 index 0
    <i32> $2 = loop $0 index 1
    <*f32> $3 = global ptr [a], index [$1, $2] activate=true
    <f32> $4 = global load $3
    <f32> $5 = mul $4 $4
    $6 : global store [$3 <- $5]
    <*f32> $7 = global ptr [total], index [] activate=true
    <f32> $8 = atomic add($7, $5)
  }
  <i32> $9 = argload[0]
  <*i32> $10 = global ptr [n], index [] activate=true
  <i32> $11 = global load $10
  <i32> $12 = add $9 $11
  $13 : for in range($9, $12) block_dim=adaptive {
    <i32> $14 = loop $13 index 0
    <*i32> $15 = global ptr [y], index [$14] activate=true
    <i32> $16 = mul $14 $12
    $17 : global store [$15 <- $16]
  }
}
)";

TEST(VulkanOffloaded, KernelsTheOffloadAndLowerAccessPassesProduceMatchTheInterpreter) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kBeforeOffload, "before_offload.chi");
  State state = inputs_of(*k, {{"args", {5}}});
  state.fields.at("n").data[0] = ir::Value::make_i32(30);
  for (const char* pipeline : {"offload", "offload,lower_access", "offload,demote_atomics,lower_access"}) {
    SCOPED_TRACE(pipeline);
    auto offloaded = after(*k, pipeline);
    expect_matches_interpreter(*offloaded, state, k.get());
  }
}

// f64 and i64 global temporaries, with atomics on them, in aligned word pairs of temps.
constexpr const char* kWideTemporaries = R"(field x : f64[300]
field s : f64[]
field m : i64[]
kernel "wide_temporaries" {
  $0 = offloaded
  body {
    <*f64> $1 = global ptr [s], index [] activate=true
    <f64> $2 = global load $1
    <f64> $3 = const 2.5
    <f64> $4 = mul $2 $3
    <*f64> $5 = global tmp var (offset = 8 B)
    $6 : global store [$5 <- $4]
    <*i32> $7 = global tmp var (offset = 0 B)
    <i32> $8 = const 300
    $9 : global store [$7 <- $8]
  }
  $10 = offloaded range_for(0, tmp(offset=0B)) grid_dim=0 block_dim=16
  body {
    <i32> $11 = loop $10 index 0
    <*f64> $12 = global ptr [x], index [$11] activate=true
    <f64> $13 = global load $12
    <*f64> $14 = global tmp var (offset = 8 B)
    <f64> $15 = atomic add($14, $13)
    <*i64> $16 = global tmp var (offset = 16 B)
    <i64> $17 = cast_value<i64> $11
    <i64> $18 = atomic max($16, $17)
  }
  $19 = offloaded
  body {
    <*f64> $20 = global tmp var (offset = 8 B)
    <f64> $21 = global load $20
    <*f64> $22 = global ptr [s], index [] activate=true
    $23 : global store [$22 <- $21]
    <*i64> $24 = global tmp var (offset = 16 B)
    <i64> $25 = global load $24
    <*i64> $26 = global ptr [m], index [] activate=true
    $27 : global store [$26 <- $25]
  }
}
)";

// Field values for 64-bit kinds: x[i] = (i % 17) * 0.25 - 1, s = 1.25.
State wide_inputs(const ir::Kernel& k) {
  State s = make_state(k, nlohmann::json::object());
  for (auto& [name, buf] : s.fields)
    for (size_t i = 0; i < buf.data.size(); ++i)
      buf.data[i] = ir::is_float(buf.dtype) ? ir::Value::make_f64(static_cast<double>(i % 17) * 0.25 - 1.0)
                                            : ir::Value::make_i64(static_cast<int64_t>(i % 5));
  s.fields.at("s").data[0] = ir::Value::make_f64(1.25);
  return s;
}

TEST(VulkanOffloaded, SixtyFourBitTemporariesAndTheirAtomicsMatchTheInterpreter) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kWideTemporaries, "wide.chi");
  State state = wide_inputs(*k);
  expect_matches_interpreter(*k, state);
  State got = state;
  run_kernel(*device(), *k, got);
  EXPECT_EQ(got.fields.at("m").data[0].as_i64(), 299);
}

// An f64 root value that the loop's task uses while the loop writes its field: stored to temps
// (a word pair) before offloading, a global temporary after.
constexpr const char* kWideRootValue = R"(field x : f64[300]
field s : f64[]
kernel "wide_root_value" {
  <*f64> $0 = global ptr [s], index [] activate=true
  <f64> $1 = global load $0
  <f64> $2 = const 2.0
  <f64> $3 = mul $1 $2
  <i32> $4 = const 0
  <i32> $5 = const 300
  $6 : for in range($4, $5) block_dim=adaptive {
    <i32> $7 = loop $6 index 0
    <*f64> $8 = global ptr [x], index [$7] activate=true
    <f64> $9 = global load $8
    <f64> $10 = add $9 $3
    $11 : global store [$8 <- $10]
    $12 : global store [$0 <- $3]
  }
}
)";

TEST(VulkanOffloaded, ASixtyFourBitValueCrossingTasksMatchesTheInterpreterBeforeAndAfterOffload) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kWideRootValue, "wide_root_value.chi");
  State state = wide_inputs(*k);
  expect_matches_interpreter(*k, state);
  auto offloaded = after(*k, "offload");
  expect_matches_interpreter(*offloaded, state, k.get());
}

// Before offloading, an access chain at the root that a loop uses is recomputed in the loop's
// task (an address does not cross tasks through temps).
constexpr const char* kRootChain = R"(field x : f32[8]
kernel "root_chain" {
  <*gen> $0 = get root nullptr
  <i32> $1 = const 3
  <i32> $2 = linearized(ind {$1}, stride {8})
  <*gen> $3 = [S1dense][dense]::lookup($0, $2) activate = false
  <*f32> $4 = get child [S1dense->x] $3
  <i32> $5 = const 0
  <i32> $6 = const 200
  $7 : for in range($5, $6) block_dim=adaptive {
    <i32> $8 = loop $7 index 0
    <f32> $9 = cast_value<f32> $8
    <f32> $10 = atomic add($4, $9)
  }
}
)";

TEST(VulkanOffloaded, AnAccessChainAtTheRootIsRecomputedInTheLoopsTask) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kRootChain, "root_chain.chi");
  State state = inputs_of(*k);
  expect_matches_interpreter(*k, state);
  State got = state;
  run_kernel(*device(), *k, got);
  EXPECT_EQ(got.fields.at("x").data[3].as_f64(), 19900.0 - 0.25);  // x[3] = -0.25 plus the sum of 0..199
}

// Autodiff stacks inside an offloaded range_for task (reverse_ad, then offload) under every
// stack lowering: the shared-array counts plan the task's body, as they plan a range for's.
TEST(VulkanOffloaded, ReverseKernelsWithStacksInOffloadedTasksMatchTheInterpreterUnderEveryLowering) {
  REQUIRE_VULKAN();
  const int size = 300;
  auto k = ir::parse_kernel(bench::carried_loop_kernel(size, 1.5, -0.3), "carried.chi");
  auto offloaded = after(*k, "reverse_ad,offload");
  State state = make_state(*offloaded, nlohmann::json::object());
  for (int i = 0; i < size; ++i) {
    state.fields.at("x").data[static_cast<size_t>(i)] = ir::Value::make_f32(0.1f * static_cast<float>(i % 13) - 0.6f);
    state.fields.at("n").data[static_cast<size_t>(i)] = ir::Value::make_i32(i % 7);
    state.fields.at("y_grad").data[static_cast<size_t>(i)] = ir::Value::make_f32(1.0f);
  }
  State want = state;
  run_kernel(*offloaded, want);
  for (const codegen::spirv::LoweringOptions& o : codegen::spirv::all_stack_lowerings()) {
    State got = state;
    run_kernel(*device(), *offloaded, got, o);
    EXPECT_GT(expect_same(want, got, codegen::spirv::lowering_name(o)), 0u);
  }
}

// Kernel return values: the last return that ran gives them, in every type (a 64-bit value in a
// word pair, i8 and f16 as their stored words), after offloading too; a kernel that returns
// nothing returns nothing. The interpreter gives the same values.
constexpr const char* kReturns = R"(field x : i32[8]
kernel "returns" {
  <i32> $0 = const 0
  <i32> $1 = const 8
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*i32> $4 = global ptr [x], index [$3] activate=true
    $5 : global store [$4 <- $3]
  }
  <i32> $6 = const 5
  <*i32> $7 = global ptr [x], index [$6] activate=true
  <i32> $8 = global load $7
  <f64> $9 = cast_value<f64> $8
  <f64> $10 = const 0.25
  <f64> $11 = add $9 $10
  <i8> $12 = const -3
  <f16> $13 = const 1.5
  <u1> $14 = cmp_lt $0 $8
  $15 : if $14 {
    $16 : return $8, $11, $12, $13
  }
  <i32> $17 = const 7
  $18 : if $14 {
    $19 : return $17, $11, $12, $13
  }
}
)";

TEST(VulkanOffloaded, ReturnValuesOfEveryTypeMatchTheInterpreter) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(kReturns, "returns.chi");
  for (bool offloaded : {false, true}) {
    auto kernel = offloaded ? after(*k, "offload") : k->clone();
    State interp_state = make_state(*kernel, nullptr);
    RunResult want = run_kernel(*kernel, interp_state);
    State got = make_state(*kernel, nullptr);
    RunReport r = run_kernel(*device(), *kernel, got);
    ASSERT_EQ(r.launch.returned.size(), 4u) << offloaded;
    EXPECT_EQ(r.launch.returned[0].as_i64(), 7) << offloaded;
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(r.launch.returned[i].kind(), want.returned.at(i).kind()) << i;
      EXPECT_EQ(r.launch.returned[i].to_string(), want.returned.at(i).to_string()) << i;
    }
  }
  auto none = ir::parse_kernel("field x : i32[]\nkernel {\n  <i32> $0 = const 1\n}\n");
  State state = make_state(*none, nullptr);
  EXPECT_TRUE(run_kernel(*device(), *none, state).launch.returned.empty());
}

}  // namespace
}  // namespace pb::runtime::vulkan
