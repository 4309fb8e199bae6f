// make_dual: tangents checked against closed forms on the interpreter, the verifier on every
// result, round trips, and the rejected constructs; IR in, IR out is tests/passes/make_dual.chi.
// Finite-difference and reverse-mode checks of many shapes are in fixtures/forward.
#include "passes/autodiff/make_dual.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "pass_test_util.h"
#include "passes/pass_manager.h"
#include "runtime/core/state.h"
#include "runtime/interp/interpreter.h"

using namespace pb;

namespace {

std::unique_ptr<ir::Kernel> dualized(const std::string& text) {
  auto k = test::parse(text);
  passes::make_dual(*k);
  EXPECT_EQ(test::verify_text(*k), "") << test::print(*k);
  return k;
}

std::string error_of(const std::string& text) {
  auto k = test::parse(text);
  try {
    passes::make_dual(*k);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

const char* kSinTimesX = R"(field x : f32[2] grad x_grad
field y : f32[2] dual y_tangent
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = sin $5
    <f32> $7 = mul $6 $5
    <*f32> $8 = global ptr [y], index [$3] activate=true
    $9 : global store [$8 <- $7]
  }
}
)";

// Runs `k` with the x dual seeded 1 and returns y's dual.
std::vector<double> y_tangent(const ir::Kernel& k, const nlohmann::json& inputs, const std::string& y_dual) {
  auto state = runtime::make_state(k, inputs);
  for (auto& v : state.fields.at("x.dual").data) v = ir::Value::from_double(v.kind(), 1.0);
  runtime::run_kernel(k, state);
  std::vector<double> out;
  for (const auto& v : state.fields.at(y_dual).data) out.push_back(v.as_f64());
  return out;
}

TEST(MakeDual, TangentsMatchTheClosedForm) {
  auto k = dualized(kSinTimesX);
  auto t = y_tangent(*k, {{"fields", {{"x", {{"data", {0.5, -1.25}}}}}}}, "y_tangent");
  for (int i = 0; i < 2; ++i) {
    double x = i == 0 ? 0.5 : -1.25;
    EXPECT_NEAR(t[i], std::cos(x) * x + std::sin(x), 1e-6);
  }
}

// A value carried through a while loop (reverse mode refuses it): v = x; while c < n: v = v * v * 0.5.
const char* kWhileCarried = R"(field x : f64[] grad x_grad
field n : i32[]
field y : f64[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 1
  <f64> $2 = const 0.5
  <*f64> $3 = global ptr [x], index [] activate=true
  <f64> $4 = global load $3
  <*f64> $5 = alloca
  <f64> $6 : local store [$5 <- $4]
  <*i32> $7 = alloca
  <*i32> $8 = global ptr [n], index [] activate=true
  <i32> $9 = global load $8
  $10 : while true {
    <i32> $11 = local load [$7]
    <u1> $12 = cmp_lt $11 $9
    $13 : while control nullptr, $12
    <f64> $14 = local load [$5]
    <f64> $15 = mul $14 $14
    <f64> $16 = mul $15 $2
    <f64> $17 : local store [$5 <- $16]
    <i32> $18 = add $11 $1
    <i32> $19 : local store [$7 <- $18]
  }
  <f64> $20 = local load [$5]
  <*f64> $21 = global ptr [y], index [] activate=true
  $22 : global store [$21 <- $20]
}
)";

TEST(MakeDual, LoopCarriedThroughAWhileLoopNeedsNoStack) {
  auto k = dualized(kWhileCarried);
  // v_k = 2 (v_0 / 2)^(2^k): dv_3/dv_0 = 8 (v_0 / 2)^7.
  auto t = y_tangent(*k, {{"fields", {{"x", {{"data", 1.5}}}, {"n", {{"data", 3}}}}}}, "y.dual");
  EXPECT_NEAR(t.at(0), 8 * std::pow(0.75, 7), 1e-12);
}

TEST(MakeDual, NdarrayDualsRoundTripThroughTextAndJson) {
  auto k = dualized(R"(arg 0 : ndarray<f32, 1>
kernel {
  <i32> $0 = const 0
  <*f32> $1 = argload[0]
  <*f32> $2 = external_ptr $1, [$0] layout=AOS is_grad=false
  <f32> $3 = global load $2
  <f32> $4 = exp $3
  $5 : global store [$2 <- $4]
}
)");
  std::string text = test::print(*k);
  EXPECT_EQ(test::print(*test::parse(text)), text);
  EXPECT_EQ(test::print(*ir::from_json(ir::to_json(*k))), text);
  auto state = runtime::make_state(*k, {{"args", {{{"shape", {1}}, {"data", {0.25}}, {"dual", {2.0}}}}}});
  runtime::run_kernel(*k, state);
  EXPECT_NEAR(state.args[0].dual->data[0].as_f64(), 2.0 * std::exp(0.25), 1e-6);
}

TEST(MakeDual, ExternalPtrCannotBeBothGradAndDual) {
  EXPECT_THROW(test::parse(R"(arg 0 : ndarray<f32, 1>
kernel {
  <i32> $0 = const 0
  <*f32> $1 = argload[0]
  <*f32> $2 = external_ptr $1, [$0] layout=AOS is_grad=true is_dual=true
}
)"),
               UserError);
}

const char* kAtomicMax = R"(field x : f32[] dual x_dual
field y : f32[] dual y_dual
kernel {
  <*f32> $0 = global ptr [x], index [] activate=true
  <f32> $1 = global load $0
  <*f32> $2 = global ptr [y], index [] activate=true
  <f32> $3 = atomic max($2, $1)
}
)";

TEST(MakeDual, RejectsNonLinearAtomicsOnDifferentiableData) {
  std::string e = error_of(kAtomicMax);
  EXPECT_NE(e.find("atomic max on differentiable global data"), std::string::npos) << e;
  EXPECT_NE(e.find("<f32> $3 = atomic max($2, $1)"), std::string::npos) << e;
}

TEST(MakeDual, RejectsAnUsedOldValueAndStackStatements) {
  std::string used = kAtomicMax;
  used.replace(used.find("atomic max"), 10, "atomic add");
  used.replace(used.rfind("}"), 1, "  <f32> $4 = sin $3\n}");
  EXPECT_NE(error_of(used).find("old value"), std::string::npos) << error_of(used);
  std::string e = error_of(R"(kernel {
  <f32> $0 = stack alloc (max_size=4)
}
)");
  EXPECT_NE(e.find("autodiff stack statements"), std::string::npos) << e;
}

TEST(MakeDual, RejectsKindsNoBackendCompilesNamingTheStatement) {
  std::string e = error_of(R"(kernel {
  <f32> $0 = rand()
}
)");
  EXPECT_NE(e.find("autodiff does not differentiate this statement"), std::string::npos) << e;
  EXPECT_NE(e.find("<f32> $0 = rand()"), std::string::npos) << e;
}

TEST(MakeDual, LocalAtomicMinAndMulFollowTheChosenValue) {
  // v = x; v = min(v, 0.5) (atomic min); v *= x (atomic mul); y = v.
  auto k = dualized(R"(field x : f64[] grad x_grad
field y : f64[] grad y_grad
kernel {
  <f64> $0 = const 0.5
  <*f64> $1 = global ptr [x], index [] activate=true
  <f64> $2 = global load $1
  <*f64> $3 = alloca
  <f64> $4 : local store [$3 <- $2]
  <f64> $5 = atomic min($3, $0)
  <f64> $6 = atomic mul($3, $2)
  <f64> $7 = local load [$3]
  <*f64> $8 = global ptr [y], index [] activate=true
  $9 : global store [$8 <- $7]
}
)");
  // x = 0.3 < 0.5: y = x * x, dy = 2x; x = 0.9: y = 0.5 x, dy = 0.5.
  EXPECT_NEAR(y_tangent(*k, {{"fields", {{"x", {{"data", 0.3}}}}}}, "y.dual").at(0), 0.6, 1e-12);
  EXPECT_NEAR(y_tangent(*k, {{"fields", {{"x", {{"data", 0.9}}}}}}, "y.dual").at(0), 0.5, 1e-12);
}

TEST(MakeDual, ForwardAdPipelineVerifiesAfterEveryPass) {
  auto k = test::parse(kWhileCarried);
  auto run = passes::run_pipeline(*k, passes::parse_pipeline("forward_ad"));
  ASSERT_FALSE(run.failed) << run.records[run.failed_index].failure;
  for (const auto& rec : run.records) EXPECT_TRUE(rec.verify_errors.empty()) << rec.pass;
}

}  // namespace
