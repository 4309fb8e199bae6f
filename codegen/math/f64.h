// Double-precision elementary functions in straight-line code (selects, no branches or loops),
// generic over the ops of codegen/math/arith.h: the same algorithm runs on host doubles (tests)
// and emits SPIR-V (codegen/spirv/f64_math.cpp). Contract: C99 Annex F special values (signed
// zeros, infinities, NaN, domain errors give NaN) and results within 2 ulp of the correctly
// rounded value for normal results; subnormal results may be off by one subnormal ulp.
// Method: argument reduction with multi-part constants (Cody-Waite; Payne-Hanek with the bits of
// 2/pi for |x| >= 2^28 in sin/cos/tan), Taylor polynomials (codegen/math/coefficients.py), and
// double-double arithmetic where the final rounding must see more than 53 bits.
#pragma once

#include "codegen/math/arith.h"
#include "codegen/math/constants.h"

namespace pb::codegen::math {

namespace detail {
namespace k = constants;

template <class O>
Real<O> inf(Real<O> like) {
  return like.k(HUGE_VAL);
}
template <class O>
Real<O> nan(Real<O> like) {
  return like.k(std::nan(""));
}

// exp(z.hi + z.lo) as a double-double, for |z.hi| <= 746 (beyond: the result over- or underflows).
template <class O>
DD<O> exp_dd(DD<O> z) {
  Real<O> zh = select(z.hi < -746.0, -746.0, select(z.hi > 710.0, 710.0, z.hi));
  Real<O> n = rint(zh * k::kLog2e);
  DD<O> p0 = two_prod(n, zh.k(k::kLn2[0]));
  Real<O> r1 = (zh - p0.hi) - p0.lo;  // exact: zh - p0.hi by Sterbenz, and the rest fits
  DD<O> p = two_prod(n, zh.k(k::kLn2[1]));
  DD<O> s = two_sum(r1, -p.hi);
  DD<O> r = fast_two_sum(s.hi, ((s.lo - p.lo) - n * k::kLn2[2]) + z.lo);
  Real<O> q = r.hi * r.hi * horner(k::kExp, r.hi);
  DD<O> one = two_sum(zh.k(1.0), r.hi);
  DD<O> e = fast_two_sum(one.hi, one.lo + (q + r.lo * (r.hi + 1.0)));
  // 2^n in two factors, each a normal number, so the product rounds once.
  Int<O> ni = to_int(n), n1 = ni >> 1;
  Real<O> s1 = pow2(n1), s2 = pow2(ni - n1);
  return {e.hi * s1 * s2, e.lo * s1 * s2};
}

// log(x) as a double-double for finite x > 0.
template <class O>
DD<O> log_dd(Real<O> x) {
  Bool<O> sub = x < 0x1p-1022;
  Real<O> xs = select(sub, x * 0x1p54, x);
  Int<O> h = hi(xs);
  Int<O> mant = h & 0x000fffff;
  Bool<O> upper = !(mant < 0x6a09f);  // m >= ~sqrt(2): use m/2
  Int<O> e = ((h >> 20) - 1023) + select(sub, h.k(-54), h.k(0)) + select(upper, h.k(1), h.k(0));
  Real<O> m = from_words(lo(xs), mant | select(upper, h.k(0x3fe00000), h.k(0x3ff00000)));
  Real<O> f = m - 1.0;  // exact
  DD<O> s = dd(f) / two_sum(x.k(2.0), f);
  DD<O> z = s * s;
  // log(m) = s * (2 + z (2/3 + z (2/5 + z t))): the last terms in doubles, the first three in double-double.
  Real<O> t = horner(k::kLog, z.hi, 3);
  DD<O> acc = DD<O>{x.k(k::kLog[2]), x.k(k::kLogLo[2])} + dd(z.hi * t);
  acc = DD<O>{x.k(k::kLog[1]), x.k(k::kLogLo[1])} + z * acc;
  acc = dd(x.k(2.0)) + z * acc;
  Real<O> ef = to_f(e);
  DD<O> eln2 = two_prod(ef, x.k(k::kLn2[0]));
  eln2 = fast_two_sum(eln2.hi, ef * k::kLn2[1] + eln2.lo);
  return eln2 + s * acc;
}

// sin and cos of a reduced argument |r| <= ~pi/4, as double-doubles.
template <class O>
DD<O> sin_dd(DD<O> r) {
  Real<O> z = r.hi * r.hi;
  Real<O> p = r.hi * z * horner(k::kSin, z);
  return fast_two_sum(r.hi, p + r.lo * (1.0 - z * 0.5));
}
template <class O>
DD<O> cos_dd(DD<O> r) {
  DD<O> hz = two_prod(r.hi * 0.5, r.hi);  // r^2 / 2 exactly
  Real<O> w = 1.0 - hz.hi;
  Real<O> z = r.hi * r.hi;
  Real<O> tail = z * z * horner(k::kCos, z) - r.hi * r.lo;
  return fast_two_sum(w, (((1.0 - w) - hz.hi) - hz.lo) + tail);
}

// x = n pi/2 + r: the quadrant n mod 4 and r as a double-double.
template <class O>
struct Reduced {
  DD<O> r;
  Int<O> n;
};

// Cody-Waite with pi/2 in three parts, for |x| < 2^28.
template <class O>
Reduced<O> reduce_small(Real<O> x) {
  Real<O> xc = select(fabs(x) < 0x1p28, x, x.k(0.0));
  Real<O> n = rint(xc * k::kTwoOverPi);
  DD<O> p0 = two_prod(n, x.k(k::kPiOver2[0]));
  DD<O> s0 = two_sum(xc - p0.hi, -p0.lo);  // xc - p0.hi is exact (Sterbenz)
  DD<O> p = two_prod(n, x.k(k::kPiOver2[1]));
  DD<O> s = two_sum(s0.hi, -p.hi);
  return {fast_two_sum(s.hi, ((s.lo + s0.lo) - p.lo) - n * k::kPiOver2[2]), to_int(n)};
}

// Payne-Hanek for finite |x| >= 2^28: |x| = X0 2^(e-23) + X1 2^(e-47) + X2 2^(e-71) with 24-bit
// integers X, times 2/pi in 24-bit pieces T; the products are exact, summed by diagonals i + j
// (weight 2^(e - 47 - 24 (i + j))), dropping diagonals that are multiples of 4 and those below
// 2^-140, with carries so each diagonal below the first holds 24 bits.
template <class O>
Reduced<O> reduce_huge(Real<O> x) {
  constexpr int kDiagonals = 8;
  constexpr int kTable = static_cast<int>(sizeof(k::kTwoOverPiBits) / sizeof(double));
  Real<O> a = select(fabs(x) < 0x1p28, x.k(0x1p28), fabs(x));
  a = select(is_inf(a), x.k(0x1p28), a);
  Int<O> e = ((hi(a) >> 20) & 0x7ff) - 1023;
  Real<O> x0 = floor(a * pow2(e.k(23) - e));
  Real<O> rest = a - x0 * pow2(e - 23);
  Real<O> x1 = floor(rest * pow2(e.k(47) - e));
  Real<O> x2 = (rest - x1 * pow2(e - 47)) * pow2(e.k(71) - e);
  Real<O> ef = to_f(e);
  Real<O> g0 = -floor(-((ef - 49.0) / 24.0));
  g0 = select(g0 < 0.0, 0.0, g0);
  Int<O> g = to_int(g0);
  Int<O> w0 = (e - 47) - to_int(g0 * 24.0);
  Real<O> t[kDiagonals + 2];  // T[g - 2 + i]; the table's index is shifted by its two leading zeros
  for (int i = 0; i < kDiagonals + 2; ++i) t[i] = {x.o, x.o->lookup(k::kTwoOverPiBits, kTable, (g + i).v)};
  Real<O> q[kDiagonals];
  for (int d = 0; d < kDiagonals; ++d) q[d] = x0 * t[d + 2] + x1 * t[d + 1] + x2 * t[d];
  for (int d = kDiagonals - 1; d > 0; --d) {
    Real<O> carry = floor(q[d] * 0x1p-24);
    q[d] = q[d] - carry * 0x1p24;
    q[d - 1] = q[d - 1] + carry;
  }
  Real<O> top = q[0] * pow2(w0);
  top = top - floor(top * 0.25) * 4.0;     // mod 4, exact
  Real<O> h = top + q[1] * pow2(w0 - 24);  // exact: at most 48 bits
  Real<O> n = rint(h);
  DD<O> f = dd(h - n);
  for (int d = 2; d < kDiagonals; ++d) f = f + dd(q[d] * pow2(w0 - 24 * d));
  DD<O> r = f * dd(x, k::kPiOver2);
  Int<O> ni = to_int(n);
  Bool<O> neg = x < 0.0;
  return {select(neg, -r, r), select(neg, ni.k(0) - ni, ni)};
}

template <class O>
Reduced<O> reduce(Real<O> x) {
  Reduced<O> s = reduce_small(x), h = reduce_huge(x);
  Bool<O> small = fabs(x) < 0x1p28;
  return {select(small, s.r, h.r), select(small, s.n, h.n)};
}

// atan(t) for t in [0, 1] as a double-double: atan(t) = atan(c) + atan((t - c) / (1 + c t)).
template <class O>
DD<O> atan_core(DD<O> t) {
  Bool<O> b1 = t.hi >= 7.0 / 16, b2 = t.hi >= 11.0 / 16;
  Real<O> zero = t.hi.k(0.0);
  Real<O> c = select(b2, t.hi.k(1.0), select(b1, t.hi.k(0.5), zero));
  DD<O> base = select(b2, dd(zero, k::kPiOver4), select(b1, dd(zero, k::kAtanHalf), dd(zero)));
  DD<O> num{t.hi - c, t.lo};  // exact (Sterbenz)
  DD<O> den = two_sum(t.hi.k(1.0), c * t.hi);
  den = fast_two_sum(den.hi, den.lo + c * t.lo);
  DD<O> u = num / den;
  Real<O> z = u.hi * u.hi;
  Real<O> p = u.hi * z * horner(k::kAtan, z);
  return base + fast_two_sum(u.hi, p + u.lo / (z + 1.0));
}

// atan2 for y, x >= 0 (double-doubles, not both zero or both infinite): in [0, pi/2].
template <class O>
DD<O> atan2_core(DD<O> y, DD<O> x) {
  Bool<O> swap = y.hi > x.hi;
  DD<O> num = select(swap, x, y), den = select(swap, y, x);
  Bool<O> degenerate = den.hi == 0.0 || is_inf(den.hi);
  Real<O> zero = y.hi.k(0.0), one = y.hi.k(1.0);
  // Both scaled alike into two_prod's range (num <= den).
  Real<O> scale = select(den.hi > 0x1p600, y.hi.k(0x1p-600), select(den.hi < 0x1p-600, y.hi.k(0x1p600), one));
  num = {num.hi * scale, num.lo * scale};
  den = {den.hi * scale, den.lo * scale};
  num = select(degenerate, dd(zero), num);
  den = select(degenerate, dd(one), den);
  DD<O> a = atan_core(num / den);
  return select(swap, dd(zero, k::kPiOver2) - a, a);
}

// sqrt(1 - a^2) for 0 <= a <= 1, as a double-double.
template <class O>
DD<O> sqrt_one_minus_square(Real<O> a) {
  DD<O> sq = two_prod(a, a);
  DD<O> w = two_sum(a.k(1.0), -sq.hi);
  w = fast_two_sum(w.hi, w.lo - sq.lo);
  Real<O> s = sqrt(w.hi);
  DD<O> s2 = two_prod(s, s);
  Real<O> corr = (((w.hi - s2.hi) - s2.lo) + w.lo) / (s * 2.0);
  return {s, select(s == 0.0, a.k(0.0), corr)};
}

// r mod b (b > 0 normal, r finite) as r - n b for an integer n, |result| <= b / 2: each step
// divides by b 2^k with k = max(0, e(r) - e(b) - 50), so the quotient fits 52 bits and the
// remainder, exact, shrinks by about 2^50.
template <class O>
Real<O> remainder_core(Real<O> r, Real<O> b) {
  auto exponent = [](Real<O> v) { return ((hi(v) >> 20) & 0x7ff) - 1023; };
  Real<O> half = b * 0.5;
  return loop_while(
      r, [&](Real<O> v) { return fabs(v) > half; },
      [&](Real<O> v) {
        Int<O> kk = exponent(v) - exponent(b) - 50;
        kk = select(kk < 0, kk.k(0), kk);
        Int<O> k1 = kk >> 1;
        Real<O> bs = b * pow2(k1) * pow2(kk - k1);
        Real<O> q = rint(v / bs);
        DD<O> p = two_prod(q, bs);
        return (v - p.hi) - p.lo;  // exact: the remainder is representable
      });
}

}  // namespace detail

// C fmod: exact (the remainder a - n b, n = trunc(a / b), is representable).
template <class O>
Real<O> fmod(Real<O> a, Real<O> b) {
  Real<O> one = a.k(1.0), zero = a.k(0.0);
  Bool<O> finite = !is_inf(a) && !is_nan(a) && !is_inf(b) && !is_nan(b) && !(b == 0.0);
  Real<O> as = select(finite, a, zero), bb = select(finite, fabs(b), one);
  // Dekker's products need |b| < 2^995: huge operands are scaled down by 2^600 (|a| >= |b| then,
  // so a stays normal). Tiny divisors: first reduce by b 2^600, then scale both by 2^600 and
  // reduce by b, so that every exact product stays above the subnormal range.
  Real<O> down = select(bb > 0x1p900, a.k(0x1p-600), one);
  as = as * down;
  bb = bb * down;
  Real<O> scale = select(bb < 0x1p-900, a.k(0x1p600), one);
  Real<O> big = bb * scale;
  Real<O> r = detail::remainder_core(as, big) * scale;
  r = detail::remainder_core(r, big) / scale;
  // To the dividend's sign: |r| < |b|.
  r = select(!sign_bit(a) && r < 0.0, r + bb, select(sign_bit(a) && r > 0.0, r - bb, r)) / down;
  r = select(r == 0.0, select(sign_bit(a), a.k(-0.0), zero), r);
  r = select(fabs(a) < fabs(b), a, r);  // also where scaling a down would underflow
  r = select(is_inf(b) && !is_inf(a), a, select(finite, r, detail::nan(a)));
  return select(is_nan(a) || is_nan(b), a + b, r);
}

template <class O>
Real<O> exp(Real<O> x) {
  return select(is_nan(x), x, detail::exp_dd(dd(x)).hi);
}

template <class O>
Real<O> log(Real<O> x) {
  Real<O> safe = select(x > 0.0 && !is_inf(x), x, x.k(1.0));
  Real<O> r = detail::log_dd(safe).hi;
  r = select(x == 0.0, -detail::inf(x), r);
  r = select(is_inf(x) && x > 0.0, x, r);
  return select(x < 0.0 || is_nan(x), detail::nan(x), r);
}

template <class O>
Real<O> sin(Real<O> x) {
  detail::Reduced<O> red = detail::reduce(x);
  Int<O> n = red.n & 3;
  Bool<O> odd = (n & 1) == 1, flip = (n & 2) == 2;
  Real<O> v = select(odd, detail::cos_dd(red.r).hi, detail::sin_dd(red.r).hi);
  v = select(flip, -v, v);
  v = select(fabs(x) < 0x1p-26, x, v);
  return select(is_inf(x) || is_nan(x), detail::nan(x), v);
}

template <class O>
Real<O> cos(Real<O> x) {
  detail::Reduced<O> red = detail::reduce(x);
  Int<O> n = red.n & 3;
  Bool<O> odd = (n & 1) == 1, flip = n == 1 || n == 2;
  Real<O> v = select(odd, detail::sin_dd(red.r).hi, detail::cos_dd(red.r).hi);
  v = select(flip, -v, v);
  return select(is_inf(x) || is_nan(x), detail::nan(x), v);
}

template <class O>
Real<O> tan(Real<O> x) {
  detail::Reduced<O> red = detail::reduce(x);
  Bool<O> odd = (red.n & 1) == 1;
  DD<O> s = detail::sin_dd(red.r), c = detail::cos_dd(red.r);
  DD<O> num = select(odd, -c, s), den = select(odd, s, c);
  den = select(den.hi == 0.0, dd(x.k(0x1p-1074)), den);
  Real<O> v = (num / den).hi;
  v = select(fabs(x) < 0x1p-27, x, v);
  return select(is_inf(x) || is_nan(x), detail::nan(x), v);
}

template <class O>
Real<O> tanh(Real<O> x) {
  Real<O> a = fabs(x);
  Real<O> z = a * a;
  Real<O> small = a + a * z * horner(constants::kTanh, z);
  // 1 - 2 / (exp(2a) + 1) in double-double.
  Real<O> ac = select(a > 20.0, x.k(20.0), a);
  DD<O> e = detail::exp_dd(dd(ac * 2.0));
  DD<O> q = dd(x.k(2.0)) / (e + dd(x.k(1.0)));
  Real<O> large = (dd(x.k(1.0)) - q).hi;
  Real<O> v = select(a < 0.55, small, large);
  v = select(sign_bit(x), -v, v);
  return select(a < 0x1p-27 || is_nan(x), x, v);
}

template <class O>
Real<O> atan2(Real<O> y, Real<O> x) {
  Real<O> ax = fabs(x), ay = fabs(y);
  Bool<O> both_inf = is_inf(ax) && is_inf(ay);
  ax = select(both_inf, x.k(1.0), ax);
  ay = select(both_inf, x.k(1.0), ay);
  DD<O> t = detail::atan2_core(dd(ay), dd(ax));
  t = select(sign_bit(x), dd(x, constants::kPi) - t, t);
  Real<O> v = copy_sign(t.hi, y);
  return select(is_nan(x) || is_nan(y), x + y, v);
}

template <class O>
Real<O> asin(Real<O> x) {
  Real<O> a = fabs(x);
  Real<O> ac = select(a > 1.0, x.k(1.0), a);
  Real<O> v = detail::atan2_core(dd(ac), detail::sqrt_one_minus_square(ac)).hi;
  v = select(sign_bit(x), -v, v);
  v = select(a < 0x1p-27, x, v);
  return select(a > 1.0 || is_nan(x), detail::nan(x), v);
}

template <class O>
Real<O> acos(Real<O> x) {
  Real<O> a = fabs(x);
  Real<O> ac = select(a > 1.0, x.k(1.0), a);
  DD<O> t = detail::atan2_core(detail::sqrt_one_minus_square(ac), dd(ac));
  t = select(x < 0.0, dd(x, constants::kPi) - t, t);
  return select(a > 1.0 || is_nan(x), detail::nan(x), t.hi);
}

template <class O>
Real<O> atan(Real<O> x) {
  return atan2(x, x.k(1.0));
}

// C pow, special cases included (F.9.4.4).
template <class O>
Real<O> pow(Real<O> x, Real<O> y) {
  Real<O> ax = fabs(x), ay = fabs(y), zero = x.k(0.0), one = x.k(1.0), inf = detail::inf(x);
  Bool<O> finite_x = !is_inf(x) && !is_nan(x), finite_y = !is_inf(y) && !is_nan(y);
  Bool<O> y_int = floor(y) == y;
  Real<O> half = ay * 0.5;
  Bool<O> y_odd = y_int && ay < 0x1p53 && !(floor(half) == half);
  Bool<O> negate = sign_bit(x) && y_odd;
  // The core: exp(y log|x|) for finite nonzero x and finite y.
  Bool<O> core_ok = finite_x && !(x == 0.0) && finite_y;
  DD<O> l = detail::log_dd(select(core_ok, ax, one));
  Real<O> yc = select(core_ok, y, zero);
  Real<O> z0 = yc * l.hi;
  Bool<O> out_of_range = !(fabs(z0) < 800.0);
  Real<O> r = detail::exp_dd(l * yc).hi;
  r = select(out_of_range, select(z0 > 0.0, inf, zero), r);
  r = select(negate, -r, r);
  r = select(x < 0.0 && finite_x && finite_y && !y_int, detail::nan(x), r);
  // y infinite: |x| against 1.
  Real<O> at_inf = select((ax < 1.0) == (y < 0.0) && !(ax == 1.0), inf, zero);
  r = select(is_inf(y), select(ax == 1.0, one, at_inf), r);
  // x zero or infinite.
  Real<O> edge = select((x == 0.0) == (y < 0.0), inf, zero);
  r = select((x == 0.0 || is_inf(x)) && !is_nan(y), select(negate, -edge, edge), r);
  r = select(is_nan(x) || is_nan(y), x + y, r);
  r = select(x == 1.0, one, r);
  return select(y == 0.0, one, r);
}

}  // namespace pb::codegen::math
