#include "ir/value.h"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

namespace pb::ir {

Value Value::make_bool(bool v) {
  Value r;
  r.kind_ = ScalarKind::u1;
  r.u64_ = 0;
  r.b_ = v;
  return r;
}
Value Value::make_i32(int32_t v) {
  Value r;
  r.kind_ = ScalarKind::i32;
  r.u64_ = 0;
  r.i32_ = v;
  return r;
}
Value Value::make_i64(int64_t v) {
  Value r;
  r.kind_ = ScalarKind::i64;
  r.i64_ = v;
  return r;
}
Value Value::make_u32(uint32_t v) {
  Value r;
  r.kind_ = ScalarKind::u32;
  r.u64_ = 0;
  r.u32_ = v;
  return r;
}
Value Value::make_u64(uint64_t v) {
  Value r;
  r.kind_ = ScalarKind::u64;
  r.u64_ = v;
  return r;
}
Value Value::make_f32(float v) {
  Value r;
  r.kind_ = ScalarKind::f32;
  r.u64_ = 0;
  r.f32_ = v;
  return r;
}
Value Value::make_f64(double v) {
  Value r;
  r.kind_ = ScalarKind::f64;
  r.f64_ = v;
  return r;
}

Value Value::make_f16(double v) {
  Value r;
  r.kind_ = ScalarKind::f16;
  r.u64_ = 0;
  r.f32_ = std::isnan(v) ? std::copysign(std::numeric_limits<float>::quiet_NaN(), static_cast<float>(v))
                         : static_cast<float>(static_cast<_Float16>(v));
  return r;
}
Value Value::make_i8(int8_t v) {
  Value r;
  r.kind_ = ScalarKind::i8;
  r.u64_ = 0;
  r.i8_ = v;
  return r;
}
Value Value::make_i16(int16_t v) {
  Value r;
  r.kind_ = ScalarKind::i16;
  r.u64_ = 0;
  r.i16_ = v;
  return r;
}
Value Value::make_u8(uint8_t v) {
  Value r;
  r.kind_ = ScalarKind::u8;
  r.u64_ = 0;
  r.u8_ = v;
  return r;
}
Value Value::make_u16(uint16_t v) {
  Value r;
  r.kind_ = ScalarKind::u16;
  r.u64_ = 0;
  r.u16_ = v;
  return r;
}

Value Value::zero(ScalarKind k) { return from_int(k, 0); }

namespace {
template <class T>
T clamp_to(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
}  // namespace

Value Value::from_double(ScalarKind k, double v) {
  switch (k) {
    case ScalarKind::u1:
      return make_bool(v != 0.0);
    case ScalarKind::i32:
      return make_i32(clamp_to<int32_t>(v));
    case ScalarKind::i64:
      return make_i64(clamp_to<int64_t>(v));
    case ScalarKind::u32:
      return make_u32(clamp_to<uint32_t>(v));
    case ScalarKind::u64:
      return make_u64(clamp_to<uint64_t>(v));
    case ScalarKind::f32:
      return make_f32(static_cast<float>(v));
    case ScalarKind::f64:
      return make_f64(v);
    case ScalarKind::f16:
      return make_f16(v);
    case ScalarKind::i8:
      return make_i8(clamp_to<int8_t>(v));
    case ScalarKind::i16:
      return make_i16(clamp_to<int16_t>(v));
    case ScalarKind::u8:
      return make_u8(clamp_to<uint8_t>(v));
    case ScalarKind::u16:
      return make_u16(clamp_to<uint16_t>(v));
    case ScalarKind::unknown:
      break;
  }
  return {};
}

Value Value::from_int(ScalarKind k, int64_t v) {
  switch (k) {
    case ScalarKind::u1:
      return make_bool(v != 0);
    case ScalarKind::i32:
      return make_i32(static_cast<int32_t>(v));
    case ScalarKind::i64:
      return make_i64(v);
    case ScalarKind::u32:
      return make_u32(static_cast<uint32_t>(v));
    case ScalarKind::u64:
      return make_u64(static_cast<uint64_t>(v));
    case ScalarKind::f32:
      return make_f32(static_cast<float>(v));
    case ScalarKind::f64:
      return make_f64(static_cast<double>(v));
    case ScalarKind::f16:
      return make_f16(static_cast<double>(v));
    case ScalarKind::i8:
      return make_i8(static_cast<int8_t>(v));
    case ScalarKind::i16:
      return make_i16(static_cast<int16_t>(v));
    case ScalarKind::u8:
      return make_u8(static_cast<uint8_t>(v));
    case ScalarKind::u16:
      return make_u16(static_cast<uint16_t>(v));
    case ScalarKind::unknown:
      break;
  }
  return {};
}

Value Value::from_uint(ScalarKind k, uint64_t v) {
  switch (k) {
    case ScalarKind::f32:
      return make_f32(static_cast<float>(v));
    case ScalarKind::f64:
      return make_f64(static_cast<double>(v));
    case ScalarKind::f16:
      return make_f16(static_cast<double>(v));
    default:
      return from_int(k, static_cast<int64_t>(v));
  }
}

bool Value::as_bool() const { return !is_zero(); }

int64_t Value::as_i64() const {
  switch (kind_) {
    case ScalarKind::u1:
      return b_ ? 1 : 0;
    case ScalarKind::i32:
      return i32_;
    case ScalarKind::i64:
      return i64_;
    case ScalarKind::u32:
      return u32_;
    case ScalarKind::u64:
      return static_cast<int64_t>(u64_);
    case ScalarKind::i8:
      return i8_;
    case ScalarKind::i16:
      return i16_;
    case ScalarKind::u8:
      return u8_;
    case ScalarKind::u16:
      return u16_;
    case ScalarKind::f16:
    case ScalarKind::f32:
      return clamp_to<int64_t>(f32_);
    case ScalarKind::f64:
      return clamp_to<int64_t>(f64_);
    case ScalarKind::unknown:
      break;
  }
  return 0;
}

uint64_t Value::as_u64() const {
  switch (kind_) {
    case ScalarKind::u64:
      return u64_;
    case ScalarKind::f16:
    case ScalarKind::f32:
      return clamp_to<uint64_t>(f32_);
    case ScalarKind::f64:
      return clamp_to<uint64_t>(f64_);
    default:
      return static_cast<uint64_t>(as_i64());
  }
}

double Value::as_f64() const {
  switch (kind_) {
    case ScalarKind::f16:
    case ScalarKind::f32:
      return f32_;
    case ScalarKind::f64:
      return f64_;
    case ScalarKind::u64:
      return static_cast<double>(u64_);
    default:
      return static_cast<double>(as_i64());
  }
}

Value Value::cast_to(ScalarKind k) const {
  if (k == kind_) return *this;
  if (kind_ == ScalarKind::f32 || kind_ == ScalarKind::f16) return from_double(k, f32_);
  if (kind_ == ScalarKind::f64) return from_double(k, f64_);
  if (kind_ == ScalarKind::u64) return from_uint(k, u64_);
  return from_int(k, as_i64());
}

uint64_t Value::bits() const {
  switch (kind_) {
    case ScalarKind::u1:
      return b_ ? 1 : 0;
    case ScalarKind::i32:
      return static_cast<uint32_t>(i32_);
    case ScalarKind::u32:
      return u32_;
    case ScalarKind::f32:
      return std::bit_cast<uint32_t>(f32_);
    case ScalarKind::f16:
      return std::bit_cast<uint16_t>(static_cast<_Float16>(f32_));
    case ScalarKind::i8:
    case ScalarKind::u8:
      return u8_;
    case ScalarKind::i16:
    case ScalarKind::u16:
      return u16_;
    default:
      return u64_;
  }
}

Value Value::bitcast_to(ScalarKind k) const {
  uint64_t b = bits();
  switch (k) {
    case ScalarKind::i32:
      return make_i32(static_cast<int32_t>(static_cast<uint32_t>(b)));
    case ScalarKind::u32:
      return make_u32(static_cast<uint32_t>(b));
    case ScalarKind::f32:
      return make_f32(std::bit_cast<float>(static_cast<uint32_t>(b)));
    case ScalarKind::i64:
      return make_i64(static_cast<int64_t>(b));
    case ScalarKind::u64:
      return make_u64(b);
    case ScalarKind::f64:
      return make_f64(std::bit_cast<double>(b));
    case ScalarKind::u1:
      return make_bool(b != 0);
    case ScalarKind::f16:
      return make_f16(static_cast<double>(std::bit_cast<_Float16>(static_cast<uint16_t>(b))));
    case ScalarKind::i8:
      return make_i8(static_cast<int8_t>(static_cast<uint8_t>(b)));
    case ScalarKind::i16:
      return make_i16(static_cast<int16_t>(static_cast<uint16_t>(b)));
    case ScalarKind::u8:
      return make_u8(static_cast<uint8_t>(b));
    case ScalarKind::u16:
      return make_u16(static_cast<uint16_t>(b));
    case ScalarKind::unknown:
      break;
  }
  return {};
}

bool Value::is_zero() const {
  switch (kind_) {
    case ScalarKind::f16:
    case ScalarKind::f32:
      return f32_ == 0.0f;
    case ScalarKind::f64:
      return f64_ == 0.0;
    default:
      return bits() == 0;
  }
}

bool Value::is_one() const {
  switch (kind_) {
    case ScalarKind::f16:
    case ScalarKind::f32:
      return f32_ == 1.0f;
    case ScalarKind::f64:
      return f64_ == 1.0;
    default:
      return as_i64() == 1;
  }
}

namespace {
// NaNs keep their sign and payload: the default quiet NaN is "nan" ("-nan" with the sign bit),
// any other NaN is written by its bits, "nan:0x7f800001".
template <class F, class Bits>
std::string nan_text(F v) {
  Bits bits = std::bit_cast<Bits>(v);
  Bits quiet = std::bit_cast<Bits>(std::numeric_limits<F>::quiet_NaN());
  Bits sign = Bits{1} << (sizeof(Bits) * 8 - 1);
  if (bits == quiet) return "nan";
  if (bits == (quiet | sign)) return "-nan";
  return fmt::format("nan:0x{:0{}x}", bits, sizeof(Bits) * 2);
}

template <class F>
std::string float_text(F v) {
  if (std::isnan(v)) {
    if constexpr (sizeof(F) == 4)
      return nan_text<F, uint32_t>(v);
    else
      return nan_text<F, uint64_t>(v);
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return fmt::format("{}", v);  // shortest round-trip, as the reference printer writes it
}
}  // namespace

std::string Value::to_string() const {
  switch (kind_) {
    case ScalarKind::u1:
      return b_ ? "true" : "false";
    case ScalarKind::i32:
      return std::to_string(i32_);
    case ScalarKind::i64:
      return std::to_string(i64_);
    case ScalarKind::u32:
      return std::to_string(u32_);
    case ScalarKind::u64:
      return std::to_string(u64_);
    case ScalarKind::f16:  // the f32 printer, as the reference prints an f16 constant
    case ScalarKind::f32:
      return float_text(f32_);
    case ScalarKind::f64:
      return float_text(f64_);
    case ScalarKind::i8:
    case ScalarKind::i16:
    case ScalarKind::u8:
    case ScalarKind::u16:
      return std::to_string(as_i64());
    case ScalarKind::unknown:
      break;
  }
  return "?";
}

std::optional<Value> Value::parse(ScalarKind k, std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (k == ScalarKind::u1) {
    if (text == "true" || text == "1") return make_bool(true);
    if (text == "false" || text == "0") return make_bool(false);
    return std::nullopt;
  }
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (is_float(k) && text.rfind("nan:0x", 0) == 0) {
    uint64_t bits = 0;
    auto [p, ec] = std::from_chars(text.data() + 6, text.data() + text.size(), bits, 16);
    if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
    if (k != ScalarKind::f64 && bits > 0xffffffffu) return std::nullopt;
    Value raw = k == ScalarKind::f64 ? make_u64(bits) : make_u32(static_cast<uint32_t>(bits));
    Value v = raw.bitcast_to(ScalarKind::f32);
    if (k == ScalarKind::f64) v = raw.bitcast_to(k);
    if (k == ScalarKind::f16) v = make_f16(v.as_f64());
    if (!std::isnan(v.as_f64())) return std::nullopt;
    return v;
  }
  if (is_float(k)) {
    std::string_view t = text;
    bool neg = false;
    if (t.front() == '-' || t.front() == '+') {
      neg = t.front() == '-';
      t.remove_prefix(1);
    }
    double special = 0;
    bool is_special = true;
    if (t == "inf" || t == "infinity") {
      special = std::numeric_limits<double>::infinity();
    } else if (t == "nan") {
      special = std::numeric_limits<double>::quiet_NaN();
    } else {
      is_special = false;
    }
    if (is_special) return from_double(k, neg ? -special : special);
    if (text.front() == '+') ++first;
    if (k == ScalarKind::f16) {
      double d = 0;
      auto [p, ec] = std::from_chars(first, last, d);
      if (ec != std::errc() || p != last) return std::nullopt;
      return make_f16(d);
    }
    if (k == ScalarKind::f32) {
      float f = 0;
      auto [p, ec] = std::from_chars(first, last, f);
      if (ec != std::errc() || p != last) return std::nullopt;
      return make_f32(f);
    }
    double d = 0;
    auto [p, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || p != last) return std::nullopt;
    return make_f64(d);
  }
  const int width = bit_width(k);
  if (!is_signed(k)) {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(first, last, u);
    if (ec != std::errc() || p != last) return std::nullopt;
    if (width < 64 && u >> width != 0) return std::nullopt;
    return from_uint(k, u);
  }
  int64_t i = 0;
  auto [p, ec] = std::from_chars(first, last, i);
  if (ec != std::errc() || p != last) return std::nullopt;
  if (width < 64 && (i < -(int64_t{1} << (width - 1)) || i >= (int64_t{1} << (width - 1)))) return std::nullopt;
  return from_int(k, i);
}

}  // namespace pb::ir
