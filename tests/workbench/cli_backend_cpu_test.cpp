// `run --backend=cpu` and `compile --target=llvm` as a user runs them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli_helpers.h"

namespace pb::test {
namespace {

const std::string kKernel = std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/autodiff_stacks/carried_unary_log_f32.chi";
const char* kInputs = R"({"fields": {"x": {"data": [0.2, 0.9, 1.5, 3.0]}, "n": {"data": [0, 1, 3, 6]}}})";

TEST(CliBackend, CpuGradientsEqualTheInterpreters) {
  std::string inputs = write_temp("log_inputs.json", kInputs);
  auto interp = run_cli("run " + kKernel + " --inputs " + inputs + " --grad --seed-grad y=1");
  auto cpu = run_cli("run " + kKernel + " --inputs " + inputs + " --grad --seed-grad y=1 --backend=cpu");
  ASSERT_EQ(interp.exit_code, 0) << interp.err;
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_NE(cpu.out.find("\"grad\""), std::string::npos) << cpu.out;
  EXPECT_EQ(interp.out, cpu.out);
}

// The CPU backend is a module loaded on first use (runtime/cpu/backend.h).
// $PASSBENCH_CPU_MODULE, when set, is the only place it is looked for.
CliResult run_with_cpu_module(const std::string& module, const std::string& args) {
  ::setenv("PASSBENCH_CPU_MODULE", module.c_str(), 1);
  CliResult r = run_cli(args);
  ::unsetenv("PASSBENCH_CPU_MODULE");
  return r;
}

TEST(CliBackend, MissingCpuModuleIsAClearErrorAndTheOtherBackendsWork) {
  std::string inputs = write_temp("log_inputs.json", kInputs);
  const std::string missing = "/nonexistent/libpassbench_cpu.so";
  auto cpu = run_with_cpu_module(missing, "run " + kKernel + " --inputs " + inputs + " --backend=cpu");
  EXPECT_EQ(cpu.exit_code, 1) << cpu.err;
  EXPECT_NE(cpu.err.find("the cpu backend could not be loaded"), std::string::npos) << cpu.err;
  EXPECT_NE(cpu.err.find(missing + ": no such file"), std::string::npos) << cpu.err;
  EXPECT_NE(cpu.err.find("PASSBENCH_CPU_MODULE"), std::string::npos) << cpu.err;
  auto llvm = run_with_cpu_module(missing, "compile " + kKernel + " --target=llvm");
  EXPECT_EQ(llvm.exit_code, 2) << llvm.err;  // as every other error of compile --target=llvm
  EXPECT_NE(llvm.err.find("the cpu backend could not be loaded"), std::string::npos) << llvm.err;

  auto interp = run_with_cpu_module(missing, "run " + kKernel + " --inputs " + inputs + " --grad --seed-grad y=1");
  EXPECT_EQ(interp.exit_code, 0) << interp.err;
  EXPECT_NE(interp.out.find("\"grad\""), std::string::npos) << interp.out;
  auto spirv = run_with_cpu_module(missing, "compile " + kKernel + " --passes=reverse_ad --target=msl");
  EXPECT_EQ(spirv.exit_code, 0) << spirv.err;
}

TEST(CliBackend, ALibraryThatIsNotTheCpuModuleIsRefused) {
  const std::string other = "/lib/x86_64-linux-gnu/libm.so.6";
  ASSERT_TRUE(std::filesystem::exists(other));
  auto r = run_with_cpu_module(other, "run " + kKernel + " --backend=cpu");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(other + ": it has no passbench_cpu_module_api entry point"), std::string::npos) << r.err;
}

// The dynamic global-access check needs the interpreter's order of iterations: the cpu runs the
// launch on one thread in that order and reports the interpreter's violation word for word;
// vulkan cannot, and never runs without the check silently (it used to, printing the values and
// exit 0).
TEST(CliBackend, DynamicGlobalAccessCheckRunsOnTheCpuAndIsRefusedOnVulkan) {
  const std::string k = std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/global_access/accumulate_in_place_violation.chi";
  for (const char* backend : {"vulkan", "all"}) {
    auto r = run_cli("run " + k + " --check-global-access --backend=" + backend);
    EXPECT_EQ(r.exit_code, 2) << backend << r.out << r.err;
    EXPECT_NE(r.err.find("the vulkan backend cannot carry out the dynamic global-access check"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--check-global-access"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << backend;
  }
  auto interp = run_cli("run " + k + " --check-global-access");
  EXPECT_EQ(interp.exit_code, 1) << interp.err;
  EXPECT_NE(interp.err.find("global data access rule"), std::string::npos) << interp.err;
  auto cpu = run_cli("run " + k + " --check-global-access --backend=cpu");
  EXPECT_EQ(cpu.exit_code, 1) << cpu.err;
  auto rule = interp.err.find("global data access rule");
  ASSERT_NE(rule, std::string::npos);
  // The interpreter's report from the rule on, up to its remedy, appears unchanged in the cpu's.
  std::string report = interp.err.substr(rule, interp.err.find('\n', interp.err.find("in kernel", rule)) - rule);
  EXPECT_NE(cpu.err.find(report), std::string::npos) << "interp:\n" << interp.err << "\ncpu:\n" << cpu.err;
}

// Sparse SNodes run on the interpreter and the cpu, which print the same values and cell
// activity; vulkan compiles dense SNodes only and refuses the kernel up front, naming its sparse
// space.
TEST(CliBackend, SparseSNodesRunOnTheInterpreterAndTheCpu) {
  const std::string fixture =
      std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/interp/sparse_pointer_struct_for.fixture.json";
  auto interp = run_cli("run " + fixture);
  EXPECT_EQ(interp.exit_code, 0) << interp.err;
  EXPECT_NE(interp.out.find("\"active\""), std::string::npos) << interp.out;
  auto cpu = run_cli("run " + fixture + " --backend=cpu");
  EXPECT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_EQ(cpu.out, interp.out);
  auto both = run_cli("run " + fixture + " --backend=interp,cpu");
  EXPECT_EQ(both.exit_code, 0) << both.out << both.err;
  EXPECT_NE(both.out.find("S1pointer (cells)"), std::string::npos) << both.out;
}

// The kernel's print statements write on the backend that runs it too.
TEST(CliBackend, ACpuRunShowsWhatTheKernelPrinted) {
  const std::string fixture =
      std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/dumps/taichi_doc_listgen_bitmasked.fixture.json";
  auto r = run_cli("run " + fixture + " --backend=cpu");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"[debug] i = 2\n", "[debug] i = 8\n", "[debug] i = 9\n", "[debug] i = 15\n"})
    EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
}

TEST(CliBackend, UnknownBackendIsRefused) {
  auto r = run_cli("run " + kKernel + " --backend=gpu");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--backend"), std::string::npos) << r.err;
}

TEST(CliBackend, CompileLlvmPrintsIrBeforeAndAfterOptimization) {
  auto r = run_cli("compile " + kKernel + " --target=llvm --passes=reverse_ad --opt-level=3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t before = r.out.find("; ---- LLVM IR before optimization");
  size_t after = r.out.find("; ---- LLVM IR after optimization (O3)");
  ASSERT_NE(before, std::string::npos) << r.out;
  ASSERT_NE(after, std::string::npos) << r.out;
  EXPECT_LT(before, after);
  EXPECT_NE(r.out.find("define void @task1_range_for(", before), std::string::npos);
  EXPECT_NE(r.out.find("define void @task1_range_for(", after), std::string::npos);
  EXPECT_NE(r.out.find("target triple", after), std::string::npos);
}

TEST(CliBackend, CpuRunTimeErrorIsACleanFailure) {
  std::string k = write_temp("oob.chi", R"(field x : f32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 5
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = const 1
    $6 : global store [$4 <- $5]
  }
}
)");
  auto r = run_cli("run " + k + " --backend=cpu");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("index out of bounds for field 'x'"), std::string::npos) << r.err;
}

TEST(CliBackend, GradcheckOnTheCpuBackend) {
  std::string inputs = write_temp("log_inputs.json", kInputs);
  auto r = run_cli("gradcheck " + kKernel + " --inputs " + inputs + " --loss y --backend=cpu");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("analytic on cpu, finite differences on interp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gradcheck: PASS"), std::string::npos) << r.out;
  auto bad = run_cli("gradcheck " + kKernel + " --loss y --backend=gpu");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--backend: unknown backend 'gpu'"), std::string::npos) << bad.err;
}

TEST(CliBackend, CpuStackUsageEqualsTheInterpreters) {
  std::string inputs = write_temp("log_inputs.json", kInputs);
  std::string args = " --inputs " + inputs + " --grad --seed-grad y=1 --stack-usage";
  auto interp = run_cli("run " + kKernel + args);
  auto cpu = run_cli("run " + kKernel + args + " --backend=cpu");
  ASSERT_EQ(interp.exit_code, 0) << interp.err;
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_NE(cpu.err.find("deepest 8 of capacity 8"), std::string::npos) << cpu.err;
  EXPECT_EQ(interp.err, cpu.err);
  EXPECT_EQ(interp.out, cpu.out);
  auto vk = run_cli("run " + kKernel + args + " --backend=vulkan");
  EXPECT_EQ(vk.exit_code, 2);
  EXPECT_NE(vk.err.find("--stack-usage"), std::string::npos) << vk.err;
}

TEST(CliBackend, CpuF64ModeEqualsTheInterpreters) {
  std::string inputs = write_temp("log_inputs.json", kInputs);
  auto interp = run_cli("run " + kKernel + " --inputs " + inputs + " --f64");
  auto cpu = run_cli("run " + kKernel + " --inputs " + inputs + " --f64 --backend=cpu");
  auto narrow = run_cli("run " + kKernel + " --inputs " + inputs + " --backend=cpu");
  ASSERT_EQ(interp.exit_code, 0) << interp.err;
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_EQ(interp.out, cpu.out);
  EXPECT_NE(narrow.out, cpu.out);
}

// An endless loop on the JIT ends with the budget's error, exit 1 (runtime_cpu_budget_test has the TIMEOUT).
TEST(CliBackend, CpuEndlessLoopEndsAtMaxSteps) {
  std::string k = write_temp("spin.chi", "kernel \"spin\" {\n  $1 : while true {\n  }\n}\n");
  auto r = run_cli("run " + k + " --backend=cpu --max-steps 5000");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("exceeded its step budget"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_steps=5000"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-steps"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pb::test
