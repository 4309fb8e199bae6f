// The CLI's exit codes and messages: 0 success, 1 check/verification/run failure, 2 usage or
// bad input; never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::source_path;
using pb::test::write_temp;

namespace {

const char* kValid = R"(field x : f32[3] grad x_grad
field y : f32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = mul $5 $5
    <*f32> $7 = global ptr [y], index [] activate=true
    <f32> $8 = atomic add($7, $6)
  }
}
)";

TEST(CliPrint, CanonicalTextRoundTrips) {
  auto r = run_cli("print " + write_temp("valid.chi", kValid));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kValid);
}

TEST(CliPrint, ReadsStdin) {
  auto r = run_cli("print -", kValid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kValid);
}

TEST(CliPrint, JsonAndBackGiveTheSameText) {
  auto j = run_cli("print --emit=json " + write_temp("valid2.chi", kValid));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["format"], "passbench-ir");
  auto back = run_cli("print " + write_temp("valid2.json", j.out));
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, kValid);
}

TEST(CliPrint, RenumberMakesIdsDense) {
  auto r = run_cli("print --renumber -", "kernel {\n  <i32> $10 = const 1\n  <i32> $20 = add $10 $10\n}\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kernel {\n  <i32> $0 = const 1\n  <i32> $1 = add $0 $0\n}\n");
}

TEST(CliVerify, ValidKernelPrintsOk) {
  auto r = run_cli("verify " + write_temp("v.chi", kValid));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

TEST(CliVerify, WrongTypesNameTheStatementAndExit1) {
  auto r = run_cli("verify -", "kernel {\n  <f32> $0 = const 1\n  <i32> $1 = const 2\n  <f32> $2 = add $0 $1\n}\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("<f32> $2 = add $0 $1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("types differ"), std::string::npos) << r.err;
}

struct BadInput {
  const char* name;
  std::string text;
  const char* message;  // substring of stderr
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class CliBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, IsALocatedErrorWithExit2) {
  const auto& p = GetParam();
  std::string file = write_temp(std::string(p.name) + ".chi", p.text);
  for (const char* cmd : {"print", "verify", "run"}) {
    auto r = run_cli(std::string(cmd) + " " + file);
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(p.message), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(file + ":"), std::string::npos) << "no file:line:col in: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, CliBadInput,
    testing::Values(
        BadInput{"empty", "", "empty input"}, BadInput{"blank", "\n  \n\t\n", "empty input"},
        BadInput{"garbage",
                 std::string("\x7f"
                             "ELF\x01\x02\x00\xff\xfe binary",
                             15),
                 "binary data (15 bytes), not IR text or a JSON kernel"},
        BadInput{"truncated", "kernel {\n  <i32> $0 = const 0\n  $1 : if $0 {\n", "unexpected end of input"},
        BadInput{"unknown_stmt", "kernel {\n  <f32> $0 = frobnicate\n}\n", "unknown statement 'frobnicate'"},
        BadInput{"unsupported", "kernel {\n  <i32> $4 = argload[0, 1]\n}\n",
                 "unsupported statement 'argload of a struct argument member' at line 2"},
        BadInput{"undefined_ref", "kernel {\n  <f32> $0 = neg $5\n}\n", "2:18: error: undefined statement $5"},
        BadInput{"bad_const", "kernel {\n  <i32> $0 = const 1.5\n}\n", "not a valid i32 constant"}),
    [](const testing::TestParamInfo<BadInput>& p) { return std::string(p.param.name); });

TEST(CliBadInput, BinaryDataIsNamedNotEchoed) {
  std::string file = write_temp("binary.chi", std::string("\x7f"
                                                          "ELF\x01\x02\x00\xff\xfe binary",
                                                          15));
  auto r = run_cli("verify " + file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("binary data (15 bytes)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("ELF"), std::string::npos) << "the bytes are echoed back: " << r.err;
}

TEST(CliBadInput, ADirectoryIsNamedAsOne) {
  std::string dir = std::filesystem::temp_directory_path().string();
  auto r = run_cli("verify " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'" + dir + "' is a directory, not a file"), std::string::npos) << r.err;
}

TEST(CliBadInput, AnUnclosedOptionListPointsAtItsBrace) {
  std::string file = write_temp("unclosed.chi", "kernel {\n  <f32> $0 = const 1\n}\n");
  auto r = run_cli("replay " + file + " --passes='simplify{'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("1:9: error: the option list of 'simplify' opened here is not closed"), std::string::npos)
      << r.err;
  auto r2 = run_cli("replay " + file + " --passes='simplify{max_rounds=2'");
  EXPECT_NE(r2.err.find("the option list of 'simplify' opened here is not closed"), std::string::npos) << r2.err;
}

TEST(CliBadInput, MissingFileIsExit2) {
  auto r = run_cli("print /nonexistent/kernel.chi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot read '/nonexistent/kernel.chi'"), std::string::npos) << r.err;
}

TEST(CliBadInput, MalformedJsonIsLocated) {
  auto r = run_cli("print " + write_temp("bad.json", "{\n  \"format\": \"passbench-ir\",\n  \"fields\": [,]\n}\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.json:3:"), std::string::npos) << r.err;
}

TEST(CliUsage, UnknownSubcommandAndMissingArgsAreExit2) {
  EXPECT_EQ(run_cli("frobnicate").exit_code, 2);
  EXPECT_EQ(run_cli("print").exit_code, 2);
  EXPECT_EQ(run_cli("print --emit=xml x.chi").exit_code, 2);
  EXPECT_EQ(run_cli("").exit_code, 2);
}

TEST(CliUsage, HelpIsExit0AndListsSubcommands) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"print", "verify", "run", "fixture"}) EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
}

TEST(CliRun, PrintsFieldsAsJson) {
  auto in = write_temp("in.json", R"({"fields": {"x": {"data": [1, 2, 3]}}})");
  auto r = run_cli("run " + write_temp("run.chi", kValid) + " --inputs " + in);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fields"]["y"]["data"][0].get<double>(), 14.0);
  EXPECT_EQ(j["fields"]["x"]["grad"].size(), 3u);
}

TEST(CliRun, SeedGradSetsEveryGradientElement) {
  auto r = run_cli("run " + write_temp("seed.chi", kValid) + " --seed-grad x=2.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const auto& g : j["fields"]["x"]["grad"]) EXPECT_EQ(g.get<double>(), 2.5);
}

TEST(CliRun, BadSeedGradIsUsageError) {
  auto f = write_temp("seed2.chi", kValid);
  auto r = run_cli("run " + f + " --seed-grad x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("FIELD=VALUE"), std::string::npos) << r.err;
  r = run_cli("run " + f + " --seed-grad nope=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no field named 'nope'"), std::string::npos) << r.err;
  r = run_cli("run " + f + " --seed-grad y=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has no gradient field"), std::string::npos) << r.err;
}

TEST(CliRun, BadInputsFileIsExit2) {
  auto f = write_temp("bi.chi", kValid);
  auto r = run_cli("run " + f + " --inputs " + write_temp("bi.json", R"({"fields": {"x": {"data": [1, 2]}}})"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("x"), std::string::npos) << r.err;
  r = run_cli("run " + f + " --inputs " + write_temp("bi2.json", "{\"fields\": "));
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliRun, StackOverflowIsARunTimeErrorWithExit1) {
  auto r = run_cli("run " + source_path("fixtures/errors/adstack_overflow.chi"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("max_size=4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("overflow"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(CliRun, InvalidKernelIsRefusedBeforeRunning) {
  auto r = run_cli("run " + source_path("fixtures/errors/not_dominating.chi"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("does not dominate"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// `while true` ends with the step-budget error (exit 1), not a hang.
TEST(CliRun, MaxStepsEndsAnEndlessLoop) {
  auto k = write_temp("spin.chi", R"(kernel "spin" {
  <i32> $0 = const 1
  <*i32> $1 = alloca
  $4 : local store [$1 <- $0]
  $2 : while true {
    $3 : while control $1, $0
  }
}
)");
  auto r = run_cli("run " + k + " --max-steps 5000");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("max_steps=5000"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`$2 : while true {`"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// A UTF-8 byte-order mark before the text is accepted (it was a parse error at 1:1).
TEST(CliInput, ByteOrderMarkIsAccepted) {
  auto k = write_temp("bom.chi",
                      "\xEF\xBB\xBF"
                      "kernel {\n  <i32> $0 = const 1\n}\n");
  auto r = run_cli("print " + k);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kernel {\n  <i32> $0 = const 1\n}\n");
}

// `-o -` means standard output (it created a file named "-").
TEST(CliInput, NumberTooLargeForADoubleIsALocatedJsonError) {
  std::string f = write_temp("big.json", "{\"args\":[],\n \"body\":[{\"id\":1e400,\"kind\":\"const\"}]}\n");
  auto r = run_cli("print " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("big.json:2:16: error: invalid JSON: number overflow parsing '1e400'"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("unexpected"), std::string::npos) << r.err;
}

TEST(CliOutput, DashIsStandardOutput) {
  auto k = write_temp("dash.chi", "kernel {\n  <i32> $0 = const 1\n}\n");
  auto dir = std::filesystem::path(k).parent_path();
  auto r = run_cli("replay " + k + " --passes=dce -o -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kernel {\n}\n");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::current_path() / "-"));
}

// A value outside the element type is an error naming the inputs file, the field and the
// element (1e39 became infinity in f32).
TEST(CliInput, ValueOutsideTheElementTypeNamesFileFieldAndElement) {
  auto k = write_temp("range.chi", "field x : f32[3]\nfield m : i32[3]\nkernel {\n}\n");
  auto f32_in = write_temp("range_f32.json", R"({"fields": {"x": {"data": [1, 1e39, 2]}}})");
  auto r = run_cli("run " + k + " --inputs " + f32_in);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(f32_in + ": field 'x' data element 1: 1e+39 is out of range for f32"), std::string::npos)
      << r.err;
  auto i32_in = write_temp("range_i32.json", R"({"fields": {"m": {"data": [1099511627776, 1, 2]}}})");
  r = run_cli("run " + k + " --inputs " + i32_in);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(i32_in + ": field 'm' data element 0: 1099511627776 is out of range for i32"), std::string::npos)
      << r.err;
}

}  // namespace

namespace {

// run and gradcheck take a fixture file, as replay and compile do (they refused it), and a
// remedy names the file instead of the word FILE.
TEST(CliInput, RunAndGradcheckTakeAFixtureAndRemediesNameTheFile) {
  auto fx = source_path("fixtures/autodiff/binary_mul_f32.fixture.json");
  EXPECT_EQ(run_cli("run " + fx).exit_code, 0);
  EXPECT_EQ(run_cli("gradcheck " + fx + " --loss y").exit_code, 0);
  auto k = source_path("fixtures/autodiff/while_rejected.chi");
  auto r = run_cli("gradcheck " + k + " --loss y");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("`passbench replay " + k + " --passes='reverse_ad'`"), std::string::npos) << r.err;
}

// Without --inputs, a fixture runs with its own inputs (it used to run with none: an ndarray
// kernel stopped at "argument 0 is missing"); --inputs still wins.
TEST(CliInput, AFixtureRunsWithItsOwnInputs) {
  auto fx = source_path("fixtures/global_access/ndarray_violation.fixture.json");
  auto r = run_cli("run " + fx);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0.20000000298023224"), std::string::npos) << r.out;  // a[0] = 0.1 + 0.1
  r = run_cli("replay " + fx + " --passes=dce --run");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0.20000000298023224"), std::string::npos) << r.out;
  r = run_cli("run " + fx + " --check-global-access");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("ndarray argument 0, element [0],"), std::string::npos) << r.err;
  auto empty = std::filesystem::temp_directory_path() / "passbench_no_args.inputs.json";
  std::ofstream(empty) << "{}";
  r = run_cli("run " + fx + " --inputs " + empty.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("argument 0 is missing"), std::string::npos) << r.err;
}

// gradcheck on a fixture takes its loss and wrt from the fixture's "gradcheck", as run takes its
// inputs; a kernel file without --loss says to name one.
TEST(CliInput, GradcheckOnAFixtureUsesItsLossAndWrt) {
  auto fx = source_path("fixtures/autodiff/sparse_struct_for.fixture.json");
  auto r = run_cli("gradcheck " + fx);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("d(y = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(") / d(x); "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gradcheck: PASS: 8 element(s), 8 compared"), std::string::npos) << r.out;
  auto plain = run_cli("gradcheck " + source_path("fixtures/autodiff/binary_mul_f32.chi"));
  EXPECT_EQ(plain.exit_code, 2) << plain.err;
  EXPECT_NE(plain.err.find("gradcheck needs a loss"), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("--loss y"), std::string::npos) << plain.err;
}

}  // namespace

namespace {

// A misspelled option gets the nearest one of its command, as opt does.
TEST(CliUsage, MisspelledOptionSuggestsTheNearest) {
  auto k = source_path("fixtures/autodiff/binary_mul_f32.chi");
  auto r = run_cli("replay " + k + " --passes=dce --prnt-after=dce");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean '--print-after' (instead of '--prnt-after')?"), std::string::npos) << r.err;
  r = run_cli("run " + k + " --max-step 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean '--max-steps'"), std::string::npos) << r.err;
  r = run_cli("run " + k + " --completely-unrelated-flag");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// The bundled dump runs with the bundled inputs as pasted (no header): the inputs give every
// field's shape (it failed with "shape is unknown" unless the header variant was used).
TEST(CliRun, BundledDumpRunsWithItsInputsWithoutTheHeader) {
  for (const char* dump :
       {"fixtures/dumps/quadrants_issue_example.chi", "fixtures/dumps/quadrants_issue_example_header.chi"}) {
    auto r = run_cli("run " + source_path(dump) + " --inputs " +
                     source_path("fixtures/dumps/quadrants_issue_example.inputs.json"));
    EXPECT_EQ(r.exit_code, 0) << dump << "\n" << r.err;
  }
}

}  // namespace
