// `passbench bisect-result` as a user runs it: the verdict, the table and the exit codes.
#include <gtest/gtest.h>

#include "cli_helpers.h"

using pb::test::run_cli;

namespace {
const std::string kSource = PASSBENCH_SOURCE_DIR;
}

TEST(CliBisect, PassesThatKeepTheAnswerExitZero) {
  auto r = run_cli("bisect-result " + kSource +
                   "/fixtures/dumps/quadrants_issue_example.chi --passes=simplify,dce,renumber");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no pass changed the answer (3 passes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    2  dce       same              9          0"), std::string::npos) << r.out;
}

TEST(CliBisect, NamesTheFirstPassThatChangedTheAnswer) {
  // The fixture's pipeline and inputs: make_adjoint leaves the forward stores out of the reverse kernel.
  auto r = run_cli("bisect-result " + kSource + "/fixtures/autodiff/binary_mul_f32.fixture.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("first pass that changed the answer: 9. make_adjoint (y[0]: 0.375 vs 0)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("relayout                                     same"), std::string::npos) << r.out;
}

TEST(CliBisect, BadInputIsAUsageError) {
  auto r = run_cli("bisect-result " + kSource + "/fixtures/dumps/quadrants_issue_example_header.chi --passes=dce");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("argument 0 is missing from the inputs"), std::string::npos) << r.err;
  auto bad = run_cli("bisect-result " + kSource + "/fixtures/dumps/quadrants_issue_example.chi --passes=simplfy");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("did you mean 'simplify'"), std::string::npos) << bad.err;
}
