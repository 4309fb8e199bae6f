// `passbench run --backend` and `fixture check --backend` on the Vulkan device (lavapipe in CI):
// the values match the interpreter's, the comparison table exits 0 within tolerance and 1 beyond
// it, bad names are user errors. Tests skip, saying why, only when there is no Vulkan device.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::source_path;
using pb::test::write_temp;

namespace {

const char* kInputs = R"({"fields": {"x": {"data": [-1.3, -0.4, 0.5, 1.7]}, "n": {"data": [0, 1, 3, 6]}}})";

std::string carried_kernel() { return source_path("fixtures/autodiff_stacks/carried_unary_sin_f32.chi"); }

// Why Vulkan cannot run here, or "" when it can.
std::string no_vulkan() {
  static std::string why = [] {
    auto r =
        run_cli("run " + carried_kernel() + " --inputs " + write_temp("probe.json", kInputs) + " --backend=vulkan");
    return r.err.find("no Vulkan device") != std::string::npos ? r.err : std::string();
  }();
  return why;
}

#define REQUIRE_VULKAN() \
  if (!no_vulkan().empty()) GTEST_SKIP() << no_vulkan()

// Every number of `a` within 2e-5 relative of `b`'s, walking both JSON trees; counts them.
void expect_close(const nlohmann::json& a, const nlohmann::json& b, size_t& compared, const std::string& at = "") {
  ASSERT_EQ(a.type(), b.type()) << at;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << at;
    for (auto it = a.begin(); it != a.end(); ++it) expect_close(*it, b.at(it.key()), compared, at + "." + it.key());
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << at;
    for (size_t i = 0; i < a.size(); ++i) expect_close(a[i], b[i], compared, at + "[" + std::to_string(i) + "]");
  } else if (a.is_number()) {
    double x = a.get<double>(), y = b.get<double>();
    EXPECT_LE(std::fabs(x - y), 2e-5 * std::max({1.0, std::fabs(x), std::fabs(y)})) << at;
    ++compared;
  }
}

TEST(RunBackend, VulkanGivesTheInterpretersValuesForwardAndReverse) {
  REQUIRE_VULKAN();
  std::string inputs = write_temp("carried.json", kInputs);
  for (std::string grad : {"", " --grad --seed-grad y=1"}) {
    auto want = run_cli("run " + carried_kernel() + " --inputs " + inputs + grad);
    auto got = run_cli("run " + carried_kernel() + " --inputs " + inputs + grad + " --backend=vulkan");
    ASSERT_EQ(want.exit_code, 0) << want.err;
    ASSERT_EQ(got.exit_code, 0) << got.err;
    size_t compared = 0;
    expect_close(nlohmann::json::parse(want.out), nlohmann::json::parse(got.out), compared);
    EXPECT_GE(compared, 16u);
  }
}

// A kernel's return values come back from every backend, and `all` compares them too.
TEST(RunBackend, ReturnValuesComeBackFromEveryBackendAndAreCompared) {
  REQUIRE_VULKAN();
  const std::string k = std::string(PASSBENCH_SOURCE_DIR) + "/tests/workbench/offloaded_return.chi";
  for (const char* backend : {"interp", "cpu", "vulkan"}) {
    auto r = run_cli("run " + k + " --backend=" + backend);
    ASSERT_EQ(r.exit_code, 0) << backend << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["return"], nlohmann::json::parse("[28]")) << backend << r.out;
  }
  auto all = run_cli("run " + k + " --backend=all");
  EXPECT_EQ(all.exit_code, 0) << all.err;
  for (std::string backend : {"cpu", "vulkan"}) {
    bool found = false;  // a row `BACKEND return[0] i32 1 ... ok`
    std::istringstream lines(all.out);
    for (std::string line; std::getline(lines, line);)
      found = found || (line.starts_with(backend + " ") && line.find(" return[0] ") != std::string::npos &&
                        line.find(" i32 ") != std::string::npos && line.ends_with("  ok"));
    EXPECT_TRUE(found) << backend << "\n" << all.out;
  }
}

TEST(RunBackend, AllPrintsATableAndExitsZeroWithinTolerance) {
  REQUIRE_VULKAN();
  std::string inputs = write_temp("carried.json", kInputs);
  auto r = run_cli("run " + carried_kernel() + " --inputs " + inputs + " --grad --seed-grad y=1 --backend=all");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("max rel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x_grad"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DIFFERS"), std::string::npos) << r.out;
}

TEST(RunBackend, TimePrintsEachLaunchFromTimestamps) {
  REQUIRE_VULKAN();
  std::string inputs = write_temp("carried.json", kInputs);
  auto r =
      run_cli("run " + carried_kernel() + " --inputs " + inputs + " --grad --seed-grad y=1 --backend=vulkan --time");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("on vulkan ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(reverse) on vulkan"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ms (timestamps), total"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": compile "), std::string::npos) << r.err;
}

TEST(RunBackend, AllExitsOneBeyondTolerance) {
  REQUIRE_VULKAN();
  // A root local carried across a parallel loop's iterations races on a device.
  std::string inputs = write_temp("decay.json", R"({"args": [10]})");
  auto r = run_cli("run " + source_path("fixtures/interp/decay_loop.chi") + " --inputs " + inputs + " --backend=all");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DIFFERS"), std::string::npos) << r.out;
}

TEST(RunBackend, UnknownNamesAreUserErrors) {
  auto r = run_cli("run " + carried_kernel() + " --backend=cuda");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown backend 'cuda'"), std::string::npos) << r.err;
  REQUIRE_VULKAN();
  std::string inputs = write_temp("carried.json", kInputs);
  // A device that is not there is a user error (exit 2), as a missing backend is.
  r = run_cli("run " + carried_kernel() + " --inputs " + inputs + " --backend=vulkan --device 'no such device'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
}

TEST(FixtureCheckBackend, StackFixturesMatchTheInterpreterOnVulkan) {
  REQUIRE_VULKAN();
  auto r = run_cli("fixture check " + source_path("fixtures/autodiff_stacks") + " --filter _f32 --backend=vulkan");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS "), std::string::npos) << r.out;
}

// A sparse fixture runs on Vulkan as on the interpreter: the same JSON (fields and cell
// activity), and the comparison table has the space's cells.
TEST(CliBackend, SparseSNodesRunOnVulkanAsOnTheInterpreter) {
  REQUIRE_VULKAN();
  const std::string fixture = source_path("fixtures/interp/sparse_pointer_struct_for.fixture.json");
  auto interp = run_cli("run " + fixture);
  ASSERT_EQ(interp.exit_code, 0) << interp.err;
  auto vulkan = run_cli("run " + fixture + " --backend=vulkan");
  EXPECT_EQ(vulkan.exit_code, 0) << vulkan.err;
  EXPECT_EQ(vulkan.out, interp.out);
  auto all = run_cli("run " + fixture + " --backend=all");
  EXPECT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_NE(all.out.find("vulkan   S1pointer (cells)"), std::string::npos) << all.out;
  auto compiled = run_cli("compile " + fixture + " --target=spvasm");
  EXPECT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("sparse_pointer_struct_for_t0_struct_for_1_list"), std::string::npos) << compiled.err;
}

}  // namespace
