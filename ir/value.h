// A typed scalar constant: the payload of `const` statements and of interpreter values.
// Integers follow C semantics (unsigned wrap-around); f32 is stored and computed as float; f16 is
// stored as the float it rounds to (round to nearest even), so as_f32() reads it exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/type.h"

namespace pb::ir {

class Value {
 public:
  Value() = default;
  static Value make_bool(bool v);
  static Value make_i32(int32_t v);
  static Value make_i64(int64_t v);
  static Value make_u32(uint32_t v);
  static Value make_u64(uint64_t v);
  static Value make_f32(float v);
  static Value make_f64(double v);
  static Value make_f16(double v);  // rounded to half precision once; a NaN becomes the quiet NaN
  static Value make_i8(int8_t v);
  static Value make_i16(int16_t v);
  static Value make_u8(uint8_t v);
  static Value make_u16(uint16_t v);
  static Value zero(ScalarKind k);
  // Converts `v` to kind `k` with C cast semantics (float->int truncates; out of range is
  // clamped rather than UB, NaN becomes 0).
  static Value from_double(ScalarKind k, double v);
  static Value from_int(ScalarKind k, int64_t v);
  static Value from_uint(ScalarKind k, uint64_t v);

  ScalarKind kind() const { return kind_; }
  bool as_bool() const;
  int64_t as_i64() const;                // integral kinds sign- or zero-extended; floats truncated
  uint64_t as_u64() const;               // raw bits for unsigned, two's complement for signed
  double as_f64() const;                 // exact for every kind but i64/u64 beyond 2^53
  float as_f32() const { return f32_; }  // f32 and f16 only
  Value cast_to(ScalarKind k) const;
  // Reinterprets the bits (same width) as kind `k`.
  Value bitcast_to(ScalarKind k) const;
  uint64_t bits() const;
  bool is_zero() const;
  bool is_one() const;

  // Shortest text that reads back to the same value ("0.95", "1", "-inf", "nan").
  std::string to_string() const;
  // Parses a literal of kind `k` ("0.3", "1e-05", "0.0", "true", "-3", "inf", "nan").
  static std::optional<Value> parse(ScalarKind k, std::string_view text);

  // Bitwise equality (so NaN == NaN and -0.0 != 0.0): what CSE and tests need.
  bool identical(const Value& o) const { return kind_ == o.kind_ && bits() == o.bits(); }

 private:
  ScalarKind kind_ = ScalarKind::unknown;
  union {
    bool b_;
    int8_t i8_;
    int16_t i16_;
    uint8_t u8_;
    uint16_t u16_;
    int32_t i32_;
    int64_t i64_;
    uint32_t u32_;
    uint64_t u64_ = 0;
    float f32_;
    double f64_;
  };
};

}  // namespace pb::ir
