// `passbench compile` and `passbench compare-lowerings` as a user runs them: targets, outputs for
// one and several tasks, the optimizer report and table, fail-closed ID overflow, the fallback,
// the lowering table with per-row errors, and usage errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace fs = std::filesystem;
using pb::test::run_cli;
using pb::test::slurp;
using pb::test::source_path;

namespace {

// One task, one f32 stack pushed in a dynamic loop after reverse_ad.
std::string decay() { return source_path("fixtures/codegen/decay_field_n5_f32.chi") + " --passes=reverse_ad"; }
// Two top-level loops: two tasks.
std::string two_loops() { return source_path("fixtures/autodiff/two_top_level_loops.chi"); }

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("pb_cli_files_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST(CliCompile, MslToStdoutWithSummaryOnStderr) {
  auto r = run_cli("compile " + decay() + " --target=msl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel void kernel_t0_range_for_4("), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("storage=heap,count=shared-array,push=select,bounds=on"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spirv-val: valid"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("MSL lines per push"), std::string::npos) << r.err;
}

TEST(CliCompile, SpvasmIsTheOptimizedModule) {
  auto optimized = run_cli("compile " + decay() + " --target=spvasm");
  auto raw = run_cli("compile " + decay() + " --target=spvasm --no-optimize");
  ASSERT_EQ(optimized.exit_code, 0) << optimized.err;
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(optimized.out.find("OpEntryPoint GLCompute"), std::string::npos);
  EXPECT_NE(optimized.out, raw.out);
  EXPECT_GT(count(optimized.out, "OpPhi"), 0u);  // SSA: the optimizer ran
  EXPECT_EQ(count(raw.out, "OpPhi"), 0u);
}

TEST(CliCompile, LoweringOptionsReachTheEmitter) {
  auto r = run_cli("compile " + decay() +
                   " --target=spvasm --no-optimize --adstack-storage=function --adstack-count=per-stack "
                   "--adstack-push=branch --bounds-check=off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("storage=function,count=per-stack,push=branch,bounds=off"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("%heap"), std::string::npos);
}

TEST(CliCompile, BinarySpirvToFile) {
  fs::path out = scratch("decay.spv");
  auto r = run_cli("compile " + decay() + " --target=spirv -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string bytes = slurp(out.string());
  ASSERT_GE(bytes.size(), 20u);
  uint32_t magic = 0;
  std::memcpy(&magic, bytes.data(), 4);
  EXPECT_EQ(magic, 0x07230203u);
}

TEST(CliCompile, SeveralTasksConcatenateWithSeparatorsOrGoToADirectory) {
  auto text = run_cli("compile " + two_loops() + " --target=glsl");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(count(text.out, "// task "), 2u) << text.out;
  EXPECT_EQ(count(text.out, "#version 450"), 2u);

  auto binary = run_cli("compile " + two_loops() + " --target=spirv");
  EXPECT_EQ(binary.exit_code, 2);
  EXPECT_NE(binary.err.find("has 2 tasks"), std::string::npos) << binary.err;
  EXPECT_NE(binary.err.find("-o DIR/"), std::string::npos) << binary.err;

  fs::path dir = scratch("tasks");
  auto files = run_cli("compile " + two_loops() + " --target=spirv -o " + dir.string() + "/");
  ASSERT_EQ(files.exit_code, 0) << files.err;
  size_t spv = 0;
  for (const auto& e : fs::directory_iterator(dir)) spv += e.path().extension() == ".spv";
  EXPECT_EQ(spv, 2u);
}

TEST(CliCompile, OptimizerReportAndTable) {
  fs::path report = scratch("report.json");
  auto r = run_cli("compile " + two_loops() + " --target=msl --spirv-opt-table --spirv-opt-report=" + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "SPIR-V optimizer: kernel"), 2u) << r.err;
  EXPECT_NE(r.err.find("CompactIds"), std::string::npos);
  auto j = nlohmann::json::parse(slurp(report.string()));
  EXPECT_EQ(j["schema"], "passbench.spirv-opt-reports");
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["schema"], "passbench.spirv-opt-report");
  EXPECT_EQ(j["tasks"][0]["passes"].size(), 35u);
}

TEST(CliCompile, IdOverflowFailsClosedWithRemedies) {
  fs::path report = scratch("overflow.json");
  // The emitted module's bound is 200; LocalMultiStoreElim takes it past 205 (SSA phis).
  auto r = run_cli("compile " + decay() +
                   " --target=msl --max-id-bound=205 --no-intermediate-dce --spirv-opt-report=" + report.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // nothing written: no silent fallback
  EXPECT_NE(r.err.find("ran out of IDs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("maximum ID bound 205"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task 'kernel_t0_range_for_4'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pass LocalMultiStoreElim"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("remedy"), std::string::npos) << r.err;
  // The measured need is the remedy's bound; keeping the intermediate AggressiveDCE passes is not
  // offered: they did not change any measured need (docs/performance.md).
  EXPECT_NE(r.err.find("raise the maximum ID bound to at least"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("intermediate AggressiveDCE"), std::string::npos) << r.err;
  // The kernel uses the shared-array counts already: that lowering is not offered as a remedy.
  EXPECT_EQ(r.err.find("shared-array count lowering"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(slurp(report.string()));
  EXPECT_EQ(j["tasks"][0]["failure"]["kind"], "id_overflow");
}

TEST(CliCompile, FallbackUsesTheUnoptimizedModuleLoudly) {
  auto r = run_cli("compile " + decay() + " --target=spvasm --max-id-bound=60 --spirv-opt-fallback");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("WARNING: SPIR-V optimizer fallback"), std::string::npos) << r.err;
  EXPECT_EQ(count(r.out, "OpPhi"), 0u);
}

TEST(CliCompile, UsageErrors) {
  EXPECT_EQ(run_cli("compile " + decay()).exit_code, 2);  // --target is required
  EXPECT_EQ(run_cli("compile " + decay() + " --target=hlsl").exit_code, 2);
  EXPECT_EQ(run_cli("compile " + decay() + " --target=msl --adstack-storage=stack").exit_code, 2);
  auto bad = run_cli("compile " + decay() + " --target=msl --lowering=color=blue");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad SPIR-V lowering option 'color=blue'"), std::string::npos) << bad.err;
  auto bound = run_cli("compile " + decay() + " --target=msl --max-id-bound=0");
  EXPECT_EQ(bound.exit_code, 2);
  EXPECT_NE(bound.err.find("1 to 4294967295"), std::string::npos) << bound.err;
  auto missing = run_cli("compile /nonexistent.chi --target=msl");
  EXPECT_EQ(missing.exit_code, 2);
  auto pass = run_cli("compile " + two_loops() + " --target=msl --passes=no_such_pass");
  EXPECT_EQ(pass.exit_code, 1);
  EXPECT_NE(pass.err.find("no_such_pass"), std::string::npos) << pass.err;
}

TEST(CliCompile, CodegenErrorIsExitOneWithTheStatement) {
  auto r = run_cli("compile " + source_path("fixtures/codegen/decay_arg_n3_f64.chi") +
                   " --passes=reverse_ad --target=glsl --adstack-storage=function --float64=off");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("float64=on"), std::string::npos) << r.err;
}

TEST(CliCompareLowerings, OneRowPerLoweringWithTheDefaultMarked) {
  auto r = run_cli("compare-lowerings " + decay());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.out, "\n* heap     shared-array select on "), 1u) << r.out;
  EXPECT_EQ(count(r.out, "\n  function "), 8u) << r.out;
  EXPECT_EQ(count(r.out, "\n  heap "), 7u) << r.out;
  EXPECT_NE(r.out.find("lines/push"), std::string::npos);
}

// Under a scaled ID bound the lowerings that need more IDs fail (fail closed) and the others
// still get their row; Metal has no double buffers, so the f64 rows that compile have no MSL and
// keep their SPIR-V figures.
TEST(CliCompareLowerings, RejectedRowsDoNotStopTheTable) {
  auto r = run_cli("compare-lowerings " + source_path("fixtures/codegen/decay_arg_n3_f64.chi") +
                   " --passes=reverse_ad --max-id-bound=200");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t failed = count(r.out, "error (optimize, task ");
  EXPECT_GT(failed, 0u) << r.out;
  EXPECT_LT(failed, 16u) << r.out;
  EXPECT_EQ(failed + count(r.out, "no MSL: "), 16u) << r.out;
  EXPECT_NE(r.out.find("double types are not supported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(failed) + " lowering(s) failed"), std::string::npos) << r.out;
}

TEST(CliCompareLowerings, Json) {
  auto r = run_cli("compare-lowerings " + decay() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "passbench.compare-lowerings");
  ASSERT_EQ(j["rows"].size(), 16u);
  int defaults = 0;
  for (const auto& row : j["rows"]) {
    EXPECT_TRUE(row["ok"].get<bool>()) << row.dump();
    EXPECT_TRUE(row["valid"].get<bool>());
    EXPECT_GT(row["metrics"]["msl.lines"].get<double>(), 0);
    EXPECT_GT(row["metrics"]["msl.lines_per_push"].get<double>(), 0);
    defaults += row["default"].get<bool>();
  }
  EXPECT_EQ(defaults, 1);
  EXPECT_GT(j["pushes"].get<int>(), 0);
}

}  // namespace

namespace {

TEST(FixtureMetricBounds, CheckEnforcesAndUpdateKeepsThem) {
  fs::path dir = scratch("metrics_fixture");
  fs::create_directories(dir);
  fs::copy_file(source_path("fixtures/codegen/decay_field_n5_f32.chi"), dir / "decay.chi",
                fs::copy_options::overwrite_existing);
  auto fx = nlohmann::ordered_json::parse(R"({"kernel": "decay.chi", "pipeline": "reverse_ad",
      "compile": {"lowering": "count=per-stack"}, "expect": {"metrics": {"msl.lines": "<= 10", "ir.pushes": 3}}})");
  fs::path path = dir / "tight.fixture.json";
  std::ofstream(path) << fx.dump(2) << "\n";
  auto check = run_cli("fixture check " + path.string());
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.out.find("metrics: msl.lines = "), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("under storage=heap,count=per-stack,push=select,bounds=on, expected <= 10"),
            std::string::npos)
      << check.out;
  auto update = run_cli("fixture update " + path.string());
  EXPECT_EQ(update.exit_code, 1) << update.out;
  EXPECT_NE(update.out.find("ERROR "), std::string::npos) << update.out;
  auto written = nlohmann::json::parse(slurp(path.string()));
  EXPECT_EQ(written["expect"]["metrics"]["msl.lines"], "<= 10");  // never rewritten
  EXPECT_EQ(written["compile"]["lowering"], "count=per-stack");

  fx["expect"]["metrics"] = nlohmann::ordered_json::parse(R"({"msl.words": "<= 10"})");
  std::ofstream(path) << fx.dump(2) << "\n";
  auto unknown = run_cli("fixture check " + path.string());
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.out.find("unknown metric 'msl.words'"), std::string::npos) << unknown.out;
}

}  // namespace
