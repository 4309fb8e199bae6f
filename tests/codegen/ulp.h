// Distance between a computed f64 and the reference, in units of the reference's ulp (the
// subnormal step below the normal range); 0 for equal values and for two NaNs, HUGE_VAL for a
// NaN against a number, a wrong infinity or a zero of the wrong sign.
#pragma once

#include <cmath>

namespace pb::test {

inline double ulps(double got, double want) {
  if (std::isnan(got) && std::isnan(want)) return 0;
  if (std::isnan(got) || std::isnan(want)) return HUGE_VAL;
  if (got == want) return std::signbit(got) == std::signbit(want) ? 0 : HUGE_VAL;
  if (std::isinf(got) || std::isinf(want)) return HUGE_VAL;
  double a = std::fabs(want);
  double ulp = a < 0x1p-1022 ? 0x1p-1074 : std::ldexp(1.0, std::ilogb(a) - 52);
  return std::fabs(got - want) / ulp;
}

}  // namespace pb::test
