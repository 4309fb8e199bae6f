// The backend fixture tests can fail: a backend planted in place of the compiled ones (the
// interpreter's results, then made wrong in one way) fails check_fixture_on, the check every
// CpuFixture and VulkanFixture test runs. A truthful stand-in passes, so the failures come from
// the planted defect and not from the harness.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <string>

#include "ir/type.h"
#include "runtime/interp/backend.h"
#include "tests/fixture_backend_check.h"

namespace pb {
namespace {

enum class Defect { none, refuses, fails, skips_launch, wrong_primal, wrong_companions };

// The interpreter, with one planted defect.
class PlantedBackend : public runtime::Backend {
 public:
  explicit PlantedBackend(Defect d) : defect_(d) {}
  std::string_view name() const override { return "planted"; }
  runtime::Capabilities capabilities() const override { return runtime::interp::backend().capabilities(); }
  runtime::RunResult launch(const ir::Kernel& k, runtime::State& state, const runtime::RunOptions& options) override {
    switch (defect_) {
      case Defect::refuses:
        throw runtime::Refusal(Diagnostic::plain("the planted backend refuses every kernel"), {});
      case Defect::fails:
        throw UserError("a planted run-time error");
      case Defect::skips_launch:
        return {};
      default:
        break;
    }
    runtime::RunResult r = runtime::interp::backend().launch(k, state, options);
    for (const ir::Field& f : k.fields()) {
      bool companion = f.primal.has_value();
      if (defect_ == Defect::none || (defect_ == Defect::wrong_companions) != companion) continue;
      runtime::Buffer& b = state.fields.at(f.name);
      if (b.data.empty() || !ir::is_float(b.dtype)) continue;
      b.data.back() = ir::Value::from_double(b.dtype, b.data.back().as_f64() * 1.001 + 1e-3);
    }
    return r;
  }

 private:
  Defect defect_;
};

void check_with(const std::string& fixture, Defect d) {
  PlantedBackend planted(d);
  workbench::BackendOptions o;
  o.stand_in = &planted;
  test::check_fixture_on(fixture, workbench::Backend::cpu, o);
}

const char* const kPrimal = "interp/decay_loop_n10.fixture.json";
const char* const kReverse = "autodiff/binary_add_f32.fixture.json";
const char* const kForward = "forward/carried_binary_add_f32.fixture.json";

TEST(FixtureHarness, ATruthfulStandInPasses) {
  for (const char* f : {kPrimal, kReverse, kForward}) check_with(f, Defect::none);
}

TEST(FixtureHarness, APlantedRefusalFails) {
  EXPECT_NONFATAL_FAILURE(check_with(kPrimal, Defect::refuses), "refuses every kernel");
  EXPECT_NONFATAL_FAILURE(check_with(kReverse, Defect::refuses), "refuses every kernel");
  EXPECT_NONFATAL_FAILURE(check_with(kForward, Defect::refuses), "refuses every kernel");
}

TEST(FixtureHarness, APlantedRunTimeErrorFails) {
  EXPECT_NONFATAL_FAILURE(check_with(kPrimal, Defect::fails), "a planted run-time error");
  EXPECT_NONFATAL_FAILURE(check_with(kForward, Defect::fails), "a planted run-time error");
}

TEST(FixtureHarness, ABackendThatRunsNothingFails) {
  EXPECT_NONFATAL_FAILURE(check_with(kPrimal, Defect::skips_launch), "");
  EXPECT_NONFATAL_FAILURE(check_with(kReverse, Defect::skips_launch), "");
  EXPECT_NONFATAL_FAILURE(check_with(kForward, Defect::skips_launch), "");
}

TEST(FixtureHarness, AWrongPrimalValueFails) { EXPECT_NONFATAL_FAILURE(check_with(kPrimal, Defect::wrong_primal), ""); }

TEST(FixtureHarness, AWrongGradientOrTangentFails) {
  EXPECT_NONFATAL_FAILURE(check_with(kReverse, Defect::wrong_companions), "");
  EXPECT_NONFATAL_FAILURE(check_with(kForward, Defect::wrong_companions), "");
}

}  // namespace
}  // namespace pb
