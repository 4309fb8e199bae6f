// `passbench fixture new`: a kernel, its pipeline and inputs written as a fixture whose
// expectations come from the current build, checked at once, and pinning what it recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace fs = std::filesystem;
using pb::test::run_cli;
using pb::test::slurp;
using pb::test::write_temp;

namespace {

const std::string kKernel = std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/autodiff_stacks/carried_unary_log_f32.chi";
const char* kInputs = R"({"fields": {"x": {"data": [0.2, 0.9, 1.5, 3.0]}, "n": {"data": [0, 1, 3, 6]}}})";

std::string fresh_path(const std::string& name) {
  fs::path p = fs::path(write_temp(name, "")).replace_filename(name);
  fs::remove(p);
  return p.string();
}

TEST(FixtureNew, GradientFixturePassesAndPinsTheGradients) {
  std::string inputs = write_temp("new_inputs.json", kInputs);
  std::string out = fresh_path("carried_log.fixture.json");
  auto r = run_cli("fixture new " + kKernel + " --inputs " + inputs + " --loss y -o " + out +
                   " --description 'carried log, made by the test'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("wrote " + out + ": PASS"), std::string::npos) << r.out;

  nlohmann::json fx = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(fx["description"], "carried log, made by the test");
  EXPECT_NE(fx["kernel_text"].get<std::string>().find("field y : f32[4] grad y_grad"), std::string::npos);
  EXPECT_EQ(fx["pipeline"], "reverse_ad");  // a loss without --passes differentiates
  EXPECT_EQ(fx["grad"]["seed"]["y"], 1.0);
  EXPECT_EQ(fx["gradcheck"]["loss"], "y");
  ASSERT_TRUE(fx["expect"].contains("ir"));
  ASSERT_TRUE(fx["expect"]["values"]["fields"].contains("x"));
  const auto& x_grad = fx["expect"]["values"]["fields"]["x"]["grad"];
  ASSERT_EQ(x_grad.size(), 4u);
  EXPECT_EQ(x_grad[0], 1.0);  // n = 0: y = x
  EXPECT_GT(x_grad[1].get<double>(), 0.0);

  EXPECT_EQ(run_cli("fixture check " + out).exit_code, 0);
  // What it recorded is pinned: a changed recorded gradient fails the check.
  fx["expect"]["values"]["fields"]["x"]["grad"][1] = x_grad[1].get<double>() * 1.01;
  std::ofstream(out) << fx.dump(2) << "\n";
  auto changed = run_cli("fixture check " + out);
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
}

TEST(FixtureNew, ForwardFixtureFromAPipelineWithoutLoss) {
  std::string inputs = write_temp("new_inputs.json", kInputs);
  std::string out = fresh_path("carried_log_simplify.fixture.json");
  auto r = run_cli("fixture new " + kKernel + " --inputs " + inputs + " --passes=simplify,dce -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json fx = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(fx["pipeline"], "simplify,dce");
  EXPECT_FALSE(fx.contains("gradcheck"));
  EXPECT_TRUE(fx["expect"]["stats"].contains("simplify"));
  ASSERT_TRUE(fx["expect"]["values"]["fields"].contains("y"));
  EXPECT_EQ(fx["expect"]["values"]["fields"]["y"]["data"][0], 0.2f);  // n = 0: y = x
}

TEST(FixtureNew, RefusesToOverwriteAndNamesTheLosses) {
  std::string out = fresh_path("exists.fixture.json");
  std::ofstream(out) << "{}";
  auto exists = run_cli("fixture new " + kKernel + " -o " + out);
  EXPECT_EQ(exists.exit_code, 2);
  EXPECT_NE(exists.err.find(out + " exists"), std::string::npos) << exists.err;
  EXPECT_NE(exists.err.find("--force"), std::string::npos) << exists.err;
  EXPECT_EQ(slurp(out), "{}");
  EXPECT_EQ(run_cli("fixture new " + kKernel + " -o " + out + " --force").exit_code, 0);

  auto bad = run_cli("fixture new " + kKernel + " --loss n -o " + fresh_path("bad_loss.fixture.json"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("'n' is not a float field with a gradient field"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("x, y"), std::string::npos) << bad.err;
}

}  // namespace
