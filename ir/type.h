// Scalar, tensor and pointer types of CHI IR.
// A DataType is a scalar kind plus a pointer flag, optionally a quant type or a tensor shape;
// `unknown` is the type of statements that produce no value (stores, containers) and prints as no
// type hint.
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

inline constexpr uint32_t kMaxTypeIds = 2047;  // interned quant types, and tensor shapes, per process

struct DataType {
  ScalarKind scalar = ScalarKind::unknown;
  bool pointer : 1 = false;  // bit-fields: the type sits in a statement's 4-byte header slot
  bool gen : 1 = false;      // `*gen`: a pointer to a cell of an SNode (scalar unknown, pointer true)
  // A quant type (ir/quant.h), 0 for none: `scalar` is then its compute type, what a load from
  // a pointer to it gives (`<*qi4>` loads an i32).
  uint32_t quant : 11 = 0;
  // A tensor shape (ir/tensor_type.h), 0 for none: the type is `[Tensor (shape) scalar]`, or a
  // pointer to one. Tensors of quant types or of pointers do not exist.
  uint32_t tensor : 11 = 0;

  static DataType of(ScalarKind k) { return {k, false}; }
  static DataType pointer_to(ScalarKind k) { return {k, true}; }
  static DataType gen_pointer() { return {ScalarKind::unknown, true, true}; }
  static DataType tensor_of(ScalarKind k, uint32_t shape, bool ptr = false) { return {k, ptr, false, 0, shape}; }
  bool known() const { return scalar != ScalarKind::unknown || gen; }
  bool is_value() const { return known() && !pointer; }
  bool is_tensor() const { return tensor != 0; }
  bool is_scalar_value() const { return is_value() && tensor == 0; }
  // The type a load through this pointer gives: a quant pointee loads its compute type.
  DataType pointee() const { return {scalar, false, false, 0, tensor}; }
  // The element type of a tensor (a scalar value), or this type's value form.
  DataType element() const { return {scalar, false}; }
  DataType as_pointer() const { return {scalar, true, gen, quant, tensor}; }
  bool operator==(const DataType&) const = default;
};
static_assert(sizeof(DataType) == 4);

// "f32", "*f32", "*gen", "*qi4", "[Tensor (2, 3) f32]", "*[Tensor (4) f16]", or "" for unknown.
std::string to_string(DataType t);
// Parses what to_string prints; nullopt for anything else.
std::optional<DataType> parse_type(std::string_view text);

}  // namespace pb::ir
