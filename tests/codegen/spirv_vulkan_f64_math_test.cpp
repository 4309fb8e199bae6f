// f64 math on the Vulkan device (vulkan_host.h): small kernels y[i] = f(x[i]) (and f(x[i], z[i]))
// compiled with codegen/spirv's own f64 functions, run unoptimized and after spirv-opt, compared
// with the host libm's long double functions rounded to double: the largest error in ulp over
// sweeps and special values is asserted and printed per function ("f64 math on <device>: ..."),
// the figures docs/backends.md lists. Also floor, round and mod against the interpreter.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <math.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "codegen/spirv/compile.h"
#include "ir/parser.h"
#include "runtime/interp/interpreter.h"
#include "tests/codegen/ulp.h"
#include "vulkan_host.h"

namespace pb::codegen::spirv {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

using pb::test::ulps;

// Runs `op` (a unary or binary op name) elementwise on the device; y = op(x) or op(x, z).
std::vector<double> run_device(const std::string& op, const std::vector<double>& x, const std::vector<double>& z,
                               bool optimize) {
  bool binary = !z.empty();
  std::string text = fmt::format(R"(field x : f64[{0}]
field z : f64[{0}]
field y : f64[{0}]
kernel "f64_math" {{
  <i32> $0 = const 0
  <i32> $1 = const {0}
  $2 : for in range($0, $1) block_dim=adaptive {{
    <i32> $3 = loop $2 index 0
    <*f64> $4 = global ptr [x], index [$3] activate=true
    <f64> $5 = global load $4
    <*f64> $6 = global ptr [z], index [$3] activate=true
    <f64> $7 = global load $6
    <f64> $8 = {1} $5{2}
    <*f64> $9 = global ptr [y], index [$3] activate=true
    $10 : global store [$9 <- $8]
  }}
}}
)",
                                 x.size(), op, binary ? " $7" : "");
  auto k = ir::parse_kernel(text);
  runtime::State state = runtime::make_state(*k, nlohmann::json::object());
  for (size_t i = 0; i < x.size(); ++i) {
    state.fields.at("x").data[i] = ir::Value::make_f64(x[i]);
    state.fields.at("z").data[i] = ir::Value::make_f64(binary ? z[i] : 0.0);
  }
  LoweringOptions o;
  o.float64 = o.int64 = true;
  CompiledKernel ck = compile(*k, o);
  test::run_on_host(*k, ck, state, optimize);
  std::vector<double> y;
  for (const ir::Value& v : state.fields.at("y").data) y.push_back(v.as_f64());
  return y;
}

std::vector<double> sweep(double lo, double hi, int n, uint64_t seed) {
  std::vector<double> xs;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int i = 0; i < n; ++i) xs.push_back(u(rng));
  double top = std::max(std::fabs(lo), std::fabs(hi));
  std::uniform_real_distribution<double> e(-40.0, std::log2(top));
  for (int i = 0; i < n; ++i) {
    double v = std::exp2(e(rng));
    if (v >= lo && v <= hi) xs.push_back(v);
    if (-v >= lo && -v <= hi) xs.push_back(-v);
  }
  return xs;
}

const std::vector<double> kSpecials = {0.0,
                                       -0.0,
                                       kInf,
                                       -kInf,
                                       kNan,
                                       1.0,
                                       -1.0,
                                       0.5,
                                       -0.5,
                                       2.0,
                                       1e-300,
                                       1e300,
                                       -1e300,
                                       0x1p-26,
                                       0x1p-27,
                                       0.99,
                                       1.01,
                                       709.78,
                                       -708.3,
                                       710.0,
                                       -746.0,
                                       20.0,
                                       22.0,
                                       1e22,
                                       1e16,
                                       1e200,
                                       3e300,
                                       0x1p28,
                                       0x1p29,
                                       0x1p1023,
                                       1.5707963267948966};

// The largest error of the device's `op` over `x` (and `z`) against `ref`, unoptimized and optimized.
double worst(const std::string& op, const std::vector<double>& x, const std::vector<double>& z,
             const std::function<double(double, double)>& ref, double bound) {
  double w = 0;
  for (bool optimize : {false, true}) {
    std::vector<double> y = run_device(op, x, z, optimize);
    for (size_t i = 0; i < x.size(); ++i) {
      double zi = z.empty() ? 0.0 : z[i];
      double e = ulps(y[i], ref(x[i], zi));
      EXPECT_LE(e, bound) << op << "(" << x[i] << (z.empty() ? "" : fmt::format(", {}", zi)) << "): device " << y[i]
                          << ", libm " << ref(x[i], zi) << (optimize ? " (optimized)" : "");
      w = std::max(w, e);
    }
  }
  return w;
}

void report(const std::string& op, double w, size_t n) {
  std::cout << fmt::format("f64 math on {}: {} max {} ulp over {} inputs\n", test::vulkan()->device().name, op, w, n);
}

struct Unary {
  const char* op;
  double lo, hi;
  long double (*ref)(long double);
};

TEST(VulkanF64Math, UnaryFunctionsWithinOneUlp) {
  PB_REQUIRE_VULKAN();
  ASSERT_TRUE(test::vulkan()->device().float64) << "the device has no shaderFloat64";
  const Unary cases[] = {{"sin", -100, 100, ::sinl},   {"cos", -100, 100, ::cosl}, {"tan", -100, 100, ::tanl},
                         {"tanh", -25, 25, ::tanhl},   {"asin", -1, 1, ::asinl},   {"acos", -1, 1, ::acosl},
                         {"exp", -708, 709.7, ::expl}, {"log", 0, 1e300, ::logl}};
  for (const Unary& c : cases) {
    std::vector<double> x = sweep(c.lo, c.hi, 4000, 11);
    x.insert(x.end(), kSpecials.begin(), kSpecials.end());
    if (std::string(c.op) == "sin" || std::string(c.op) == "cos" || std::string(c.op) == "tan")
      for (double v : sweep(-1e300, 1e300, 1000, 13)) x.push_back(v);
    auto ref = [&](double a, double) { return static_cast<double>(c.ref(a)); };
    report(c.op, worst(c.op, x, {}, ref, 1.0), x.size());
  }
}

TEST(VulkanF64Math, Atan2AndPowWithinOneUlp) {
  PB_REQUIRE_VULKAN();
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-10.0, 10.0), e(-60.0, 60.0), px(0.0, 4.0), py(-40.0, 40.0);
  std::vector<double> y, x, bx, by;
  for (int i = 0; i < 8000; ++i) {
    y.push_back(u(rng) * std::exp2(e(rng)));
    x.push_back(u(rng) * std::exp2(e(rng)));
    bx.push_back(px(rng));
    by.push_back(py(rng));
  }
  const double s[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, kInf, -kInf, kNan, 1e300};
  for (double a : s)
    for (double b : s) y.push_back(a), x.push_back(b), bx.push_back(a), by.push_back(b);
  report("atan2", worst("atan2", y, x, [](double a, double b) { return double(::atan2l(a, b)); }, 1.0), y.size());
  report("pow", worst("pow", bx, by, [](double a, double b) { return double(::powl(a, b)); }, 1.0), bx.size());
}

// floor, round (half away from zero) and mod (C fmod) are exact operations: the device must give
// the interpreter's value (std::floor, std::round, std::fmod: ir/eval.cpp) bit for bit.
TEST(VulkanF64Math, FloorRoundModAreExact) {
  PB_REQUIRE_VULKAN();
  std::vector<double> x = sweep(-1e6, 1e6, 2000, 19);
  for (double v : {0.5, -0.5, 1.5, -1.5, 2.5, 0.49999999999999994, -0.49999999999999994, 4503599627370495.5,
                   4503599627370497.0, 0x1p60, -0.0, 1e-310, kInf, -kInf, kNan})
    x.push_back(v);
  std::vector<double> z;
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-50.0, 50.0);
  for (size_t i = 0; i < x.size(); ++i) z.push_back(u(rng));
  auto exact = [&](const std::string& op, const std::vector<double>& zs,
                   const std::function<double(double, double)>& f) {
    for (bool optimize : {false, true}) {
      std::vector<double> y = run_device(op, x, zs, optimize);
      for (size_t i = 0; i < x.size(); ++i) {
        double want = f(x[i], zs.empty() ? 0.0 : zs[i]);
        EXPECT_EQ(ulps(y[i], want), 0) << op << "(" << x[i] << (zs.empty() ? "" : fmt::format(", {}", zs[i]))
                                       << "): device " << y[i] << ", interpreter " << want;
      }
    }
  };
  exact("floor", {}, [](double a, double) { return std::floor(a); });
  exact("round", {}, [](double a, double) { return std::round(a); });
  exact("mod", z, [](double a, double b) { return std::fmod(a, b); });
}

}  // namespace
}  // namespace pb::codegen::spirv
