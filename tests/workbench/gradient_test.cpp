// run_with_gradients and gradcheck against hand-written reverse kernels. A test-only pass,
// `test_reverse{kernel=NAME}`, replaces the kernel with the reverse kernel registered as NAME,
// standing in for the reverse_ad pipeline.
#include "workbench/workspace/gradient.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/registry.h"

namespace pb::workbench {
namespace {

// Forward kernels: y[] += f(x[i]) over i in [0, 4).
std::string forward(const std::string& body) {
  return R"(field x : f32[4] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
)" + body +
         R"(    <*f32> $7 = global ptr [y], index [] activate=true
    <f32> $8 = atomic add($7, $6)
  }
}
)";
}

// Reverse kernels: x_grad[i] += g(x[i], y_grad[]) ($10) over the same loop.
std::string reverse(const std::string& body) {
  return R"(field x : f32[4] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $7 = global ptr [y_grad], index [] activate=true
    <f32> $8 = global load $7
)" + body +
         R"(    <*f32> $11 = global ptr [x_grad], index [$3] activate=true
    <f32> $12 = atomic add($11, $10)
  }
}
)";
}

const std::string kSquare = forward("    <f32> $6 = mul $5 $5\n");
const std::string kSquareReverse =
    reverse("    <f32> $9 = const 2\n    <f32> $20 = mul $9 $5\n    <f32> $10 = mul $20 $8\n");
const std::string kSquareWrong =
    reverse("    <f32> $9 = const 3\n    <f32> $20 = mul $9 $5\n    <f32> $10 = mul $20 $8\n");
// y += sin(x) * x; dx = (cos(x) * x + sin(x)) * dy
const std::string kSinX = forward("    <f32> $20 = sin $5\n    <f32> $6 = mul $20 $5\n");
const std::string kSinXReverse = reverse(
    "    <f32> $20 = sin $5\n    <f32> $21 = cos $5\n    <f32> $22 = mul $21 $5\n    <f32> $23 = add $22 $20\n"
    "    <f32> $10 = mul $23 $8\n");
// y += abs(x); dx = (x >= 0 ? 1 : -1) * dy, which disagrees with the finite difference at x = 0.
const std::string kAbs = forward("    <f32> $6 = abs $5\n");
const std::string kAbsReverse = reverse(
    "    <f32> $20 = const 0\n    <u1> $21 = cmp_ge $5 $20\n    <f32> $22 = neg $8\n"
    "    <f32> $10 = select($21, $8, $22)\n");

// y += (x == 0.5 ? 0 : x): at x = 0.5 both neighbours take the other branch.
const std::string kHole = forward(
    "    <f32> $20 = const 0.5\n    <u1> $21 = cmp_eq $5 $20\n    <f32> $22 = const 0\n"
    "    <f32> $6 = select($21, $22, $5)\n");
const std::string kHoleReverse = reverse(
    "    <f32> $20 = const 0.5\n    <u1> $21 = cmp_eq $5 $20\n    <f32> $22 = const 0\n"
    "    <f32> $10 = select($21, $22, $8)\n");

// A reverse kernel that indexes x_grad out of bounds: a run-time error on every backend.
const std::string kOutOfBoundsReverse = R"(field x : f32[4] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 5
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $11 = global ptr [x_grad], index [$3] activate=true
    <f32> $10 = const 1
    <f32> $12 = atomic add($11, $10)
  }
}
)";

std::map<std::string, std::string>& reverse_kernels() {
  static std::map<std::string, std::string> m{{"out_of_bounds", kOutOfBoundsReverse},
                                              {"square", kSquareReverse},
                                              {"square_wrong", kSquareWrong},
                                              {"sinx", kSinXReverse},
                                              {"abs", kAbsReverse},
                                              {"hole", kHoleReverse}};
  return m;
}

class ReplaceWithReverse : public passes::Pass {
 public:
  passes::PassResult run(ir::Kernel& k, const passes::PassOptions& options) override {
    k = std::move(*ir::parse_kernel(reverse_kernels().at(options.get_string("kernel"))));
    return {.changed = true, .stats = {}};
  }
};
class CannotDifferentiate : public passes::Pass {
 public:
  passes::PassResult run(ir::Kernel&, const passes::PassOptions&) override {
    throw UserError("cannot differentiate this kernel", "remove the while loop");
  }
};

// The test passes, visible for the whole test program.
const passes::ScopedRegistry kTestPasses(
    {{.name = "test_reverse",
      .summary = "test only: replaces the kernel with a hand-written reverse kernel",
      .options = {{.name = "kernel",
                   .type = passes::OptionType::String,
                   .default_value = "square",
                   .help = "which",
                   .choices = {}}},
      .statistics = {},
      .create = [] { return std::make_unique<ReplaceWithReverse>(); }},
     {.name = "test_no_reverse", .summary = "test only: fails", .options = {}, .statistics = {}, .create = [] {
        return std::make_unique<CannotDifferentiate>();
      }}});

nlohmann::json inputs_x(std::vector<double> x) { return {{"fields", {{"x", {{"data", x}}}}}}; }

GradcheckOptions check_options(const std::string& reverse_name, std::vector<double> x) {
  GradcheckOptions o;
  o.loss = "y";
  o.inputs = inputs_x(std::move(x));
  o.pipeline = "test_reverse{kernel=" + reverse_name + "}";
  return o;
}

TEST(RunWithGradients, SeedsTheOutputAndAccumulatesIntoInputGradients) {
  auto k = ir::parse_kernel(kSquare);
  RunRequest req;
  req.inputs = inputs_x({1, 2, -3, 0.5});
  req.seed_grads = {{"y", 2.0}};
  auto out = run_with_gradients(*k, "test_reverse{kernel=square}", req);
  EXPECT_EQ(out.values["fields"]["x"]["grad"], nlohmann::json({4.0, 8.0, -12.0, 2.0}));
  EXPECT_EQ(out.values["fields"]["y"]["data"], nlohmann::json({14.25}));
  EXPECT_EQ(out.values["fields"]["y"]["grad"], nlohmann::json({2.0}));
  EXPECT_NE(out.reverse_text.find("global ptr [x_grad]"), std::string::npos) << out.reverse_text;
  EXPECT_EQ(ir::print_kernel(*k), kSquare) << "the forward kernel is left as it was";
}

TEST(RunWithGradients, GivenGradientsAccumulate) {
  auto k = ir::parse_kernel(kSquare);
  RunRequest req;
  req.inputs = {{"fields", {{"x", {{"data", {1, 1, 1, 1}}, {"grad", {10, 0, 0, 0}}}}}}};
  req.seed_grads = {{"y", 1.0}};
  auto out = run_with_gradients(*k, "test_reverse{kernel=square}", req);
  EXPECT_EQ(out.values["fields"]["x"]["grad"], nlohmann::json({12.0, 2.0, 2.0, 2.0}));
}

TEST(RunWithGradients, PipelineFailureNamesThePassAndItsMessage) {
  auto k = ir::parse_kernel(kSquare);
  try {
    run_with_gradients(*k, "test_no_reverse", RunRequest{});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("pass 'test_no_reverse'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot differentiate this kernel"), std::string::npos) << e.what();
  }
}

TEST(RunWithGradients, UnknownSeedFieldIsAUserError) {
  auto k = ir::parse_kernel(kSquare);
  RunRequest req;
  req.seed_grads = {{"nope", 1.0}};
  EXPECT_THROW(run_with_gradients(*k, "test_reverse", req), UserError);
}

TEST(Gradcheck, CorrectReverseKernelPasses) {
  auto k = ir::parse_kernel(kSquare);
  auto r = gradcheck(*k, check_options("square", {1, 2, -3, 0.1}));
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.wrt, std::vector<std::string>{"x"});  // the default: every input with a gradient
  ASSERT_EQ(r.elements.size(), 4u);
  EXPECT_EQ(r.compared, 4u);
  EXPECT_EQ(r.kinks, 0u);
  EXPECT_NEAR(r.loss, 14.01, 1e-6);
  EXPECT_EQ(element_name(r.elements[2]), "x[2]");
  EXPECT_EQ(r.elements[2].analytic, -6.0);
  // Both gradients are computed in f64, so they agree far below f32 precision.
  EXPECT_LT(r.max_rel_error, 1e-8);
  for (const auto& e : r.elements) EXPECT_EQ(e.status, GradStatus::ok) << element_name(e);
}

TEST(Gradcheck, TranscendentalReverseKernelPassesAtLargeArguments) {
  auto k = ir::parse_kernel(kSinX);
  auto r = gradcheck(*k, check_options("sinx", {0.3, -1.7, 25, 300}));
  EXPECT_TRUE(r.passed()) << r.max_rel_error;
  EXPECT_EQ(r.compared, 4u);
}

TEST(Gradcheck, WrongReverseKernelFailsNamingTheElements) {
  auto k = ir::parse_kernel(kSquare);
  auto r = gradcheck(*k, check_options("square_wrong", {0, 1, -2, 0.5}));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mismatches, 3u);
  EXPECT_EQ(r.elements[0].status, GradStatus::ok);  // 3 * 0 == 2 * 0
  const GradElement& e = r.elements[1];
  EXPECT_EQ(element_name(e), "x[1]");
  EXPECT_EQ(e.status, GradStatus::mismatch);
  EXPECT_DOUBLE_EQ(e.analytic, 3.0);
  EXPECT_NEAR(e.numeric, 2.0, 1e-8);
  EXPECT_NEAR(e.rel_error, 1.0 / 3.0, 1e-8);
  EXPECT_NEAR(r.max_rel_error, 1.0 / 3.0, 1e-8);
}

TEST(Gradcheck, AbsAtZeroIsAKinkNotAFailure) {
  auto k = ir::parse_kernel(kAbs);
  auto r = gradcheck(*k, check_options("abs", {0, 1.5, -2, 0.25}));
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.kinks, 1u);
  EXPECT_EQ(r.compared, 3u);
  EXPECT_EQ(r.elements[0].status, GradStatus::kink);
  EXPECT_EQ(r.elements[0].analytic, 1.0);  // the reverse kernel's choice at 0
  EXPECT_NEAR(r.elements[0].numeric, 0.0, 1e-12);
  EXPECT_EQ(r.elements[2].status, GradStatus::ok);
}

TEST(Gradcheck, AnExceptionalPointIsAKinkToo) {
  auto k = ir::parse_kernel(kHole);
  auto r = gradcheck(*k, check_options("hole", {0.5, 1, 2, 0.25}));
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.elements[0].status, GradStatus::kink);  // x-h and x+h agree, x itself does not
  EXPECT_EQ(r.elements[0].analytic, 0.0);
  EXPECT_NEAR(r.elements[0].numeric, 1.0, 1e-9);
  EXPECT_EQ(r.kinks, 1u);
}

TEST(Gradcheck, ToleranceDecidesMismatch) {
  auto k = ir::parse_kernel(kSquare);
  auto o = check_options("square_wrong", {1, 1, 1, 1});
  o.rel = 0.5;  // 1/3 relative error is within it
  EXPECT_TRUE(gradcheck(*k, o).passed());
  o.rel = 0;
  o.abs = 1.01;  // |3 - 2| is within it
  EXPECT_TRUE(gradcheck(*k, o).passed());
  o.abs = 0.99;
  EXPECT_FALSE(gradcheck(*k, o).passed());
}

TEST(Gradcheck, BadOptionsAreUserErrors) {
  auto k = ir::parse_kernel(kSquare);
  auto expect_error = [&](GradcheckOptions o, const std::string& needle) {
    try {
      gradcheck(*k, o);
      ADD_FAILURE() << "expected a UserError containing " << needle;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto o = check_options("square", {1, 2, 3, 4});
  o.loss = "z";
  expect_error(o, "no field named 'z'");
  o = check_options("square", {1, 2, 3, 4});
  o.wrt = {"x_grad"};
  expect_error(o, "'x_grad' has no gradient field");
  o = check_options("square", {1, 2, 3, 4});
  o.eps = 0;
  expect_error(o, "--eps");
  o = check_options("square", {1, 2, 3, 4});
  o.pipeline = "test_no_reverse";
  expect_error(o, "cannot differentiate this kernel");
}

// --backend=cpu: the analytic gradient comes from the JIT (the kernel widened to f64), the finite
// differences and kinks from the interpreter.
TEST(Gradcheck, AnalyticGradientOnTheCpuBackend) {
  auto k = ir::parse_kernel(kSinX);
  auto o = check_options("sinx", {0.3, -1.7, 25, 300});
  o.backend = Backend::cpu;
  auto r = gradcheck(*k, o);
  EXPECT_TRUE(r.passed()) << r.max_rel_error;
  EXPECT_EQ(r.compared, 4u);
  // reverse_ad differentiates the widened kernel: f64 on both sides. (The hand-written reverse
  // kernels above are f32 text, which the JIT runs as written.)
  o.pipeline = "reverse_ad";
  r = gradcheck(*k, o);
  EXPECT_TRUE(r.passed()) << r.max_rel_error;
  o.backend = Backend::interp;
  auto on_interp = gradcheck(*k, o);
  ASSERT_EQ(r.elements.size(), on_interp.elements.size());
  for (size_t i = 0; i < r.elements.size(); ++i) {
    double a = r.elements[i].analytic, b = on_interp.elements[i].analytic;
    EXPECT_NEAR(a, b, 1e-13 * std::max(1.0, std::abs(b))) << element_name(r.elements[i]);
  }
  o = check_options("abs", {0, 1.5, -2, 0.25});
  o.backend = Backend::cpu;
  k = ir::parse_kernel(kAbs);
  r = gradcheck(*k, o);
  EXPECT_EQ(r.elements[0].status, GradStatus::kink);
  EXPECT_EQ(r.elements[0].analytic, 1.0);
  k = ir::parse_kernel(kSquare);
  o = check_options("square_wrong", {0, 1, -2, 0.5});
  o.backend = Backend::cpu;
  r = gradcheck(*k, o);
  EXPECT_EQ(r.mismatches, 3u);
  EXPECT_DOUBLE_EQ(r.elements[1].analytic, 3.0);
}

// The reverse kernel runs on the backend (its run-time error names it) and on nothing else.
TEST(Gradcheck, ABackendsRunTimeErrorNamesTheBackend) {
  auto k = ir::parse_kernel(kSquare);
  auto o = check_options("out_of_bounds", {1, 2, 3, 4});
  o.backend = Backend::cpu;
  try {
    gradcheck(*k, o);
    ADD_FAILURE() << "an out-of-bounds reverse kernel passed";
  } catch (const RunFailure& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("in the reverse kernel on cpu: "), std::string::npos) << msg;
    EXPECT_NE(msg.find("task task1_range_for"), std::string::npos) << msg;
  }
}

TEST(Gradcheck, NoInputWithAGradientIsAUserError) {
  auto k = ir::parse_kernel("field y : f32[] grad y_grad\nkernel {\n}\n");
  GradcheckOptions o;
  o.loss = "y";
  o.pipeline = "test_reverse";
  EXPECT_THROW(gradcheck(*k, o), UserError);
}

}  // namespace
}  // namespace pb::workbench
