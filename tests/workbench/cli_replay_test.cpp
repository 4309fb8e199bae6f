// `passbench replay` and `passbench passes` as a user runs them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::slurp;
using pb::test::write_temp;

namespace {

const char* kKernel = R"(field y : f32[]
kernel {
  <f32> $0 = const 2
  <f32> $1 = const 3
  <f32> $2 = mul $0 $1
  <f32> $3 = sin $2
  <f32> $4 = cos $2
  <*f32> $5 = global ptr [y], index [] activate=true
  $6 : global store [$5 <- $3]
}
)";

std::string file() { return write_temp("replay.chi", kKernel); }

TEST(CliReplay, PrintsTheResultingIr) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce,renumber");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "field y : f32[]\nkernel {\n  <f32> $0 = const -0.2794155\n  <*f32> $1 = global ptr [y], index [] "
            "activate=true\n  $2 : global store [$1 <- $0]\n}\n");
}

TEST(CliReplay, PrintAfterAllAndPrintBefore) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce --print-after-all --print-before=dce");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = r.err.find("# *** IR Dump After simplify ***");
  auto b = r.err.find("# *** IR Dump Before dce ***");
  auto c = r.err.find("# *** IR Dump After dce ***");
  ASSERT_NE(a, std::string::npos) << r.err;
  ASSERT_NE(b, std::string::npos) << r.err;
  ASSERT_NE(c, std::string::npos) << r.err;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST(CliReplay, PrintChangedSkipsPassesThatChangedNothing) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce,dce --print-changed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t dumps = 0;
  for (size_t p = r.err.find("IR Dump After"); p != std::string::npos; p = r.err.find("IR Dump After", p + 1)) ++dumps;
  EXPECT_EQ(dumps, 2u) << r.err;
}

TEST(CliReplay, PrintChangedDiffIsPlainWhenPiped) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce --print-changed=diff");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("# *** IR Diff After simplify ***"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-  <f32> $2 = mul $0 $1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("@@"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\033["), std::string::npos) << "colour codes on a pipe";
  auto colored = run_cli("replay " + file() + " --passes=simplify --print-changed=diff --color=always");
  EXPECT_NE(colored.err.find("\033[31m-"), std::string::npos) << colored.err;
}

TEST(CliReplay, TimePassesAndStatsTables) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce --time-passes --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("pass execution timing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stmts in"), std::string::npos);
  // The rows outside the passes make the table sum to the run (it showed 0.5 s of a 3.2 s run).
  for (const char* row : {"(parse the input)", "(verify the input)", "(verify)", "(print the result)"})
    EXPECT_NE(r.err.find(row), std::string::npos) << row << "\n" << r.err;
  // Snapshots of every pass are taken only when something prints them.
  auto printing = run_cli("replay " + file() + " --passes=simplify,dce --time-passes --print-after=dce");
  EXPECT_NE(printing.err.find("(verify, IR snapshots)"), std::string::npos) << printing.err;
  EXPECT_NE(r.err.find("simplify.folded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dce.removed"), std::string::npos) << r.err;
}

TEST(CliReplay, BisectLimitReportsWhatRan) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce --bisect-limit=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("BISECT: running pass (1) simplify"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("BISECT: NOT running pass (2) dce"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("const 0.96017027"), std::string::npos) << "dce must not have run: " << r.out;
}

TEST(CliReplay, StopAfter) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce --stop-after=simplify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("const 0.96017027"), std::string::npos) << "dce must not have run: " << r.out;
}

TEST(CliReplay, EmitJsonAndOutputFile) {
  auto out = write_temp("out.json", "");
  auto r = run_cli("replay " + file() + " --passes=dce --emit=json -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(nlohmann::json::parse(slurp(out))["format"], "passbench-ir");
}

TEST(CliReplay, RunAfterThePipeline) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dce --run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(nlohmann::json::parse(r.out)["fields"]["y"]["data"][0].get<double>(), -0.2794155, 1e-6);
}

TEST(CliReplay, BadPipelineIsAUsageErrorWithTheNearestName) {
  auto r = run_cli("replay " + file() + " --passes=simplify,dcee");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown pass 'dcee' (did you mean 'dce'?)"), std::string::npos) << r.err;
  r = run_cli("replay " + file());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--passes"), std::string::npos) << r.err;
  r = run_cli("replay " + file() + " --passes=dce --print-after=dcee");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliReplay, ReplaysAFixtureWithItsPipeline) {
  auto fx =
      write_temp("fx.fixture.json", nlohmann::json{{"kernel_text", kKernel}, {"pipeline", "simplify,dce"}}.dump());
  auto r = run_cli("replay " + fx);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("cos"), std::string::npos) << r.out;
}

TEST(CliPasses, ListsPassesOptionsAndStatistics) {
  auto r = run_cli("passes");
  ASSERT_EQ(r.exit_code, 0);
  for (const char* s :
       {"dce", "simplify", "renumber", "max_rounds (int >= 1, default 16)", "statistics: removed", "cleanup"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

}  // namespace

namespace {

// An input the verifier rejects is the input's fault: exit 2 before any pass runs, no
// reproducer (dce used to erase the broken statement and succeed).
TEST(CliReplayInput, InvalidInputIsAUserErrorBeforeAnyPass) {
  auto k = pb::test::write_temp("bad_types.chi",
                                "kernel {\n  <f32> $0 = const 1\n  <i32> $2 = const 2\n  <f32> $1 = add $0 $2\n}\n");
  auto r = pb::test::run_cli("replay " + k + " --passes=dce");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("add operand types differ"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no pass ran"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("reproducer"), std::string::npos) << r.err;
}

// A construct a pass documents as rejected is a user error (exit 2), as in run --grad and
// gradcheck, not a pass failure with a crash reproducer.
TEST(CliReplayInput, DocumentedRejectionIsExit2WithoutReproducer) {
  auto r = pb::test::run_cli("replay " + pb::test::source_path("fixtures/autodiff/while_rejected.chi") +
                             " --passes=reverse_ad");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("rejects this kernel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("while loops and continue have no reverse"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("reproducer"), std::string::npos) << r.err;
}

// Option values outside a declared range are usage errors located in the pipeline string.
TEST(CliReplayInput, OutOfRangeOptionIsALocatedUsageError) {
  auto k = pb::test::source_path("fixtures/autodiff/binary_mul_f32.chi");
  auto r = pb::test::run_cli("replay " + k + " --passes='simplify{max_rounds=-1}'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--passes:1:21: error: option 'max_rounds' expects an integer >= 1, got '-1'"),
            std::string::npos)
      << r.err;
  r = pb::test::run_cli("replay " + k + " --passes='reverse_ad{ad_stack_size=-5}'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("option 'ad_stack_size' expects an integer >= 0"), std::string::npos) << r.err;
}

}  // namespace

namespace {

std::string mul_kernel() { return pb::test::source_path("fixtures/autodiff/binary_mul_f32.chi"); }

// --print-after takes what the pipeline and dump headers spell: a named pipeline (its last
// pass) and a pass with options; both were "unknown pass" before.
TEST(CliReplaySelectors, NamedPipelinesAndSpelledOptionsSelectPasses) {
  auto r = run_cli("replay " + mul_kernel() + " --passes=reverse_ad --print-after=reverse_ad");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("# *** IR Dump After determine_ad_stack_size"), std::string::npos) << r.err;
  r = run_cli("replay " + mul_kernel() +
              " --passes=reverse_ad --print-after='replace_locals_with_stacks{ad_stack_size=0}'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("# *** IR Dump After replace_locals_with_stacks{ad_stack_size=0}"), std::string::npos) << r.err;
  r = run_cli("replay " + mul_kernel() +
              " --passes=reverse_ad --print-after='replace_locals_with_stacks{ad_stack_size=4}'");
  EXPECT_EQ(r.exit_code, 2);  // that spelling is not in the pipeline
}

// Naming a pass the pipeline does not run is an error, not silently nothing.
TEST(CliReplaySelectors, APassNotInThePipelineIsAnError) {
  for (const char* option : {"--stop-after=dce", "--print-before=dce", "--stop-before=dce", "--print-after=dce"}) {
    auto r = run_cli("replay " + mul_kernel() + " --passes=simplify " + option);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_NE(r.err.find("no pass of the pipeline 'simplify' matches"), std::string::npos) << r.err;
  }
}

TEST(CliReplaySelectors, StopBeforePrintBeforeAllAndPipelinePasses) {
  auto r = run_cli("replay " + mul_kernel() + " --passes=reverse_ad --stop-before=make_adjoint --print-before-all");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("# *** IR Dump Before relayout"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("# *** IR Dump Before make_adjoint"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("_grad], index"), std::string::npos) << r.out;  // no reverse code yet
  r = run_cli("replay " + mul_kernel() + " --passes='cleanup,reverse_ad{use_stack=false}' --print-pipeline-passes");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 13), "simplify,dce,");
  EXPECT_NE(r.out.find("make_adjoint"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("replace_locals_with_stacks"), std::string::npos) << r.out;
}

// --stats hides zero counters (and says how many), --stats-all shows them.
TEST(CliReplaySelectors, StatsHideZerosUnlessAll) {
  auto r = run_cli("replay " + mul_kernel() + " --passes=reverse_ad --stats");
  EXPECT_EQ(r.err.find("0  backup_ssa.spilled"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("zero counters not shown"), std::string::npos) << r.err;
  r = run_cli("replay " + mul_kernel() + " --passes=reverse_ad --stats --stats-all");
  EXPECT_NE(r.err.find("0  backup_ssa.spilled"), std::string::npos) << r.err;
}

}  // namespace
