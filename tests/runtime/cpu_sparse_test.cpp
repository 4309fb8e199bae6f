// Sparse SNodes on the CPU backend (runtime/cpu/sparse_host.h): every sparse kernel of the
// interpreter's tests gives the interpreter's values and cell activity, element for element, or
// fails as the interpreter does; a parallel task activates and visits more cells than it has
// threads; nested dense spaces number their cells as the interpreter does; deactivation zeroes the
// packed buffers; and problems found on the host fail the launch, naming the statement and task.
#include <gtest/gtest.h>

#include <string>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "runtime/cpu/cpu.h"
#include "runtime/interp/interpreter.h"
#include "sparse_kernels.h"

namespace pb::runtime::cpu {
namespace {

struct Both {
  nlohmann::json interp, cpu;  // state_to_json after the run
  std::string interp_error, cpu_error;
};

Both run_both(const std::string& text, const nlohmann::json& inputs = nullptr, int threads = 4) {
  auto k = ir::parse_kernel(text);
  Both out;
  State a = make_state(*k, inputs), b = make_state(*k, inputs);
  try {
    runtime::run_kernel(*k, a);
    out.interp = state_to_json(*k, a);
  } catch (const UserError& e) {
    out.interp_error = e.what();
  }
  CpuRuntime rt(threads);
  try {
    cpu::run_kernel(*k, b, {}, {}, &rt);
    out.cpu = state_to_json(*k, b);
  } catch (const UserError& e) {
    out.cpu_error = e.what();
  }
  return out;
}

TEST(CpuSparse, TheInterpretersSparseKernelsGiveItsValuesAndActivity) {
  using namespace runtime::test::sparse;  // NOLINT(google-build-using-namespace): the kernels under test
  for (const char* text : {kWrites, kChain, kOps, kFresh}) {
    Both r = run_both(text);
    ASSERT_EQ(r.interp_error, "") << text;
    ASSERT_EQ(r.cpu_error, "") << text;
    EXPECT_TRUE(r.interp.contains("active")) << r.interp.dump();
    EXPECT_EQ(r.cpu, r.interp) << text;
  }
  // Activity given in the inputs: x[5] lies in an active cell.
  Both given = run_both(kWrites, nlohmann::json::parse(R"({"active": {"P": [0, 0, 1, 0]}})"));
  EXPECT_EQ(given.cpu, given.interp);
  EXPECT_EQ(given.cpu["active"]["P"], nlohmann::json::parse("[0, 1, 1, 0]"));
}

TEST(CpuSparse, HostProblemsFailTheLaunchNamingTheStatementAndTask) {
  using namespace runtime::test::sparse;  // NOLINT(google-build-using-namespace): the kernels under test
  Both full = run_both(kAppend);
  EXPECT_NE(full.interp_error, "");
  for (const char* part : {"append to dynamic SNode 'L'", "parent cell 0 is full (2 cells)", "kernel \"k\"",
                           "(cpu, task task0_range_for)"})
    EXPECT_NE(full.cpu_error.find(part), std::string::npos) << full.cpu_error;
  Both length = run_both(kLengthOnPointer);
  EXPECT_NE(length.cpu_error.find("SNode op 'length' has no meaning on the pointer SNode 'P'"), std::string::npos)
      << length.cpu_error;
  Both foreign = run_both(kForeignCell);
  EXPECT_NE(foreign.cpu_error.find("cell 15 is outside SNode 'L' (2 parent cells) at `<i32> $3 = length [L] ptr = $2`"),
            std::string::npos)
      << foreign.cpu_error;
  std::string out_of_bounds = kOps;
  out_of_bounds.replace(out_of_bounds.find("const 3"), 7, "const 8");
  Both oob = run_both(out_of_bounds);
  EXPECT_NE(oob.cpu_error.find("index out of bounds for SNode 'B' of shape [8]"), std::string::npos) << oob.cpu_error;
}

// sparse_kernels.h's parallel kernel on 4 threads: more iterations than threads in each loop.
TEST(CpuSparse, ParallelTasksActivateAndVisitMoreCellsThanThreads) {
  using runtime::test::sparse::kParallel;
  Both r = run_both(kParallel, nullptr, 4);
  ASSERT_EQ(r.interp_error, "");
  ASSERT_EQ(r.cpu_error, "");
  runtime::test::sparse::expect_parallel_result(r.cpu, r.interp);
}

// Nested dense spaces: a lookup's cell is numbered over the space's full shape, as the
// interpreter numbers it (element (3, 1) of a [2, 2] over [4, 4] layout is 13).
TEST(CpuSparse, NestedDenseSpacesNumberCellsAsTheInterpreter) {
  std::string dense = runtime::test::sparse::kChain;
  dense.replace(dense.find("bitmasked S2bitmasked"), 21, "dense S2bitmasked");
  dense.replace(dense.find("[S2bitmasked][bitmasked]"), 24, "[S2bitmasked][dense]");
  Both r = run_both(dense);
  ASSERT_EQ(r.interp_error, "");
  ASSERT_EQ(r.cpu_error, "") << r.cpu_error;
  EXPECT_EQ(r.cpu, r.interp);
  EXPECT_EQ(r.cpu["fields"]["S3place<f32>"]["data"][13], 4.5) << r.cpu.dump();
}

// A struct for over a sparse space reaches its own cell without a call only while nothing in the
// kernel deactivates cells: here each iteration deactivates its block first, so its write is
// dropped on both backends.
TEST(CpuSparse, AStructForThatDeactivatesItsOwnBlockDropsItsWrites) {
  constexpr const char* kDeactivating = R"(pointer P : [2]
dense D : [8] in P
field x : f32[8] in D
kernel "drop" {
  <i32> $0 = const 4
  <f32> $1 = const 5
  $2 : struct for in D noneblock_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $4 = floordiv $3 $0
    <*gen> $5 = global ptr [P], index [$4] activate=true
    $6 : deactivate [P] ptr = $5
    <*f32> $7 = global ptr [x], index [$3] activate=false
    $8 : global store [$7 <- $1]
  }
}
)";
  Both r = run_both(kDeactivating, nlohmann::json::parse(R"({"active": {"P": [1, 1]}})"));
  ASSERT_EQ(r.interp_error, "");
  ASSERT_EQ(r.cpu_error, "") << r.cpu_error;
  EXPECT_EQ(r.cpu, r.interp);
  EXPECT_EQ(r.cpu["fields"]["x"]["data"], nlohmann::json(std::vector<double>(8, 0.0)));
  EXPECT_EQ(r.cpu["active"]["P"], nlohmann::json::parse("[0, 0]"));
}

}  // namespace
}  // namespace pb::runtime::cpu
