// `passbench difftest` through the binary: a fixture passes, a race is named and not failed, a
// kernel with nothing to compare does not pass, shards split a seed range, misuse is exit 2.
// tests/workbench/difftest_test.cpp plants wrong backends and passes to show each oracle fails.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::write_temp;

namespace {

const std::string kFixture = std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/autodiff/binary_mul_f32.fixture.json";

TEST(CliDifftest, AFixturePassesEveryOracleThatApplies) {
  auto r = run_cli("difftest " + kFixture + " --backend=interp,cpu");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* line : {"PASS    backends:cpu", "PASS    gradcheck:interp", "PASS    gradcheck:cpu",
                           "PASS    adjointcheck:cpu", "PASS    jvpcheck:interp", "PASS    pipeline:simplify,dce",
                           "PASS    pipeline:scalarize,lower_access,offload", "PASS    global-access"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_EQ(r.out.find("vulkan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0 fail,"), std::string::npos) << r.out;
}

TEST(CliDifftest, ARaceIsNamedNotFailed) {
  std::string k = write_temp("race.chi", R"(field x : f32[4] grad x_grad
field y : f32[4] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [$0] activate=true
    $7 : global store [$6 <- $5]
  }
}
)");
  std::string in = write_temp("race.json", R"({"fields": {"x": {"data": [1, 2, 3, 4]}}})");
  auto r = run_cli("difftest " + k + " --inputs " + in + " --backend=interp,cpu");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("racing between parallel iterations: y"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REFUSED gradcheck:interp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("depends on the order of parallel iterations (y)"), std::string::npos) << r.out;
}

TEST(CliDifftest, NothingComparedIsNotAPass) {
  std::string k = write_temp("empty.chi", "kernel {\n}\n");
  auto r = run_cli("difftest " + k + " --backend=interp");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("PASS "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing was checked"), std::string::npos) << r.out;
}

TEST(CliDifftest, ShardsSplitASeedRange) {
  auto r = run_cli("difftest --seeds=0:6 --shard=1/3 -v --backend=interp");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("seed 1: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seed 4: "), std::string::npos) << r.out;
  for (const char* other : {"seed 0: ", "seed 2: ", "seed 3: ", "seed 5: "})
    EXPECT_EQ(r.out.find(other), std::string::npos) << other << "\n" << r.out;
  EXPECT_NE(r.out.find("2 kernel(s), 0 with findings"), std::string::npos) << r.out;
}

TEST(CliDifftest, MisuseIsAUsageError) {
  const std::vector<std::string> misuses = {"difftest", "difftest " + kFixture + " --seeds=0:2",
                                            "difftest " + kFixture + " --shard=0/2", "difftest --seeds=0:4 --shard=4/4",
                                            "difftest --seeds=4:0"};
  for (const std::string& args : misuses) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
  }
}

TEST(CliDifftest, BadInputsAreAUsageErrorNotARefusalPerOracle) {
  std::string in = write_temp("bad_inputs.json", R"({"fields": {"nope": {"data": [1]}}})");
  auto r = run_cli("difftest " + kFixture + " --inputs " + in + " --backend=interp");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("REFUSED"), std::string::npos) << r.out;
}

}  // namespace
