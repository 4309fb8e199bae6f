// The f64 algorithms of codegen/math/f64.h on host doubles against the host libm's long double
// functions rounded to double (11 more bits than double: the reference is the correctly rounded
// value except in rare hard cases; glibc's double tanh, for one, is up to 2 ulp off): dense sweeps
// over each function's domain (uniform and log-spaced), special values and domain edges, with the
// largest error in ulp asserted per function.
#include <gtest/gtest.h>
#include <math.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "codegen/math/f64.h"
#include "tests/codegen/ulp.h"

namespace pb::codegen::math {
namespace {

using R = Real<HostOps>;
HostOps host;
R v(double x) { return {&host, x}; }

using pb::test::ulps;

// The largest error over `xs`; `where` names an input that reaches it.
struct Worst {
  double ulps = 0, where = 0;
};
Worst sweep(const std::vector<double>& xs, const std::function<double(double)>& mine, double (*ref)(double)) {
  Worst w;
  for (double x : xs) {
    double e = ulps(mine(x), ref(x));
    if (e > w.ulps) w = {e, x};
  }
  return w;
}

// n points uniformly in [lo, hi], plus n log-spaced magnitudes in [2^-40, hi] of both signs when `signs`.
std::vector<double> points(double lo, double hi, int n, bool log_spaced = true) {
  std::vector<double> xs;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int i = 0; i < n; ++i) xs.push_back(u(rng));
  if (log_spaced) {
    double top = std::max(std::fabs(lo), std::fabs(hi));
    std::uniform_real_distribution<double> e(-40.0, std::log2(top));
    for (int i = 0; i < n; ++i) {
      double x = std::exp2(e(rng));
      if (x >= lo && x <= hi) xs.push_back(x);
      if (-x >= lo && -x <= hi) xs.push_back(-x);
    }
  }
  return xs;
}

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kSpecials[] = {0.0,        -0.0,
                            kInf,       -kInf,
                            kNan,       1.0,
                            -1.0,       0.5,
                            -0.5,       2.0,
                            1e-310,     -1e-310,
                            1e-300,     1e300,
                            -1e300,     0x1p-26,
                            0x1p-27,    0x1p-1074,
                            0.99,       1.01,
                            709.78,     -745.13,
                            710.0,      -746.0,
                            20.0,       22.0,
                            1e22,       1e16,
                            1e200,      3e300,
                            0x1p28,     0x1p29,
                            0x1.0p1023, 1.5707963267948966};

void expect_specials(const std::function<double(double)>& mine, double (*ref)(double), const char* name) {
  for (double x : kSpecials) EXPECT_LE(ulps(mine(x), ref(x)), 2.0) << name << "(" << x << ")";
}

#define PB_UNARY_CASE(fn, lo, hi, bound)                                              \
  TEST(F64Math, fn) {                                                                 \
    auto mine = [](double x) { return math::fn(v(x)).v; };                            \
    double (*ref)(double) = [](double x) { return static_cast<double>(::fn##l(x)); }; \
    Worst w = sweep(points(lo, hi, 200000), mine, ref);                               \
    EXPECT_LE(w.ulps, bound) << #fn " worst at " << w.where;                          \
    expect_specials(mine, ref, #fn);                                                  \
    RecordProperty("max_ulp", std::to_string(w.ulps));                                \
  }

PB_UNARY_CASE(exp, -745.0, 709.7, 1.0)
PB_UNARY_CASE(log, 0.0, 1e300, 1.0)
PB_UNARY_CASE(sin, -100.0, 100.0, 1.0)
PB_UNARY_CASE(cos, -100.0, 100.0, 1.0)
PB_UNARY_CASE(tan, -100.0, 100.0, 1.0)
PB_UNARY_CASE(tanh, -25.0, 25.0, 1.0)
PB_UNARY_CASE(asin, -1.0, 1.0, 1.0)
PB_UNARY_CASE(acos, -1.0, 1.0, 1.0)
PB_UNARY_CASE(atan, -1e6, 1e6, 1.0)

TEST(F64Math, LogNearOneAndSubnormals) {
  auto mine = [](double x) { return math::log(v(x)).v; };
  double (*ref)(double) = [](double x) { return static_cast<double>(::logl(x)); };
  EXPECT_LE(sweep(points(0.9, 1.1, 200000, false), mine, ref).ulps, 1.0);
  EXPECT_LE(sweep(points(0x1p-1074, 0x1p-1022, 20000, false), mine, ref).ulps, 1.0);
}

TEST(F64Math, TrigHugeArguments) {
  std::vector<double> xs;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> e(28.0, 1023.0), m(1.0, 2.0);
  for (int i = 0; i < 100000; ++i) xs.push_back(std::ldexp(m(rng), static_cast<int>(e(rng))));
  for (double x : {0x1p28, 1e22, 1e300, 1.7976931348623157e308}) xs.push_back(x);
  using Fn = std::function<double(double)>;
  for (auto [mine, ref, name] :
       {std::tuple<Fn, double (*)(double), const char*>{[](double x) { return math::sin(v(x)).v; },
                                                        [](double x) { return static_cast<double>(::sinl(x)); }, "sin"},
        {[](double x) { return math::cos(v(x)).v; }, [](double x) { return static_cast<double>(::cosl(x)); }, "cos"},
        {[](double x) { return math::tan(v(x)).v; }, [](double x) { return static_cast<double>(::tanl(x)); }, "tan"}}) {
    Worst w = sweep(xs, mine, ref);
    EXPECT_LE(w.ulps, 1.0) << name << " worst at " << w.where;
  }
  // The double nearest a multiple of pi/2 (x - n pi/2 = 4.687e-19): correctly rounded values from
  // 900-digit arithmetic.
  double hard = 6381956970095103.0 * 0x1p797;
  EXPECT_EQ(math::sin(v(hard)).v, 1.0);
  EXPECT_EQ(math::cos(v(hard)).v, -4.687165924254628e-19);
  EXPECT_EQ(math::tan(v(hard)).v, -2.133485385753704e+18);
}

// Multiples of pi/2 close to doubles: the reduced argument loses most of its leading bits.
TEST(F64Math, TrigNearMultiplesOfHalfPi) {
  std::vector<double> xs;
  for (int n = 1; n < 200000; ++n) {
    double x = n * 1.5707963267948966;
    for (double y : {x, std::nextafter(x, 0.0), std::nextafter(x, kInf)}) xs.push_back(y);
  }
  EXPECT_LE(
      sweep(xs, [](double x) { return math::sin(v(x)).v; }, [](double x) { return double(::sinl(x)); }).ulps, 1.0);
  EXPECT_LE(
      sweep(xs, [](double x) { return math::cos(v(x)).v; }, [](double x) { return double(::cosl(x)); }).ulps, 1.0);
  EXPECT_LE(
      sweep(xs, [](double x) { return math::tan(v(x)).v; }, [](double x) { return double(::tanl(x)); }).ulps, 1.0);
}

TEST(F64Math, Atan2) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-10.0, 10.0), e(-60.0, 60.0);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    double y = u(rng) * std::exp2(e(rng)), x = u(rng) * std::exp2(e(rng));
    worst = std::max(worst, ulps(math::atan2(v(y), v(x)).v, double(::atan2l(y, x))));
  }
  EXPECT_LE(worst, 1.0);
  const double s[] = {0.0, -0.0, 1.0, -1.0, kInf, -kInf, kNan, 1e-310, -3.0, 1e300};
  for (double y : s)
    for (double x : s) EXPECT_EQ(ulps(math::atan2(v(y), v(x)).v, std::atan2(y, x)), 0) << y << ", " << x;
}

TEST(F64Math, Pow) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> ux(0.0, 4.0), uy(-40.0, 40.0), ue(-300.0, 300.0), um(0.5, 1.0);
  double worst = 0, wx = 0, wy = 0;
  auto check = [&](double x, double y) {
    double e = ulps(math::pow(v(x), v(y)).v, double(::powl(x, y)));
    if (e > worst) worst = e, wx = x, wy = y;
  };
  for (int i = 0; i < 200000; ++i) check(ux(rng), uy(rng));
  for (int i = 0; i < 100000; ++i) {  // results across the whole range: y log x up to about 700
    double x = std::exp2(ue(rng)) * um(rng);
    check(x, std::uniform_real_distribution<double>(-700.0, 700.0)(rng) / std::log(x));
    check(-x, std::floor(std::uniform_real_distribution<double>(-700.0, 700.0)(rng) / std::log(x)));
  }
  EXPECT_LE(worst, 1.0) << "pow(" << wx << ", " << wy << ")";
  const double s[] = {0.0,  -0.0, 1.0,   -1.0, 0.5,    -0.5,  2.0,    -2.0,      3.0,
                      -3.0, kInf, -kInf, kNan, 1e-310, 1e300, 0x1p53, 0x1p53 + 2};
  for (double x : s)
    for (double y : s) EXPECT_LE(ulps(math::pow(v(x), v(y)).v, std::pow(x, y)), 1.0) << x << ", " << y;
}

// fmod is exact: bit for bit with libm, across quotients up to 2^2000 and subnormal divisors.
TEST(F64Math, FmodIsExact) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> m(-2.0, 2.0), e(-1074.0, 1023.0);
  auto check = [](double a, double b) {
    EXPECT_EQ(ulps(math::fmod(v(a), v(b)).v, std::fmod(a, b)), 0) << "fmod(" << a << ", " << b << ")";
  };
  for (int i = 0; i < 100000; ++i) check(m(rng) * std::exp2(e(rng)), m(rng) * std::exp2(e(rng)));
  std::uniform_real_distribution<double> u(-1e6, 1e6), w(-50.0, 50.0);
  for (int i = 0; i < 100000; ++i) check(u(rng), w(rng));
  const double s[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -3.0, kInf, -kInf, kNan, 1e-310, 0x1p-1074, 1e300, 0x1p1023};
  for (double a : s)
    for (double b : s) check(a, b);
}

}  // namespace
}  // namespace pb::codegen::math
