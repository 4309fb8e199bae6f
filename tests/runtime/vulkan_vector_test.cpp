// Vector steps on the device (codegen/spirv/emit_vector.cpp): a streaming range for that reaches
// 32-bit fields and ndarrays at its own index runs four consecutive iterations per step, with one
// 4-vector load or store per buffer when the step is full and the range's begin is a multiple of
// four, and scalar lanes otherwise. Every trip count that leaves a partial step, every begin
// modulo four, one workgroup to one step per invocation, float, int and u1 buffers, a load that is
// not at the loop's index, and ndarrays all give the interpreter's result exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "runtime/interp/interpreter.h"
#include "runtime/vulkan/run.h"
#include "vulkan_test_util.h"

namespace pb::runtime::vulkan {
namespace {

using test::device;

// y[i] = x[i] * 1.5 + x[0]; z[i] = i; w[i] = x[i] > 0, over range(begin, end) of fields of
// `size` elements; `order` is "" or "reversed ".
std::string fields_kernel(int size, int begin, int end, const char* order) {
  return fmt::format(R"(field x : f32[{0}]
field y : f32[{0}]
field z : i32[{0}]
field w : u1[{0}]
kernel "vector" {{
  <i32> $0 = const {1}
  <i32> $1 = const {2}
  <f32> $2 = const 1.5
  <i32> $20 = const 0
  <f32> $21 = const 0
  $3 : {3}for in range($0, $1) block_dim=adaptive {{
    <i32> $4 = loop $3 index 0
    <*f32> $5 = global ptr [x], index [$4] activate=true
    <f32> $6 = global load $5
    <*f32> $22 = global ptr [x], index [$20] activate=true
    <f32> $23 = global load $22
    <f32> $7 = mul $6 $2
    <f32> $24 = add $7 $23
    <*f32> $8 = global ptr [y], index [$4] activate=true
    $9 : global store [$8 <- $24]
    <*i32> $10 = global ptr [z], index [$4] activate=true
    $11 : global store [$10 <- $4]
    <u1> $25 = cmp_gt $6 $21
    <*u1> $26 = global ptr [w], index [$4] activate=true
    $27 : global store [$26 <- $25]
  }}
}}
)",
                     size, begin, end, order);
}

State fields_state(const ir::Kernel& k, int size) {
  State s = make_state(k, nlohmann::json::object());
  for (int i = 0; i < size; ++i)
    s.fields.at("x").data[static_cast<size_t>(i)] = ir::Value::make_f32(static_cast<float>(i % 7) - 2.5f);
  return s;
}

// Runs `k` from `state` on the device (the runtime's lowering) and expects the interpreter's
// state exactly; returns the single task's compiled description.
codegen::spirv::TaskInfo expect_interpreters_state(const ir::Kernel& k, const State& state,
                                                   const LaunchOptions& lo = {}, const std::string& where = "") {
  State want = state;
  run_kernel(k, want);
  State got = state;
  RunReport report = run_kernel(*device(), k, got, {}, lo);
  EXPECT_EQ(state_to_json(k, got), state_to_json(k, want)) << where;
  EXPECT_EQ(report.compiled.tasks.size(), 1u) << where;
  return report.compiled.tasks.at(0);
}

TEST(VulkanVector, FullPartialAndUnalignedStepsGiveTheInterpretersResult) {
  REQUIRE_VULKAN();
  for (int size : {1, 3, 4, 5, 255, 1000, 5003})
    for (int begin : {0, 1, 2, 3, 4}) {
      if (begin >= size && size > 1) continue;
      auto k = ir::parse_kernel(fields_kernel(size, std::min(begin, size), size, ""), "vector.chi");
      State state = fields_state(*k, size);
      for (uint32_t groups : {1u, 3u, 65535u}) {
        LaunchOptions lo;
        lo.max_workgroups = groups;
        std::string where = fmt::format("size {}, begin {}, {} workgroups", size, begin, groups);
        EXPECT_EQ(expect_interpreters_state(*k, state, lo, where).vector, 4u) << where;
      }
    }
}

TEST(VulkanVector, AReversedRangeTakesUnrolledStepsInstead) {
  REQUIRE_VULKAN();
  const int size = 1001;
  auto k = ir::parse_kernel(fields_kernel(size, 0, size, "reversed "), "vector.chi");
  codegen::spirv::TaskInfo task = expect_interpreters_state(*k, fields_state(*k, size));
  EXPECT_EQ(task.vector, 1u);
  EXPECT_EQ(task.unroll, 4u);
}

TEST(VulkanVector, NdarraysTakeVectorStepsToo) {
  REQUIRE_VULKAN();
  const char* text = R"(arg 0 : ndarray<f32, 1>
arg 1 : ndarray<i32, 1>
kernel "nd" {
  <i32> $0 = const 0
  <i32> $1 = const 1003
  <f32> $2 = const 0.25
  <*f32> $3 = argload[0]
  <*i32> $4 = argload[1]
  $5 : for in range($0, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = external_ptr $3, [$6] layout=AOS is_grad=false
    <f32> $8 = global load $7
    <f32> $9 = mul $8 $2
    <i32> $10 = cast_value<i32> $9
    <*i32> $11 = external_ptr $4, [$6] layout=AOS is_grad=false
    $12 : global store [$11 <- $10]
  }
}
)";
  auto k = ir::parse_kernel(text, "nd.chi");
  std::vector<double> a(1003);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i) * 3.0 - 700.0;
  nlohmann::json inputs = {
      {"args", {{{"shape", {1003}}, {"data", a}}, {{"shape", {1003}}, {"data", std::vector<int>(1003, -1)}}}}};
  State state = make_state(*k, inputs);
  EXPECT_EQ(expect_interpreters_state(*k, state).vector, 4u);
  run_kernel(*k, state);
  EXPECT_EQ(state_to_json(*k, state)["ndarrays"]["arg1"]["data"][1002], 576);  // (3 * 1002 - 700) / 4, truncated
}

}  // namespace
}  // namespace pb::runtime::vulkan
