// `passbench run --grad` and `passbench gradcheck` through the binary. Each kernel holds its
// forward code and its hand-written reverse code, and `--passes=renumber` leaves it as it is:
// the reverse run re-runs the forward part (adding into y again, which no gradient reads) and
// the reverse part reads the seeded y_grad, which is 0 during forward runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::write_temp;

namespace {

// y[] += f(x[i]) ($6); x_grad[i] += g ($13), from x ($5) and y_grad ($10), over i in [0, n).
std::string kernel(int n, const std::string& forward, const std::string& reverse) {
  return "field x : f32[" + std::to_string(n) + R"(] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const )" +
         std::to_string(n) + R"(
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
)" + forward +
         R"(    <*f32> $7 = global ptr [y], index [] activate=true
    <f32> $8 = atomic add($7, $6)
    <*f32> $9 = global ptr [y_grad], index [] activate=true
    <f32> $10 = global load $9
)" + reverse +
         R"(    <*f32> $14 = global ptr [x_grad], index [$3] activate=true
    <f32> $15 = atomic add($14, $13)
  }
}
)";
}

// y = sum x^2; the reverse part multiplies by `factor` (2 is right).
std::string square(int n, const char* factor) {
  return kernel(
      n, "    <f32> $6 = mul $5 $5\n",
      std::string("    <f32> $11 = const ") + factor + "\n    <f32> $12 = mul $11 $5\n    <f32> $13 = mul $12 $10\n");
}

// y = sum |x|; the reverse part says d|x|/dx = 1 at x = 0, where the finite difference gives 0.
const std::string kAbs = kernel(4, "    <f32> $6 = abs $5\n",
                                "    <f32> $11 = const 0\n    <u1> $12 = cmp_ge $5 $11\n    <f32> $16 = neg $10\n"
                                "    <f32> $13 = select($12, $10, $16)\n");

std::string inputs(int n) {
  nlohmann::json x = nlohmann::json::array();
  for (int i = 0; i < n; ++i) x.push_back(i % 2 ? -0.5 * i : 0.25 * i);
  return write_temp("grad_inputs_" + std::to_string(n) + ".json",
                    nlohmann::json{{"fields", {{"x", {{"data", x}}}}}}.dump());
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(CliRunGrad, PrintsFieldsWithGradients) {
  auto f = write_temp("grad_square.chi", square(4, "2"));
  auto r = run_cli("run " + f + " --grad --passes=renumber --seed-grad y=2 --inputs " + inputs(4));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fields"]["x"]["grad"], nlohmann::json({0.0, -2.0, 2.0, -6.0}));  // 2 * 2x
  EXPECT_EQ(j["fields"]["y"]["grad"], nlohmann::json({2.0}));
}

TEST(CliRunGrad, PassesWithoutGradIsAUsageError) {
  auto f = write_temp("grad_square2.chi", square(4, "2"));
  auto r = run_cli("run " + f + " --passes=renumber");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--grad"), std::string::npos) << r.err;
}

TEST(CliRunGrad, FailingPipelineIsExit2NamingThePass) {
  auto f = write_temp("grad_square3.chi", square(4, "2"));
  auto r = run_cli("run " + f + " --grad --passes=nonexistent_pass");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nonexistent_pass"), std::string::npos) << r.err;
}

TEST(CliGradcheck, CorrectGradientsPass) {
  auto f = write_temp("gc_square.chi", square(4, "2"));
  auto r = run_cli("gradcheck " + f + " --loss y --passes=renumber --inputs " + inputs(4));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("d(y = 2.75) / d(x)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x[3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gradcheck: PASS: 4 element(s), 4 compared, 0 mismatch(es), 0 kink(s)"), std::string::npos)
      << r.out;
  EXPECT_EQ(count(r.out, "MISMATCH"), 0u);
}

TEST(CliGradcheck, WrongGradientsFailNamingTheElements) {
  auto f = write_temp("gc_wrong.chi", square(4, "3"));
  auto r = run_cli("gradcheck " + f + " --loss y --wrt x --passes=renumber --inputs " + inputs(4));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(count(r.out, "MISMATCH"), 3u) << r.out;  // x[0] = 0 agrees
  size_t row = r.out.find("x[1]");
  ASSERT_NE(row, std::string::npos) << r.out;
  std::string line = r.out.substr(row, r.out.find('\n', row) - row);
  EXPECT_NE(line.find("-1.5"), std::string::npos) << line;  // analytic 3 * x[1] = 3 * -0.5
  EXPECT_NE(line.find("MISMATCH"), std::string::npos) << line;
  EXPECT_NE(r.out.find("gradcheck: FAIL"), std::string::npos) << r.out;
}

TEST(CliGradcheck, TableShowsTheTenWorstPlusEveryMismatch) {
  auto ok = run_cli("gradcheck " + write_temp("gc_16.chi", square(16, "2")) + " --loss y --passes=renumber --inputs " +
                    inputs(16));
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(count(ok.out, "\n  x["), 10u) << ok.out;
  auto bad = run_cli("gradcheck " + write_temp("gc_16_wrong.chi", square(16, "3")) +
                     " --loss y --passes=renumber --inputs " + inputs(16));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(count(bad.out, "MISMATCH"), 15u) << bad.out;
  EXPECT_EQ(count(bad.out, "\n  x["), 15u) << bad.out;
}

TEST(CliGradcheck, KinkIsReportedNotFailed) {
  auto f = write_temp("gc_abs.chi", kAbs);
  auto r = run_cli("gradcheck " + f + " --loss y --passes=renumber --inputs " + inputs(4));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("kinks: 1 element(s) not compared"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": x[0]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 compared, 0 mismatch(es), 1 kink(s)"), std::string::npos) << r.out;
}

TEST(CliGradcheck, TolerancesComeFromTheOptions) {
  auto f = write_temp("gc_wrong2.chi", square(4, "3"));
  auto r = run_cli("gradcheck " + f + " --loss y --passes=renumber --rel 0.5 --inputs " + inputs(4));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("+ 0.5 * max"), std::string::npos) << r.out;
}

TEST(CliGradcheck, BadUsageIsExit2) {
  auto f = write_temp("gc_usage.chi", square(4, "2"));
  auto missing_loss = run_cli("gradcheck " + f + " --passes=renumber");
  EXPECT_EQ(missing_loss.exit_code, 2);
  auto unknown_loss = run_cli("gradcheck " + f + " --loss z --passes=renumber");
  EXPECT_EQ(unknown_loss.exit_code, 2);
  EXPECT_NE(unknown_loss.err.find("no field named 'z'"), std::string::npos) << unknown_loss.err;
  auto bad_wrt = run_cli("gradcheck " + f + " --loss y --wrt y_grad --passes=renumber");
  EXPECT_EQ(bad_wrt.exit_code, 2);
  auto bad_eps = run_cli("gradcheck " + f + " --loss y --eps -1 --passes=renumber");
  EXPECT_EQ(bad_eps.exit_code, 2);
  EXPECT_NE(bad_eps.err.find("--eps"), std::string::npos) << bad_eps.err;
  auto bad_inputs =
      run_cli("gradcheck " + f + " --loss y --passes=renumber --inputs " + write_temp("gc_bad.json", "{"));
  EXPECT_EQ(bad_inputs.exit_code, 2);
}

// x[i] = x[i] * 2 breaks the global data access rule: `replay` of the check, `run --grad` and
// `gradcheck` fail as a check does (exit 1), naming the load and the store and the remedy;
// --global-access=warn differentiates it with a warning.
TEST(CliGradient, GlobalAccessViolationIsAnErrorUnlessWarn) {
  const std::string k = pb::test::source_path("fixtures/autodiff/reject_in_place_scale_global_access.chi");
  const std::string in = write_temp("in_place_scale.json", R"({"fields": {"x": {"data": [1, 2, 3, 4]}}})");
  for (const std::string& cmd :
       {"replay " + k + " --passes=check_global_access", "run " + k + " --grad --seed-grad x=1 --inputs " + in,
        "gradcheck " + k + " --loss x --wrt x --inputs " + in}) {
    auto r = run_cli(cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd << r.err;
    EXPECT_NE(r.err.find("global data access rule: field 'x' is read and then written"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("read:  `<f32> $6 = global load $5`"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("write: `$8 : global store [$5 <- $7]`"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--global-access=warn"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("\"grad\""), std::string::npos) << cmd;
  }
  auto warn = run_cli("run " + k + " --grad --seed-grad x=1 --global-access=warn --inputs " + in);
  EXPECT_EQ(warn.exit_code, 0) << warn.err;
  EXPECT_NE(warn.err.find("warning: check_global_access: global data access rule"), std::string::npos) << warn.err;
  auto out = nlohmann::json::parse(warn.out);
  EXPECT_EQ(out["fields"]["x"]["grad"], nlohmann::json({2.0, 2.0, 2.0, 2.0})) << warn.out;
  auto other = run_cli("run " + k + " --grad --seed-grad x=1 --global-access=warn --passes=cleanup,reverse_ad");
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("reverse_ad{global_access=warn}"), std::string::npos) << other.err;
}

}  // namespace
