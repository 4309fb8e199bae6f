// Forward mode and the global data access rule through the binary: `run --dual`, `jvpcheck`,
// `adjointcheck` and `run --check-global-access`. Kernels with hand-written tangent code and
// `--passes=renumber` (which leaves them as they are) show that the checks fail when tangents are
// wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::write_temp;

namespace {

// y[i] = op(x[i]) over i in [0, 4).
std::string unary(const std::string& op) {
  return R"(field x : f32[4] grad x_grad
field y : f32[4] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = )" +
         op + R"( $5 $5
    <*f32> $7 = global ptr [y], index [$3] activate=true
    $8 : global store [$7 <- $6]
  }
}
)";
}

// y = x * x with hand-written tangent code dy = factor * x * dx (2 is right).
std::string square_with_tangent(const char* factor) {
  return std::string(R"(field x : f32[4] grad x_grad dual x_dual
field y : f32[4] grad y_grad dual y_dual
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <f32> $20 = const )") +
         factor + R"(
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = mul $5 $5
    <*f32> $7 = global ptr [y], index [$3] activate=true
    $8 : global store [$7 <- $6]
    <*f32> $9 = global ptr [x_dual], index [$3] activate=true
    <f32> $10 = global load $9
    <f32> $11 = mul $20 $5
    <f32> $12 = mul $11 $10
    <*f32> $13 = global ptr [y_dual], index [$3] activate=true
    $14 : global store [$13 <- $12]
  }
}
)";
}

std::string inputs(const std::vector<double>& x) {
  static int n = 0;
  return write_temp("fwd_inputs_" + std::to_string(n++) + ".json",
                    nlohmann::json{{"fields", {{"x", {{"data", x}}}}}}.dump());
}

TEST(CliRunDual, PrintsTangents) {
  auto f = write_temp("fwd_square.chi", unary("mul"));
  auto r = run_cli("run " + f + " --dual --seed-dual x=1 --inputs " + inputs({0.5, -1, 2, 0}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fields"]["y"]["dual"], nlohmann::json({1.0, -2.0, 4.0, 0.0}));  // 2x
  EXPECT_EQ(j["fields"]["x"]["dual"], nlohmann::json({1.0, 1.0, 1.0, 1.0}));
}

TEST(CliRunDual, SeedDualNeedsDualAndExcludesGrad) {
  auto f = write_temp("fwd_square2.chi", unary("mul"));
  EXPECT_EQ(run_cli("run " + f + " --seed-dual x=1").exit_code, 2);
  EXPECT_EQ(run_cli("run " + f + " --dual --grad").exit_code, 2);
  auto r = run_cli("run " + f + " --dual --seed-dual nope=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
}

TEST(CliJvpcheck, CorrectTangentsPass) {
  auto f = write_temp("jvp_square.chi", unary("mul"));
  auto r = run_cli("jvpcheck " + f + " --wrt x --out y --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("jvpcheck: PASS: 16 element(s), 16 compared, 0 mismatch(es)"), std::string::npos) << r.out;
}

TEST(CliJvpcheck, WithoutWrtAndOutTheWrittenArraysAreTheOutputs) {
  auto f = write_temp("jvp_square_default.chi", unary("mul"));
  auto r = run_cli("jvpcheck " + f + " --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("jvpcheck: PASS: 16 element(s), 16 compared, 0 mismatch(es)"), std::string::npos) << r.out;
}

TEST(CliJvpcheck, NoOutputNamesTheArraysAndTheCommand) {
  // y is never written: every array is an input, and the error names them and the command.
  std::string k = unary("mul");
  k = k.substr(0, k.find("    <*f32> $7")) + "  }\n}\n";
  auto f = write_temp("jvp_no_output.chi", k);
  auto r = run_cli("jvpcheck " + f + " --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("jvpcheck: no output array to compare (the kernel's differentiable arrays: x, y)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--wrt x --out y"), std::string::npos) << r.err;
}

TEST(CliJvpcheck, WrongTangentsFailNamingTheElements) {
  auto f = write_temp("jvp_wrong.chi", square_with_tangent("3"));
  auto r = run_cli("jvpcheck " + f + " --wrt x --out y --passes=renumber --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("dy[2]/dx[2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  auto ok = run_cli("jvpcheck " + write_temp("jvp_right.chi", square_with_tangent("2")) +
                    " --wrt x --out y --passes=renumber --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

TEST(CliJvpcheck, NothingComparedFails) {
  // |x| at x = 0 everywhere: every element is a kink, so nothing is compared.
  std::string k = unary("mul");
  k.replace(k.find("mul $5 $5"), 9, "abs $5");
  auto r = run_cli("jvpcheck " + write_temp("jvp_kinks.chi", k) + " --wrt x --out y --inputs " + inputs({0, 0, 0, 0}));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("0 compared"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing compared"), std::string::npos) << r.out;
}

TEST(CliAdjointcheck, ForwardAndReverseAgree) {
  for (const char* op : {"mul", "atan2", "pow", "div"}) {
    auto r = run_cli("adjointcheck " + write_temp(std::string("adj_") + op + ".chi", unary(op)) + " --inputs " +
                     inputs({0.5, 1.25, 2, 0.75}));
    EXPECT_EQ(r.exit_code, 0) << op << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("adjointcheck: PASS: 3 trial(s)"), std::string::npos) << r.out;
  }
}

TEST(CliAdjointcheck, WrongTangentsDisagreeWithReverseMode) {
  auto r = run_cli("adjointcheck " + write_temp("adj_wrong.chi", square_with_tangent("3")) +
                   " --forward-passes=renumber --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
}

TEST(CliAdjointcheck, NothingTouchedFails) {
  // Reads x into a field without a gradient: the Jacobian over x, y is the identity.
  std::string k = unary("mul");
  k.replace(k.find("field y : f32[4] grad y_grad"), 28, "field y : f32[4]");
  auto r = run_cli("adjointcheck " + write_temp("adj_identity.chi", k) + " --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing was checked"), std::string::npos) << r.out;
}

// v : [Tensor (2) f32][4]: v[i][1] = v[i][0], reading the whole cell v[i] (a tensor load and
// get_element) or only its element 0 (a shift ptr), and writing element 1 through a shift ptr.
std::string tensor_cell_write(bool whole_cell) {
  std::string read = whole_cell ? R"(    <[Tensor (2) f32]> $7 = global load $6
    <f32> $8 = get_element($7, 0)
)"
                                : R"(    <*f32> $7 = shift ptr [$6 + $0]
    <f32> $8 = global load $7
)";
  return R"(field v : [Tensor (2) f32][4] grad v_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <i32> $2 = const 1
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <*[Tensor (2) f32]> $6 = global ptr [v], index [$4] activate=true
)" + read +
         R"(    <*f32> $9 = shift ptr [$6 + $2]
    $10 : global store [$9 <- $8]
  }
}
)";
}

TEST(CliCheckGlobalAccess, ATensorKernelIsCheckedScalarized) {
  auto in = write_temp("ga_tensor_inputs.json", R"({"fields": {"v": {"data": [[1, 2], [3, 4], [5, 6], [7, 8]]}}})");
  // The whole cell read, then element 1 written: element [0, 1] of the scalarized field.
  auto whole = write_temp("ga_tensor_whole.chi", tensor_cell_write(true));
  auto r = run_cli("run " + whole + " --check-global-access --inputs " + in);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("field 'v', element [0, 1], is written after it was read"), std::string::npos) << r.err;
  // Element 0 read, element 1 written: never the same element.
  auto apart = run_cli("run " + write_temp("ga_tensor_apart.chi", tensor_cell_write(false)) +
                       " --check-global-access --inputs " + in);
  EXPECT_EQ(apart.exit_code, 0) << apart.err;
  auto values = nlohmann::json::parse(apart.out);
  EXPECT_EQ(values["fields"]["v"]["data"], nlohmann::json({1.0, 1.0, 3.0, 3.0, 5.0, 5.0, 7.0, 7.0}));
}

TEST(CliJvpcheck, TensorKernelsGoThroughScalarize) {
  auto f = write_temp("jvp_tensor.chi", tensor_cell_write(false));
  auto in = write_temp("jvp_tensor_inputs.json", R"({"fields": {"v": {"data": [[1, 2], [3, 4], [5, 6], [7, 8]]}}})");
  auto refused = run_cli("jvpcheck " + f + " --inputs " + in);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("`scalarize,forward_ad`"), std::string::npos) << refused.err;
  auto r = run_cli("jvpcheck " + f + " --passes=scalarize,forward_ad --wrt v --out v --inputs " + in);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("jvpcheck: PASS: 64 element(s), 64 compared"), std::string::npos) << r.out;
  auto adj = run_cli("adjointcheck " + f +
                     " --forward-passes=scalarize,forward_ad --reverse-passes=scalarize,reverse_ad --inputs " + in);
  EXPECT_EQ(adj.exit_code, 0) << adj.out << adj.err;
}

TEST(CliCheckGlobalAccess, FirstViolatingWriteNamesElementAndIterations) {
  // y[i] = y[i] * y[i]: read, then written.
  std::string k = unary("mul");
  k.replace(k.find("global ptr [x], index [$3]"), 26, "global ptr [y], index [$3]");
  auto f = write_temp("ga_violation.chi", k);
  auto r = run_cli("run " + f + " --check-global-access --inputs " + inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("field 'y', element [0], is written after it was read"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in iteration 0 of the top-level loop"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli("run " + f + " --inputs " + inputs({0.5, -1, 2, 0.25})).exit_code, 0);
  auto fine = run_cli("run " + write_temp("ga_fine.chi", unary("mul")) + " --check-global-access --inputs " +
                      inputs({0.5, -1, 2, 0.25}));
  EXPECT_EQ(fine.exit_code, 0) << fine.err;
}

}  // namespace
