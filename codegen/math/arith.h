// The arithmetic the f64 algorithms of codegen/math/f64.h are written in: value wrappers with
// operators over an "ops" type O, double-double helpers, and HostOps (plain C++ doubles).
//
// No fused multiply-add: drivers may evaluate GLSL.std.450 Fma on doubles as a multiply and an add
// (lavapipe does), so exact products are Dekker's.
// An ops type O provides the types O::F (a double), O::B (a boolean) and O::I (a 32-bit signed
// integer) and these members, all side-effect free:
//   F c(double); I ci(int32_t);
//   F add, sub, mul, div (F, F): correctly rounded, never contracted or reassociated;
//   F neg, abs, sqrt (correctly rounded), floor, rint (ties to even) (F);
//   F select(B, F, F); I iselect(B, I, I); B lt, le, eq (F, F): ordered; B is_nan(F), is_inf(F);
//   B both, either (B, B); B negate(B);
//   I hi(F), lo(F): the high and low 32 bits of the encoding; F from_words(I lo, I hi);
//   I iadd, isub, iand, ior (I, I); I shl(I, int), sar(I, int); B ilt, ieq (I, I);
//   I to_int(F): F integral and within i32 range (any result otherwise); F to_f(I);
//   F lookup(const double* table, int size, I index): table[index], index within [0, size);
//   F loop_while(F init, cond, step): v = init; while (cond(v)) v = step(v); cond maps F to B and
//   step F to F (the only control flow; it must terminate).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace pb::codegen::math {

template <class O>
struct Bool {
  O* o;
  typename O::B v;
  Bool operator&&(Bool b) const { return {o, o->both(v, b.v)}; }
  Bool operator||(Bool b) const { return {o, o->either(v, b.v)}; }
  Bool operator!() const { return {o, o->negate(v)}; }
  Bool operator==(Bool b) const { return (*this && b) || (!*this && !b); }
};

template <class O>
struct Int {
  O* o;
  typename O::I v;
  Int k(int32_t x) const { return {o, o->ci(x)}; }
  Int operator+(Int b) const { return {o, o->iadd(v, b.v)}; }
  Int operator-(Int b) const { return {o, o->isub(v, b.v)}; }
  Int operator&(Int b) const { return {o, o->iand(v, b.v)}; }
  Int operator|(Int b) const { return {o, o->ior(v, b.v)}; }
  Int operator+(int32_t b) const { return *this + k(b); }
  Int operator-(int32_t b) const { return *this - k(b); }
  Int operator&(int32_t b) const { return *this & k(b); }
  Int operator|(int32_t b) const { return *this | k(b); }
  Int operator<<(int s) const { return {o, o->shl(v, s)}; }
  Int operator>>(int s) const { return {o, o->sar(v, s)}; }  // arithmetic
  Bool<O> operator<(Int b) const { return {o, o->ilt(v, b.v)}; }
  Bool<O> operator<(int32_t b) const { return *this < k(b); }
  Bool<O> operator==(int32_t b) const { return {o, o->ieq(v, o->ci(b))}; }
};

template <class O>
struct Real {
  O* o;
  typename O::F v;
  Real k(double x) const { return {o, o->c(x)}; }
  Real operator+(Real b) const { return {o, o->add(v, b.v)}; }
  Real operator-(Real b) const { return {o, o->sub(v, b.v)}; }
  Real operator*(Real b) const { return {o, o->mul(v, b.v)}; }
  Real operator/(Real b) const { return {o, o->div(v, b.v)}; }
  Real operator-() const { return {o, o->neg(v)}; }
  Real operator+(double b) const { return *this + k(b); }
  Real operator-(double b) const { return *this - k(b); }
  Real operator*(double b) const { return *this * k(b); }
  Real operator/(double b) const { return *this / k(b); }
  Bool<O> operator<(Real b) const { return {o, o->lt(v, b.v)}; }
  Bool<O> operator<=(Real b) const { return {o, o->le(v, b.v)}; }
  Bool<O> operator>(Real b) const { return b < *this; }
  Bool<O> operator>=(Real b) const { return b <= *this; }
  Bool<O> operator==(Real b) const { return {o, o->eq(v, b.v)}; }
  Bool<O> operator<(double b) const { return *this < k(b); }
  Bool<O> operator<=(double b) const { return *this <= k(b); }
  Bool<O> operator>(double b) const { return k(b) < *this; }
  Bool<O> operator>=(double b) const { return k(b) <= *this; }
  Bool<O> operator==(double b) const { return *this == k(b); }
};

template <class O>
Real<O> operator-(double a, Real<O> b) {
  return b.k(a) - b;
}
template <class O>
Real<O> operator*(double a, Real<O> b) {
  return b.k(a) * b;
}
template <class O>
Real<O> fabs(Real<O> a) {
  return {a.o, a.o->abs(a.v)};
}
template <class O>
Real<O> sqrt(Real<O> a) {
  return {a.o, a.o->sqrt(a.v)};
}
template <class O>
Real<O> floor(Real<O> a) {
  return {a.o, a.o->floor(a.v)};
}
template <class O>
Real<O> rint(Real<O> a) {
  return {a.o, a.o->rint(a.v)};
}
template <class O>
Real<O> select(Bool<O> c, Real<O> a, Real<O> b) {
  return {a.o, a.o->select(c.v, a.v, b.v)};
}
template <class O>
Real<O> select(Bool<O> c, double a, Real<O> b) {
  return select(c, b.k(a), b);
}
template <class O>
Int<O> select(Bool<O> c, Int<O> a, Int<O> b) {
  return {a.o, a.o->iselect(c.v, a.v, b.v)};
}
template <class O>
Bool<O> is_nan(Real<O> a) {
  return {a.o, a.o->is_nan(a.v)};
}
template <class O>
Bool<O> is_inf(Real<O> a) {
  return {a.o, a.o->is_inf(a.v)};
}
template <class O>
Int<O> hi(Real<O> a) {
  return {a.o, a.o->hi(a.v)};
}
template <class O>
Int<O> lo(Real<O> a) {
  return {a.o, a.o->lo(a.v)};
}
template <class O>
Real<O> from_words(Int<O> low, Int<O> high) {
  return {low.o, low.o->from_words(low.v, high.v)};
}
template <class O>
Int<O> to_int(Real<O> a) {
  return {a.o, a.o->to_int(a.v)};
}
template <class O>
Real<O> to_f(Int<O> a) {
  return {a.o, a.o->to_f(a.v)};
}
template <class O>
Bool<O> sign_bit(Real<O> a) {
  return hi(a) < 0;
}
// 2^e for an integer e in [-1022, 1023].
template <class O>
Real<O> pow2(Int<O> e) {
  return from_words(e.k(0), (e + 1023) << 20);
}
// `a` with the sign of `s`.
template <class O>
Real<O> copy_sign(Real<O> a, Real<O> s) {
  return select(sign_bit(s), -fabs(a), fabs(a));
}
template <class O, class C, class S>
Real<O> loop_while(Real<O> init, C cond, S step) {
  O* o = init.o;
  auto c = [&](typename O::F v) { return cond(Real<O>{o, v}).v; };
  auto s = [&](typename O::F v) { return step(Real<O>{o, v}).v; };
  return {o, o->loop_while(init.v, c, s)};
}
// Horner evaluation of sum coef[i] x^i.
template <class O, size_t N>
Real<O> horner(const double (&coef)[N], Real<O> x, size_t first = 0) {
  Real<O> acc = x.k(coef[N - 1]);
  for (size_t i = N - 1; i-- > first;) acc = acc * x + coef[i];
  return acc;
}

// ---- double-double: hi + lo with |lo| <= ulp(hi) / 2 ----

template <class O>
struct DD {
  Real<O> hi, lo;
};

template <class O>
DD<O> dd(Real<O> a) {
  return {a, a.k(0.0)};
}
template <class O, size_t N>
DD<O> dd(Real<O> like, const double (&parts)[N]) {
  return {like.k(parts[0]), like.k(parts[1])};
}
// a + b exactly, for |a| >= |b| or a == 0.
template <class O>
DD<O> fast_two_sum(Real<O> a, Real<O> b) {
  Real<O> s = a + b;
  return {s, b - (s - a)};
}
template <class O>
DD<O> two_sum(Real<O> a, Real<O> b) {
  Real<O> s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
// a = hi + lo with hi of 26 bits (Veltkamp); |a| < 2^995.
template <class O>
DD<O> split(Real<O> a) {
  Real<O> t = a * 134217729.0;  // 2^27 + 1
  Real<O> h = t - (t - a);
  return {h, a - h};
}
// a * b exactly (Dekker), for |a|, |b| < 2^995 and a product neither over- nor underflowing.
template <class O>
DD<O> two_prod(Real<O> a, Real<O> b) {
  Real<O> p = a * b;
  DD<O> x = split(a), y = split(b);
  return {p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo};
}
template <class O>
DD<O> operator+(DD<O> a, DD<O> b) {
  DD<O> s = two_sum(a.hi, b.hi);
  return fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}
template <class O>
DD<O> operator-(DD<O> a) {
  return {-a.hi, -a.lo};
}
template <class O>
DD<O> operator-(DD<O> a, DD<O> b) {
  return a + -b;
}
template <class O>
DD<O> operator*(DD<O> a, DD<O> b) {
  DD<O> p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
template <class O>
DD<O> operator*(DD<O> a, Real<O> b) {
  DD<O> p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, a.lo * b + p.lo);
}
// a / b; b nonzero, and |b|, |a / b| within two_prod's range.
template <class O>
DD<O> operator/(DD<O> a, DD<O> b) {
  Real<O> q1 = a.hi / b.hi;
  DD<O> r = a - b * q1;
  return fast_two_sum(q1, r.hi / b.hi);
}
template <class O>
DD<O> select(Bool<O> c, DD<O> a, DD<O> b) {
  return {select(c, a.hi, b.hi), select(c, a.lo, b.lo)};
}

// Plain C++ doubles: the reference the tests run the algorithms on.
struct HostOps {
  using F = double;
  using B = bool;
  using I = int32_t;
  F c(double x) { return x; }
  I ci(int32_t x) { return x; }
  F add(F a, F b) { return a + b; }
  F sub(F a, F b) { return a - b; }
  F mul(F a, F b) { return a * b; }
  F div(F a, F b) { return a / b; }
  F neg(F a) { return -a; }
  F abs(F a) { return std::fabs(a); }
  F sqrt(F a) { return std::sqrt(a); }
  F floor(F a) { return std::floor(a); }
  F rint(F a) { return std::nearbyint(a); }
  F select(B c, F a, F b) { return c ? a : b; }
  I iselect(B c, I a, I b) { return c ? a : b; }
  B lt(F a, F b) { return a < b; }
  B le(F a, F b) { return a <= b; }
  B eq(F a, F b) { return a == b; }
  B is_nan(F a) { return std::isnan(a); }
  B is_inf(F a) { return std::isinf(a); }
  B both(B a, B b) { return a && b; }
  B either(B a, B b) { return a || b; }
  B negate(B a) { return !a; }
  I hi(F a) { return static_cast<I>(static_cast<uint32_t>(std::bit_cast<uint64_t>(a) >> 32)); }
  I lo(F a) { return static_cast<I>(static_cast<uint32_t>(std::bit_cast<uint64_t>(a))); }
  F from_words(I l, I h) {
    return std::bit_cast<double>(uint64_t{static_cast<uint32_t>(h)} << 32 | static_cast<uint32_t>(l));
  }
  I iadd(I a, I b) { return static_cast<I>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
  I isub(I a, I b) { return static_cast<I>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }
  I iand(I a, I b) { return a & b; }
  I ior(I a, I b) { return a | b; }
  I shl(I a, int s) { return static_cast<I>(static_cast<uint32_t>(a) << s); }
  I sar(I a, int s) { return a >> s; }
  B ilt(I a, I b) { return a < b; }
  B ieq(I a, I b) { return a == b; }
  I to_int(F a) { return std::fabs(a) < 2147483648.0 ? static_cast<I>(a) : 0; }
  F to_f(I a) { return a; }
  F lookup(const double* table, int size, I index) { return index >= 0 && index < size ? table[index] : 0.0; }
  template <class C, class S>
  F loop_while(F v, C cond, S step) {
    while (cond(v)) v = step(v);
    return v;
  }
};

}  // namespace pb::codegen::math
