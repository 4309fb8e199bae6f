// Sparse SNodes on the Vulkan runtime (codegen/spirv/emit_sparse.cpp, lavapipe here and in CI):
// every sparse kernel of the interpreter's tests gives the interpreter's values and cell
// activity, or fails as the interpreter does, naming the statement; parallel tasks with more
// invocations than one workgroup activate and visit cells; a struct for visits the cells listed
// when its task starts, even when its iterations deactivate them; deactivation zeroes the
// buffers. Tests skip, saying why, only when there is no Vulkan device.
#include <gtest/gtest.h>

#include <string>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "runtime/interp/interpreter.h"
#include "runtime/vulkan/run.h"
#include "sparse_kernels.h"
#include "vulkan_test_util.h"

namespace pb::runtime::vulkan {
namespace {

using test::device;

struct Both {
  nlohmann::json interp, vulkan;  // state_to_json after the run
  std::string interp_error, vulkan_error;
};

Both run_both(const std::string& text, const nlohmann::json& inputs = nullptr, uint32_t max_workgroups = 65535) {
  auto k = ir::parse_kernel(text);
  Both out;
  State a = make_state(*k, inputs), b = make_state(*k, inputs);
  try {
    runtime::run_kernel(*k, a);
    out.interp = state_to_json(*k, a);
  } catch (const UserError& e) {
    out.interp_error = e.what();
  }
  LaunchOptions o;
  o.max_workgroups = max_workgroups;
  try {
    vulkan::run_kernel(*device(), *k, b, {}, o);
    out.vulkan = state_to_json(*k, b);
  } catch (const UserError& e) {
    out.vulkan_error = e.what();
  }
  return out;
}

TEST(VulkanSparse, TheInterpretersSparseKernelsGiveItsValuesAndActivity) {
  REQUIRE_VULKAN();
  using namespace runtime::test::sparse;  // NOLINT(google-build-using-namespace): the kernels under test
  for (const char* text : {kWrites, kChain, kOps, kFresh}) {
    Both r = run_both(text);
    ASSERT_EQ(r.interp_error, "") << text;
    ASSERT_EQ(r.vulkan_error, "") << text;
    EXPECT_TRUE(r.interp.contains("active")) << r.interp.dump();
    EXPECT_EQ(r.vulkan, r.interp) << text;
  }
  // Activity given in the inputs: x[5] lies in an active cell; values given under inactive cells
  // are dropped, as the interpreter drops them.
  auto given = nlohmann::json::parse(R"({"active": {"P": [0, 0, 1, 0]},
      "fields": {"x": {"shape": [8], "data": [1, 1, 1, 1, 1, 1, 1, 1]}}})");
  Both r = run_both(kWrites, given);
  EXPECT_EQ(r.vulkan, r.interp);
  EXPECT_EQ(r.vulkan["active"]["P"], nlohmann::json::parse("[0, 1, 1, 0]"));
  EXPECT_EQ(r.vulkan["fields"]["x"]["data"], nlohmann::json::parse("[0, 0, 7, 0, 1, 7, 0, 0]"));
}

TEST(VulkanSparse, ProblemsFailTheLaunchNamingTheStatement) {
  REQUIRE_VULKAN();
  using namespace runtime::test::sparse;  // NOLINT(google-build-using-namespace): the kernels under test
  Both full = run_both(kAppend);
  EXPECT_NE(full.interp_error, "");
  for (const char* part : {"append to dynamic SNode 'L': a parent cell is full (2 cells)",
                           "at `<i32> $3 = append [L] ptr = $1, val = $2`", "kernel \"k\" (vulkan)"})
    EXPECT_NE(full.vulkan_error.find(part), std::string::npos) << full.vulkan_error;
  Both length = run_both(kLengthOnPointer);
  EXPECT_NE(length.interp_error, "");
  EXPECT_NE(length.vulkan_error.find("SNode op 'length' has no meaning on the pointer SNode 'P'"), std::string::npos)
      << length.vulkan_error;
  Both foreign = run_both(kForeignCell);
  EXPECT_NE(foreign.interp_error, "");
  EXPECT_NE(
      foreign.vulkan_error.find("a cell is outside SNode 'L' (2 parent cells) at `<i32> $3 = length [L] ptr = $2`"),
      std::string::npos)
      << foreign.vulkan_error;
  std::string out_of_bounds = kOps;
  out_of_bounds.replace(out_of_bounds.find("const 3"), 7, "const 8");
  Both oob = run_both(out_of_bounds);
  EXPECT_NE(oob.interp_error, "");
  EXPECT_NE(oob.vulkan_error.find("index out of bounds for SNode 'B' of shape [8]"), std::string::npos)
      << oob.vulkan_error;
  // An undeclared sparse SNode is refused before anything runs, as the interpreter refuses it.
  Both none = run_both("kernel \"sparse\" {\n  $0 = offloaded listgen S1dense->S2bitmasked\n}\n");
  EXPECT_NE(none.interp_error, "");
  EXPECT_NE(none.vulkan_error.find("which the header does not declare"), std::string::npos) << none.vulkan_error;
}

// sparse_kernels.h's parallel kernel: with 2 workgroups of 256 each invocation runs 8 iterations
// of each loop; with 65,535 (capped at the trip count) one each.
TEST(VulkanSparse, ParallelTasksActivateAndVisitMoreCellsThanAWorkgroup) {
  REQUIRE_VULKAN();
  using runtime::test::sparse::kParallel;
  for (uint32_t groups : {2u, 65535u}) {
    Both r = run_both(kParallel, nullptr, groups);
    ASSERT_EQ(r.interp_error, "");
    ASSERT_EQ(r.vulkan_error, "");
    runtime::test::sparse::expect_parallel_result(r.vulkan, r.interp);
  }
}

// The cells a struct for visits are listed as its task starts: iterations that activate the
// other block do not make it visited. Each iteration writes its cell, then deactivates its block,
// which zeroes it (whatever the order of iterations, each write is followed by a zeroing).
TEST(VulkanSparse, AStructForVisitsTheCellsListedAsItsTaskStarts) {
  REQUIRE_VULKAN();
  constexpr const char* kListed = R"(pointer P : [2]
dense D : [8] in P
field x : f32[8] in D
field n : i32[]
kernel "listed" {
  <i32> $0 = const 4
  <i32> $1 = const 1
  $2 : struct for in D noneblock_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*gen> $4 = global ptr [P], index [$1] activate=true
    $5 : activate [P] ptr = $4
    <*i32> $6 = global ptr [n], index [] activate=true
    <i32> $7 = atomic add($6, $1)
  }
}
)";
  Both r = run_both(kListed, nlohmann::json::parse(R"({"active": {"P": [1, 0]}})"));
  ASSERT_EQ(r.interp_error, "");
  ASSERT_EQ(r.vulkan_error, "") << r.vulkan_error;
  EXPECT_EQ(r.vulkan, r.interp);
  EXPECT_EQ(r.vulkan["fields"]["n"]["data"][0], 4) << r.vulkan.dump();
  EXPECT_EQ(r.vulkan["active"]["P"], nlohmann::json::parse("[1, 1]"));

  constexpr const char* kDeactivating = R"(pointer P : [2]
dense D : [8] in P
field x : f32[8] in D
kernel "drop" {
  <i32> $0 = const 4
  <f32> $1 = const 5
  $2 : struct for in D noneblock_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $4 = floordiv $3 $0
    <*f32> $5 = global ptr [x], index [$3] activate=false
    $6 : global store [$5 <- $1]
    <*gen> $7 = global ptr [P], index [$4] activate=true
    $8 : deactivate [P] ptr = $7
  }
}
)";
  Both d = run_both(kDeactivating, nlohmann::json::parse(R"({"active": {"P": [1, 1]}})"));
  ASSERT_EQ(d.interp_error, "");
  ASSERT_EQ(d.vulkan_error, "") << d.vulkan_error;
  EXPECT_EQ(d.vulkan, d.interp);
  EXPECT_EQ(d.vulkan["fields"]["x"]["data"], nlohmann::json(std::vector<double>(8, 0.0)));
  EXPECT_EQ(d.vulkan["active"]["P"], nlohmann::json::parse("[0, 0]"));
}

// Nested dense spaces under a sparse tree number their cells over the full shape, as the
// interpreter does (element (3, 1) of a [2, 2] over [4, 4] layout is 13).
TEST(VulkanSparse, NestedSpacesNumberCellsAsTheInterpreter) {
  REQUIRE_VULKAN();
  Both r = run_both(runtime::test::sparse::kChain);
  ASSERT_EQ(r.interp_error, "");
  ASSERT_EQ(r.vulkan_error, "") << r.vulkan_error;
  EXPECT_EQ(r.vulkan, r.interp);
  EXPECT_EQ(r.vulkan["fields"]["S3place<f32>"]["data"][13], 4.5) << r.vulkan.dump();
  EXPECT_EQ(r.vulkan["active"]["S2bitmasked"][13], 1) << r.vulkan.dump();
}

}  // namespace
}  // namespace pb::runtime::vulkan
