// determine_ad_stack_size against the interpreter on every gradient fixture: no stack may be
// smaller than the deepest depth the reverse run reaches (that would be an overflow), and a
// constant bound must equal it (anything above is waste). Symbolic bounds are over-approximations
// by design (a maximum over a loop's range); their waste ratio is reported, not asserted. The
// table is written to stack_sizing.json in the working directory (docs/performance.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/fixture_params.h"
#include "workbench/workspace/gradient.h"

namespace fs = std::filesystem;
using namespace pb;

namespace {

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(StackSizing, BoundsMatchTheDeepestObservedDepth) {
  nlohmann::json table = nlohmann::json::array();
  size_t fixtures = 0, stacks = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(PASSBENCH_SOURCE_DIR) / "fixtures")) {
    if (!e.path().string().ends_with(".fixture.json")) continue;
    auto fx = read_json(e.path());
    std::string pipeline = fx.value("pipeline", "");
    if (!fx.contains("grad") || !pipeline.starts_with("reverse_ad") || fx["expect"].contains("error")) continue;
    auto kernel =
        test::fixture_kernel(fx, fs::relative(e.path(), fs::path(PASSBENCH_SOURCE_DIR) / "fixtures").string());
    workbench::RunRequest req;
    if (fx.contains("inputs")) req.inputs = fx["inputs"];
    const nlohmann::json seeds = fx["grad"].value("seed", nlohmann::json::object());  // items() must not outlive it
    for (const auto& [field, v] : seeds.items()) req.seed_grads.emplace_back(field, v.get<double>());
    auto out = workbench::run_with_gradients(*kernel, pipeline, req);
    ++fixtures;
    for (const auto& s : out.stacks) {
      ++stacks;
      std::string where =
          fs::relative(e.path(), PASSBENCH_SOURCE_DIR).string() + " stack $" + std::to_string(s.stack_id);
      EXPECT_TRUE(s.capacity == 0 || s.deepest <= s.capacity) << where << ": deeper than its capacity";
      bool fixed_by_user = pipeline.find("ad_stack_size=") != std::string::npos;
      if (!s.symbolic && !fixed_by_user && s.deepest > 0) {
        EXPECT_EQ(s.capacity, s.deepest) << where << ": constant bound is not exact";
      }
      table.push_back({{"stack", where},
                       {"deepest", s.deepest},
                       {"capacity", s.capacity},
                       {"symbolic", s.symbolic},
                       {"ratio", s.deepest ? double(s.capacity) / double(s.deepest) : 0.0}});
    }
  }
  EXPECT_GT(fixtures, 100u);
  EXPECT_GT(stacks, 100u);
  std::ofstream("stack_sizing.json") << table.dump(1) << "\n";
}
