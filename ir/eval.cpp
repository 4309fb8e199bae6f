#include "ir/eval.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "ir/assert.h"

namespace pb::ir {
namespace {

// An integer value of kind `k` from the low bits of `bits`.
Value int_value(ScalarKind k, uint64_t bits) {
  switch (k) {
    case ScalarKind::u1:
      return Value::make_bool((bits & 1) != 0);
    case ScalarKind::i32:
      return Value::make_i32(static_cast<int32_t>(static_cast<uint32_t>(bits)));
    case ScalarKind::u32:
      return Value::make_u32(static_cast<uint32_t>(bits));
    case ScalarKind::i64:
      return Value::make_i64(static_cast<int64_t>(bits));
    case ScalarKind::u64:
      return Value::make_u64(bits);
    case ScalarKind::i8:
      return Value::make_i8(static_cast<int8_t>(static_cast<uint8_t>(bits)));
    case ScalarKind::i16:
      return Value::make_i16(static_cast<int16_t>(static_cast<uint16_t>(bits)));
    case ScalarKind::u8:
      return Value::make_u8(static_cast<uint8_t>(bits));
    case ScalarKind::u16:
      return Value::make_u16(static_cast<uint16_t>(bits));
    default:
      PB_ASSERT(false, fmt::format("int_value of non-integer kind {}", scalar_name(k)));
  }
  return {};
}

Value bool_value(ScalarKind k, bool b) { return is_float(k) ? Value::from_int(k, b ? 1 : 0) : int_value(k, b ? 1 : 0); }

uint64_t width_mask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

template <class T>
T get(const Value& v) {
  if constexpr (std::is_same_v<T, float>)
    return v.as_f32();
  else
    return v.as_f64();
}

Value make(float v) { return Value::make_f32(v); }
Value make(double v) { return Value::make_f64(v); }

[[noreturn]] void needs_integers(BinaryOp op) {
  throw EvalError{fmt::format("{} needs integer operands", op_name(op)), "cast the operands to an integer type"};
}

template <class T>
Value float_binary(BinaryOp op, T a, T b, ScalarKind result) {
  switch (op) {
    case BinaryOp::add:
      return make(a + b);
    case BinaryOp::sub:
      return make(a - b);
    case BinaryOp::mul:
      return make(a * b);
    case BinaryOp::div:
      return make(a / b);
    case BinaryOp::floordiv:
      return make(std::floor(a / b));
    case BinaryOp::mod:
      return make(std::fmod(a, b));
    case BinaryOp::pow:
      return make(std::pow(a, b));
    case BinaryOp::atan2:
      return make(std::atan2(a, b));
    case BinaryOp::max:
      return make(std::fmax(a, b));
    case BinaryOp::min:
      return make(std::fmin(a, b));
    case BinaryOp::cmp_lt:
      return bool_value(result, a < b);
    case BinaryOp::cmp_le:
      return bool_value(result, a <= b);
    case BinaryOp::cmp_gt:
      return bool_value(result, a > b);
    case BinaryOp::cmp_ge:
      return bool_value(result, a >= b);
    case BinaryOp::cmp_eq:
      return bool_value(result, a == b);
    case BinaryOp::cmp_ne:
      return bool_value(result, a < b || a > b);  // ordered: false when either is NaN
    case BinaryOp::bit_and:
    case BinaryOp::bit_or:
    case BinaryOp::bit_xor:
    case BinaryOp::bit_shl:
    case BinaryOp::bit_shr:
    case BinaryOp::bit_sar:
    case BinaryOp::logical_and:
    case BinaryOp::logical_or:
      needs_integers(op);
  }
  return {};
}

[[noreturn]] void division_by_zero(BinaryOp op) {
  throw EvalError{fmt::format("integer {} by zero", op == BinaryOp::mod ? "modulo" : "division"),
                  "guard the divisor: GPU backends leave integer division by zero undefined"};
}

Value int_binary(BinaryOp op, const Value& a, const Value& b, ScalarKind result) {
  const ScalarKind k = a.kind();
  const bool is_signed = pb::ir::is_signed(k);
  const int width = pb::ir::bit_width(k);
  const uint64_t mask = width_mask(width);
  const uint64_t ua = a.as_u64(), ub = b.as_u64();
  const int64_t ia = a.as_i64(), ib = b.as_i64();
  const bool min_by_minus_one = is_signed && ib == -1 && ia == std::numeric_limits<int64_t>::min();
  const uint64_t shift = ub & static_cast<uint64_t>(width - 1);
  switch (op) {
    case BinaryOp::add:
      return int_value(result, ua + ub);
    case BinaryOp::sub:
      return int_value(result, ua - ub);
    case BinaryOp::mul:
      return int_value(result, ua * ub);
    case BinaryOp::div:
    case BinaryOp::floordiv:
    case BinaryOp::mod: {
      if ((ub & mask) == 0) division_by_zero(op);
      if (!is_signed) {
        uint64_t x = ua & mask, y = ub & mask;
        return int_value(result, op == BinaryOp::mod ? x % y : x / y);
      }
      int64_t q = min_by_minus_one ? ia : ia / ib;
      int64_t r = min_by_minus_one ? 0 : ia % ib;
      if (op == BinaryOp::mod) return int_value(result, static_cast<uint64_t>(r));
      if (op == BinaryOp::floordiv && r != 0 && ((r < 0) != (ib < 0))) q -= 1;
      return int_value(result, static_cast<uint64_t>(q));
    }
    case BinaryOp::pow: {
      if (is_signed && ib < 0)
        throw EvalError{"negative exponent in pow(int, int) is not allowed",
                        "use a float base, or make sure the exponent is not negative"};
      uint64_t base = ua, exponent = is_signed ? static_cast<uint64_t>(ib) : (ub & mask), r = 1;
      for (; exponent != 0; exponent >>= 1, base *= base)
        if (exponent & 1) r *= base;
      return int_value(result, r);
    }
    case BinaryOp::atan2:
      throw EvalError{"atan2 needs floating-point operands", "cast the operands to f32 or f64"};
    case BinaryOp::max:
      return is_signed ? (ia > ib ? a : b) : ((ua & mask) > (ub & mask) ? a : b);
    case BinaryOp::min:
      return is_signed ? (ia < ib ? a : b) : ((ua & mask) < (ub & mask) ? a : b);
    case BinaryOp::cmp_lt:
      return bool_value(result, is_signed ? ia < ib : (ua & mask) < (ub & mask));
    case BinaryOp::cmp_le:
      return bool_value(result, is_signed ? ia <= ib : (ua & mask) <= (ub & mask));
    case BinaryOp::cmp_gt:
      return bool_value(result, is_signed ? ia > ib : (ua & mask) > (ub & mask));
    case BinaryOp::cmp_ge:
      return bool_value(result, is_signed ? ia >= ib : (ua & mask) >= (ub & mask));
    case BinaryOp::cmp_eq:
      return bool_value(result, (ua & mask) == (ub & mask));
    case BinaryOp::cmp_ne:
      return bool_value(result, (ua & mask) != (ub & mask));
    case BinaryOp::bit_and:
      return int_value(result, ua & ub);
    case BinaryOp::bit_or:
      return int_value(result, ua | ub);
    case BinaryOp::bit_xor:
      return int_value(result, ua ^ ub);
    case BinaryOp::bit_shl:
      return int_value(result, ua << shift);
    case BinaryOp::bit_shr:
      return int_value(result, (ua & mask) >> shift);
    case BinaryOp::bit_sar:
      return int_value(result, is_signed ? static_cast<uint64_t>(ia >> shift) : (ua & mask) >> shift);
    case BinaryOp::logical_and:
      return bool_value(result, !a.is_zero() && !b.is_zero());
    case BinaryOp::logical_or:
      return bool_value(result, !a.is_zero() || !b.is_zero());
  }
  return {};
}

template <class T>
Value float_unary(UnaryOp op, T x, ScalarKind result) {
  switch (op) {
    case UnaryOp::neg:
      return make(-x);
    case UnaryOp::sqrt:
      return make(std::sqrt(x));
    case UnaryOp::rsqrt:
      return make(T(1) / std::sqrt(x));
    case UnaryOp::sin:
      return make(std::sin(x));
    case UnaryOp::cos:
      return make(std::cos(x));
    case UnaryOp::tan:
      return make(std::tan(x));
    case UnaryOp::tanh:
      return make(std::tanh(x));
    case UnaryOp::asin:
      return make(std::asin(x));
    case UnaryOp::acos:
      return make(std::acos(x));
    case UnaryOp::exp:
      return make(std::exp(x));
    case UnaryOp::log:
      return make(std::log(x));
    case UnaryOp::abs:
      return make(std::fabs(x));
    case UnaryOp::sgn:
      return make(x > 0 ? T(1) : x < 0 ? T(-1) : T(0));
    case UnaryOp::floor:
      return make(std::floor(x));
    case UnaryOp::ceil:
      return make(std::ceil(x));
    case UnaryOp::round:
      return make(std::round(x));
    case UnaryOp::logic_not:
      return bool_value(result, x == 0);
    case UnaryOp::bit_not:
      throw EvalError{"bit_not needs an integer operand", "cast the operand to an integer type"};
    case UnaryOp::cast_value:
    case UnaryOp::cast_bits:
      break;
  }
  PB_ASSERT(false, "casts are evaluated by the interpreter");
}

Value int_unary(UnaryOp op, const Value& x, ScalarKind result) {
  const ScalarKind k = x.kind();
  const uint64_t ux = x.as_u64();
  const int64_t ix = x.as_i64();
  switch (op) {
    case UnaryOp::neg:
      return int_value(k, uint64_t{0} - ux);
    case UnaryOp::abs:
      return int_value(k, pb::ir::is_signed(k) && ix < 0 ? uint64_t{0} - ux : ux);
    case UnaryOp::sgn:
      if (!pb::ir::is_signed(k)) return int_value(k, x.is_zero() ? 0 : 1);
      return int_value(k, static_cast<uint64_t>(ix > 0 ? 1 : ix < 0 ? -1 : 0));
    case UnaryOp::logic_not:
      return bool_value(result, x.is_zero());
    case UnaryOp::bit_not:
      return int_value(k, ~ux);
    case UnaryOp::cast_value:
    case UnaryOp::cast_bits:
      PB_ASSERT(false, "casts are evaluated by the interpreter");
    default:
      throw EvalError{fmt::format("{} needs a floating-point operand", op_name(op)), "cast the operand to f32 or f64"};
  }
}

// f16 is computed in f32 and rounded once to half precision, as backends without native half
// arithmetic do (exact for + - * / and sqrt: f32 has more than twice f16's precision).
Value to_half(const Value& v) { return v.kind() == ScalarKind::f32 ? Value::make_f16(v.as_f32()) : v; }

}  // namespace

Value eval_unary(UnaryOp op, const Value& x, ScalarKind result) {
  if (x.kind() == ScalarKind::f16) return to_half(float_unary<float>(op, x.as_f32(), result));
  if (x.kind() == ScalarKind::f32) return float_unary<float>(op, x.as_f32(), result);
  if (x.kind() == ScalarKind::f64) return float_unary<double>(op, x.as_f64(), result);
  return int_unary(op, x, result);
}

Value eval_binary(BinaryOp op, const Value& a, const Value& b, ScalarKind result) {
  if (is_float(a.kind()) && !is_float(b.kind()))  // pow(float, integer): the exponent converts
    return eval_binary(op, a, b.cast_to(a.kind()), result);
  if (a.kind() == ScalarKind::f16) return to_half(float_binary<float>(op, a.as_f32(), get<float>(b), result));
  if (a.kind() == ScalarKind::f32) return float_binary<float>(op, a.as_f32(), get<float>(b), result);
  if (a.kind() == ScalarKind::f64) return float_binary<double>(op, a.as_f64(), get<double>(b), result);
  if (is_float(b.kind())) needs_integers(op);
  return int_binary(op, a, b, result);
}

Value quant_wrap(const Value& v, int bits) {
  const int width = bits < 0 ? -bits : bits;
  const uint64_t mask = width_mask(width);
  uint64_t low = v.as_u64() & mask;
  if (bits < 0 && width < 64 && (low >> (width - 1)) != 0) low |= ~mask;  // sign-extend
  return Value::from_uint(v.kind(), low);
}

Value eval_atomic(AtomicOp op, const Value& old, const Value& val) {
  BinaryOp bin = BinaryOp::add;
  switch (op) {
    case AtomicOp::add:
      bin = BinaryOp::add;
      break;
    case AtomicOp::sub:
      bin = BinaryOp::sub;
      break;
    case AtomicOp::mul:
      bin = BinaryOp::mul;
      break;
    case AtomicOp::min:
      bin = BinaryOp::min;
      break;
    case AtomicOp::max:
      bin = BinaryOp::max;
      break;
    case AtomicOp::bit_and:
      bin = BinaryOp::bit_and;
      break;
    case AtomicOp::bit_or:
      bin = BinaryOp::bit_or;
      break;
    case AtomicOp::bit_xor:
      bin = BinaryOp::bit_xor;
      break;
  }
  return eval_binary(bin, old, val, old.kind());
}

}  // namespace pb::ir
