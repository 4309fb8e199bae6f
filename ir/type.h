// Scalar and pointer types of CHI IR.
// A DataType is a scalar kind plus a pointer flag; `unknown` is the type of statements that
// produce no value (stores, containers) and prints as no type hint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pb::ir {

// Every primitive type of the reference. f16 values are kept as floats rounded to half precision.
#define PB_SCALAR_KINDS(X) \
  X(u1)                    \
  X(i32)                   \
  X(i64)                   \
  X(u32)                   \
  X(u64)                   \
  X(f32)                   \
  X(f64)                   \
  X(f16)                   \
  X(i8)                    \
  X(i16)                   \
  X(u8)                    \
  X(u16)

enum class ScalarKind : uint8_t {
  unknown,
#define PB_X(name) name,
  PB_SCALAR_KINDS(PB_X)
#undef PB_X
};

std::string_view scalar_name(ScalarKind k);
// Returns the kind spelled `name` ("f32"), or nullopt. "unknown" is not a spelling.
std::optional<ScalarKind> scalar_from_name(std::string_view name);

bool is_float(ScalarKind k);
bool is_integral(ScalarKind k);  // u1 counts as integral
bool is_signed(ScalarKind k);
int bit_width(ScalarKind k);

struct DataType {
  ScalarKind scalar = ScalarKind::unknown;
  bool pointer : 1 = false;  // bit-fields: the type sits in a statement's 4-byte header slot
  bool gen : 1 = false;      // `*gen`: a pointer to a cell of an SNode (scalar unknown, pointer true)
  // A quant type (ir/quant.h), 0 for none: `scalar` is then its compute type, what a load from
  // a pointer to it gives (`<*qi4>` loads an i32).
  uint16_t quant = 0;

  static DataType of(ScalarKind k) { return {k, false}; }
  static DataType pointer_to(ScalarKind k) { return {k, true}; }
  static DataType gen_pointer() { return {ScalarKind::unknown, true, true}; }
  bool known() const { return scalar != ScalarKind::unknown || gen; }
  bool is_value() const { return known() && !pointer; }
  // The type a load through this pointer gives: a quant pointee loads its compute type.
  DataType pointee() const { return {scalar, false}; }
  bool operator==(const DataType&) const = default;
};
static_assert(sizeof(DataType) == 4);

// "f32", "*f32", "*gen", "*qi4", or "" for unknown.
std::string to_string(DataType t);
// Parses "f32", "*f32" or a quant type ("qi4", "*cu1"); nullopt for anything else.
std::optional<DataType> parse_type(std::string_view text);

}  // namespace pb::ir
