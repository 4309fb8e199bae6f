// Every fixture with inputs runs on the LLVM CPU backend and matches the reference interpreter:
// the kernel after the fixture's pipeline forward, and for autodiff fixtures ("grad" or
// "gradcheck") forward + seeded reverse. Floats match within 1e-5 relative (f32) or 1e-12 (f64);
// integers exactly. A fixture whose run fails on the interpreter must fail on the CPU too. A check
// that compared no element fails. Arrays whose values change when the interpreter runs parallel
// iterations in shuffled orders (order-dependent kernels) are not compared. Sparse spaces' cell
// activity ("active", "length") is compared like a field.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ir/diagnostic.h"
#include "ir/type_uses.h"
#include "ir/verifier.h"
#include "tests/fixture_params.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {
namespace {

struct Compare {
  size_t compared = 0;
  std::vector<std::string> mismatches;
};

// Walks two values JSON trees in step; `f32` tells which tolerance applies to a float leaf.
void compare_json(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, bool f32, Compare& c) {
  if (a.is_object()) {
    if (!b.is_object()) return c.mismatches.push_back(path + ": structure differs");
    for (const auto& [key, va] : a.items()) {
      if (!b.contains(key)) {
        c.mismatches.push_back(path + "." + key + ": missing on cpu");
        continue;
      }
      compare_json(va, b[key], path + "." + key, f32, c);
    }
    return;
  }
  if (a.is_array()) {
    if (!b.is_array() || a.size() != b.size()) return c.mismatches.push_back(path + ": sizes differ");
    for (size_t i = 0; i < a.size(); ++i) compare_json(a[i], b[i], fmt::format("{}[{}]", path, i), f32, c);
    return;
  }
  if (a.is_number_float() || b.is_number_float() || a.is_string()) {
    if (a.is_string() || b.is_string()) {  // "nan", "inf"
      if (a != b) c.mismatches.push_back(fmt::format("{}: interp {} cpu {}", path, a.dump(), b.dump()));
      ++c.compared;
      return;
    }
    double x = a.get<double>(), y = b.get<double>();
    double rel = f32 ? 1e-5 : 1e-12;
    double tol = rel * std::max(std::fabs(x), std::fabs(y)) + (f32 ? 1e-30 : 1e-300);
    if (!(std::fabs(x - y) <= tol)) c.mismatches.push_back(fmt::format("{}: interp {} cpu {}", path, x, y));
    ++c.compared;
    return;
  }
  if (a != b) c.mismatches.push_back(fmt::format("{}: interp {} cpu {}", path, a.dump(), b.dump()));
  ++c.compared;
}

// Field precision from the kernel's declarations: any f32 field makes the whole tree f32-tolerant
// only for that field's entries.
void compare_values(const ir::Kernel& k, const nlohmann::json& a, const nlohmann::json& b, Compare& c) {
  for (const auto& [key, va] : a.items()) {
    if (!b.contains(key)) {
      c.mismatches.push_back(key + ": missing on cpu");
      continue;
    }
    if (key == "fields") {
      for (const auto& [name, fa] : va.items()) {
        auto id = k.find_field(name);
        bool f32 = !id || k.field(*id).dtype != ir::ScalarKind::f64;
        compare_json(fa, b[key].contains(name) ? b[key][name] : nlohmann::json(), "fields." + name, f32, c);
      }
    } else {
      compare_json(va, b[key], key, true, c);
    }
  }
}

class CpuFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuFixture, MatchesTheInterpreter) {
  auto fx = pb::test::read_fixture(GetParam());
  if (!fx.contains("inputs") && !fx.contains("inputs_file") && !fx.contains("run")) GTEST_SKIP() << "nothing to run";
  std::unique_ptr<ir::Kernel> k;
  try {
    // As `passbench run` reads it: a dump's stages and its header-less layout too.
    k = load_source((std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / GetParam()).string()).kernel;
  } catch (const UserError& e) {
    GTEST_SKIP() << "the kernel does not parse (a negative fixture)";
  }
  if (!ir::verify(*k).empty()) GTEST_SKIP() << "the kernel does not verify (a negative fixture)";
  std::string pipeline = fx.value("pipeline", "");
  bool grad = fx.contains("grad") || fx.contains("gradcheck");
  RunRequest req;
  if (fx.contains("inputs_file")) {
    auto dir = (std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / GetParam()).parent_path();
    req.inputs = nlohmann::json::parse(pb::test::read_file(dir / fx["inputs_file"].get<std::string>()));
  } else if (fx.contains("inputs")) {
    req.inputs = fx["inputs"];
  }
  if (fx.contains("run")) {
    if (fx["run"].value("f64", false) || fx["run"].value("shuffle", false))
      GTEST_SKIP() << "interpreter-only run options (f64 or shuffle)";
    if (fx["run"].contains("seed_grad"))
      for (const auto& [name, v] : fx["run"]["seed_grad"].items()) req.seed_grads.emplace_back(name, v.get<double>());
  }
  if (fx.contains("grad")) {
    const nlohmann::json seeds = fx["grad"].value("seed", nlohmann::json::object());  // items() must not outlive it
    for (const auto& [name, v] : seeds.items()) req.seed_grads.emplace_back(name, v.get<double>());
  }
  if (grad && req.seed_grads.empty() && fx.contains("gradcheck"))
    req.seed_grads.emplace_back(fx["gradcheck"]["loss"].get<std::string>(), 1.0);

  std::unique_ptr<ir::Kernel> after;
  if (!grad && !pipeline.empty()) {
    try {
      after = make_reverse_kernel(*k, pipeline);
    } catch (const UserError& e) {
      GTEST_SKIP() << "the pipeline fails (a negative fixture): " << e.what();
    }
  }
  const ir::Kernel& run_k = after ? *after : *k;
  // The values, with the printed text as sorted lines (parallel iterations print in any order).
  auto run = [&](Backend b, uint64_t shuffle_seed = 0) -> nlohmann::json {
    RunRequest r = req;
    r.backend = b;
    r.options.shuffle = shuffle_seed != 0;
    r.options.seed = shuffle_seed;
    nlohmann::json values;
    std::string printed;
    if (grad) {
      auto out = run_with_gradients(*k, pipeline.empty() ? kDefaultReversePipeline : pipeline, r);
      values = std::move(out.values);
      printed = std::move(out.printed);
    } else {
      auto out = run_on_interpreter(run_k, r);
      values = std::move(out.values);
      printed = std::move(out.printed);
    }
    std::vector<std::string> lines;
    for (size_t at = 0; at < printed.size();) {
      size_t nl = printed.find('\n', at);
      if (nl == std::string::npos) nl = printed.size();
      lines.push_back(printed.substr(at, nl - at));
      at = nl + 1;
    }
    std::sort(lines.begin(), lines.end());
    if (!lines.empty()) values["printed_lines"] = lines;
    return values;
  };
  nlohmann::json expected, actual;
  std::string interp_error, cpu_error;
  try {
    expected = run(Backend::interp);
  } catch (const UserError& e) {
    interp_error = e.what();
  }
  try {
    actual = run(Backend::cpu);
  } catch (const UserError& e) {
    cpu_error = e.what();
  }
  if (!interp_error.empty()) {
    EXPECT_FALSE(cpu_error.empty()) << "the interpreter fails but the cpu run succeeded; interpreter: " << interp_error;
    return;
  }
  // Kernels of quant types: refused up front, naming the first use.
  // (codegen::llvmgen::compiles_type, which this test does not link: the backend is a module)
  if (auto use = ir::first_type_use_outside(run_k, [](ir::DataType t) { return t.quant == 0; })) {
    EXPECT_NE(cpu_error.find("does not compile quant types yet: " + *use), std::string::npos) << cpu_error;
    return;
  }
  ASSERT_TRUE(cpu_error.empty()) << cpu_error;
  // Values that depend on the order of parallel iterations (a race the interpreter resolves by
  // running them in order) are left out: the interpreter itself gives others when shuffled.
  std::vector<std::string> order_dependent;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    nlohmann::json shuffled;
    try {
      shuffled = run(Backend::interp, seed);
    } catch (const UserError&) {
      continue;
    }
    for (auto& [key, group] : expected.items()) {
      if (!group.is_object() || !shuffled.contains(key)) continue;
      for (auto& [name, v] : group.items())
        if (shuffled[key].contains(name) && shuffled[key][name] != v &&
            std::find(order_dependent.begin(), order_dependent.end(), key + "." + name) == order_dependent.end())
          order_dependent.push_back(key + "." + name);
    }
  }
  for (const std::string& path : order_dependent) {
    auto dot = path.find('.');
    expected[path.substr(0, dot)].erase(path.substr(dot + 1));
    actual[path.substr(0, dot)].erase(path.substr(dot + 1));
  }
  Compare c;
  compare_values(run_k, expected, actual, c);
  EXPECT_GT(c.compared, 0u) << "compared no element: a check that compares nothing did not pass";
  std::string msg;
  for (size_t i = 0; i < c.mismatches.size() && i < 10; ++i) msg += "\n  " + c.mismatches[i];
  EXPECT_TRUE(c.mismatches.empty()) << c.mismatches.size() << " of " << c.compared << " element(s) differ:" << msg;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CpuFixture, ::testing::ValuesIn(pb::test::fixture_names()),
                         pb::test::fixture_test_name);

}  // namespace
}  // namespace pb::workbench
