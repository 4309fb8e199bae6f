// Runs compiled kernels on the Vulkan device (vulkan_host.h: lavapipe here and in CI) against the
// reference interpreter. VulkanFixture: every fixture that runs, its own request through the
// product's path (fixture_backend_check.h). ExecFixture: the kernel after the fixture's pipeline
// with its inputs (reverse kernels with their gradient seeds), every field and ndarray compared on
// the same state, under all 16 adstack lowerings, unoptimized, and under four lowerings after
// spirv-opt (plus native f32 atomic add when the device has it). Any error fails; a skip names the
// declared difference or the missing device feature.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "codegen/spirv/compile.h"
#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/core/prepare.h"
#include "runtime/interp/interpreter.h"
#include "tests/fixture_backend_check.h"
#include "tests/fixture_params.h"
#include "vulkan_host.h"
#include "workbench/workspace/run.h"

namespace pb::codegen::spirv {
namespace {

// What a fixture's comparison leaves out, and why: its "backends": {"vulkan": ...} entry
// (docs/fixtures.md; the reasons are in docs/backends.md, "Known differences").
struct Known {
  std::string reason;
  std::set<std::string> fields;  // arrays not compared
  double tolerance = 2e-5;       // relative, for floats
};

// The first difference between two states, or ""; `compared` counts the elements compared.
std::string difference(const runtime::State& want, const runtime::State& got, const Known& known, size_t& compared) {
  for (const auto& [name, buf] : want.fields) {
    if (known.fields.count(name)) continue;
    const auto& other = got.fields.at(name);
    for (size_t i = 0; i < buf.data.size(); ++i, ++compared)
      if (!test::matches_reference(buf.data[i], other.data[i], known.tolerance))
        return fmt::format("field {}[{}]: interpreter {}, Vulkan {}", name, i, buf.data[i].to_string(),
                           other.data[i].to_string());
  }
  for (size_t a = 0; a < want.args.size(); ++a) {
    if (!want.args[a].is_ndarray) continue;
    const auto& w = want.args[a].array.data;
    const auto& g = got.args[a].array.data;
    for (size_t i = 0; i < w.size(); ++i, ++compared)
      if (!test::matches_reference(w[i], g[i], known.tolerance))
        return fmt::format("arg {}[{}]: interpreter {}, Vulkan {}", a, i, w[i].to_string(), g[i].to_string());
  }
  return "";
}

bool uses_kind(const ir::Kernel& k, std::initializer_list<ir::ScalarKind> kinds) {
  bool found = false;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    for (auto x : kinds) found |= s.type.scalar == x;
  });
  return found;
}

// Compiles `k` under `o`, runs it on the Vulkan device and on the reference interpreter from
// `state`, and returns the first difference ("" when they agree; "skip" when the lowering rejects
// the kernel).
std::string compare(const ir::Kernel& k, const runtime::State& state, LoweringOptions o, bool optimize,
                    const Known& known, size_t& compared) {
  o.float64 = uses_kind(k, {ir::ScalarKind::f64});
  o.int64 = uses_kind(k, {ir::ScalarKind::i64, ir::ScalarKind::u64}) || o.float64;
  // As the runtime lowers for the device (runtime/vulkan/run.cpp, lowering_for).
  o.preserve_inf_nan = test::vulkan()->device().preserve_inf_nan_f32;
  o.preserve_inf_nan_f64 = test::vulkan()->device().preserve_inf_nan_f64;
  CompiledKernel ck;
  try {
    ck = compile(k, o);
  } catch (const UserError& e) {
    return fmt::format("skip: {}", e.what());
  }
  runtime::State want = state, got = state;
  runtime::run_kernel(k, want);
  test::HostRun r = test::run_on_host(k, ck, got, optimize);
  if (r.stack_overflow)
    return fmt::format("stack overflow flag {} (the interpreter ran without one)", r.stack_overflow);
  std::string d = difference(want, got, known, compared);
  return d.empty() ? "" : fmt::format("{} ({}{})", d, lowering_name(o), optimize ? ", optimized" : "");
}

// The compile errors that depend on the lowering, not on the kernel alone.
constexpr const char* kLoweringRefusals[] = {
    "heap stacks hold 32- and 64-bit values",  // storage=heap: 8- and 16-bit stack elements
};

// A lowering that cannot hold the kernel says so at compile time; which refusals exist is pinned
// here, so that any other compile error fails.
bool lowering_refusal(const std::string& skip) {
  for (const char* known : kLoweringRefusals)
    if (skip.find(known) != std::string::npos) return true;
  return false;
}

class ExecFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecFixture, MatchesTheInterpreter) {
  PB_REQUIRE_VULKAN();
  auto fx = pb::test::read_fixture(GetParam());
  Known known;
  workbench::KnownDifference declared = workbench::known_difference(fx, workbench::Backend::vulkan);
  if (!declared.reason.empty()) {
    known.reason = declared.reason;
    known.fields.insert(declared.ignore.begin(), declared.ignore.end());
    if (declared.rtol) known.tolerance = *declared.rtol;
    if (declared.skips()) GTEST_SKIP() << "a known difference: " << known.reason;
  }
  // As every command reads it (an error fails the test), then scalar, as the backend runs it.
  std::unique_ptr<ir::Kernel> k = workbench::fixture_kernel(fx, pb::test::fixture_path(GetParam()));
  std::string pipeline = fx.value("pipeline", "");
  if (!pipeline.empty()) {
    passes::RunOptions ro;
    ro.capture = passes::Capture::none;
    auto run = passes::run_pipeline(*k, passes::parse_pipeline(pipeline), ro);
    ASSERT_FALSE(run.failed) << "the pipeline fails and the fixture expects no error: "
                             << run.records[run.failed_index].failure;
  }
  if (auto scalar = runtime::scalarized_if_tensor(*k, "vulkan")) k = std::move(scalar);
  runtime::State state = runtime::make_state(*k, fx.value("inputs", nlohmann::json::object()));
  std::vector<std::pair<std::string, double>> seeds;
  if (fx.contains("grad") && fx["grad"].contains("seed"))
    for (const auto& [name, v] : fx["grad"]["seed"].items()) seeds.emplace_back(name, v.get<double>());
  workbench::seed_gradients(*k, state, seeds);
  {
    runtime::State probe = state;
    runtime::RunOptions ro;
    ro.max_steps = 20'000'000;
    runtime::run_kernel(*k, probe, ro);  // an interpreter error fails the test
  }
  const runtime::vulkan::DeviceInfo& device = test::vulkan()->device();
  if (uses_kind(*k, {ir::ScalarKind::f64}) && !device.float64)
    GTEST_SKIP() << "the kernel uses f64 and the Vulkan device \"" << device.name << "\" lacks shaderFloat64";
  if (uses_kind(*k, {ir::ScalarKind::i64, ir::ScalarKind::u64}) && !device.int64)
    GTEST_SKIP() << "the kernel uses 64-bit integers and the Vulkan device \"" << device.name << "\" lacks shaderInt64";
  size_t compared = 0;
  for (const LoweringOptions& o : all_stack_lowerings()) {
    std::string d = compare(*k, state, o, false, known, compared);
    if (d.starts_with("skip: ") && lowering_refusal(d)) continue;
    EXPECT_EQ(d, "") << lowering_name(o);
  }
  std::vector<std::string> optimized = {"", "count=per-stack,push=branch", "storage=function",
                                        "push=branch,bounds=off"};
  if (device.atomic_float_add) optimized.push_back("atomic-float-add=on");
  for (const std::string& l : optimized) {
    std::string d = compare(*k, state, parse_lowering(l), true, known, compared);
    if (d.starts_with("skip: ") && lowering_refusal(d)) continue;
    EXPECT_EQ(d, "") << l << " (optimized)";
  }
  EXPECT_GT(compared, 0u)
      << "the kernel has no field or ndarray to compare: a check that compares nothing did not pass";
}

// Fixtures that run and expect no error.
std::vector<std::string> exec_fixture_names() {
  std::vector<std::string> out;
  for (const std::string& name : pb::test::running_fixture_names()) {
    auto fx = pb::test::read_fixture(name);
    if (!(fx.contains("expect") && fx["expect"].contains("error"))) out.push_back(name);
  }
  return out;
}

class VulkanFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanFixture, MatchesTheInterpreter) {
  PB_REQUIRE_VULKAN();
  pb::test::check_fixture_on(GetParam(), workbench::Backend::vulkan);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanFixture, ::testing::ValuesIn(pb::test::running_fixture_names()),
                         pb::test::fixture_test_name);

INSTANTIATE_TEST_SUITE_P(Fixtures, ExecFixture, ::testing::ValuesIn(exec_fixture_names()), pb::test::fixture_test_name);

}  // namespace
}  // namespace pb::codegen::spirv
