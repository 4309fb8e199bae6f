// Operator tables for unary, binary and atomic statements: each list is written once here
// and names, parsing and properties derive from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pb::ir {

// X(name, spelling, gradient): how the op passes gradients to its operands, declared with it.
//   none: not at all (comparisons, integer, bit and logical ops; rounding and sgn, whose
//         derivative is zero almost everywhere);
//   linear: the adjoint formula reads no operand (neg, add, sub, casts between float types; a
//         cast to an integer has no real result, so nothing flows through it);
//   nonlinear: the formula reads operands, which reverse mode must keep for the reverse pass.
#define PB_UNARY_OPS(X)               \
  X(neg, "neg", linear)               \
  X(sqrt, "sqrt", nonlinear)          \
  X(rsqrt, "rsqrt", nonlinear)        \
  X(sin, "sin", nonlinear)            \
  X(cos, "cos", nonlinear)            \
  X(tan, "tan", nonlinear)            \
  X(tanh, "tanh", nonlinear)          \
  X(asin, "asin", nonlinear)          \
  X(acos, "acos", nonlinear)          \
  X(exp, "exp", nonlinear)            \
  X(log, "log", nonlinear)            \
  X(abs, "abs", nonlinear)            \
  X(sgn, "sgn", none)                 \
  X(floor, "floor", none)             \
  X(ceil, "ceil", none)               \
  X(round, "round", none)             \
  X(logic_not, "logic_not", none)     \
  X(bit_not, "bit_not", none)         \
  X(cast_value, "cast_value", linear) \
  X(cast_bits, "reinterpret_cast_bits", none)

#define PB_BINARY_OPS(X)              \
  X(add, "add", linear)               \
  X(sub, "sub", linear)               \
  X(mul, "mul", nonlinear)            \
  X(div, "div", nonlinear)            \
  X(floordiv, "floordiv", none)       \
  X(mod, "mod", nonlinear)            \
  X(pow, "pow", nonlinear)            \
  X(atan2, "atan2", nonlinear)        \
  X(max, "max", nonlinear)            \
  X(min, "min", nonlinear)            \
  X(cmp_lt, "cmp_lt", none)           \
  X(cmp_le, "cmp_le", none)           \
  X(cmp_gt, "cmp_gt", none)           \
  X(cmp_ge, "cmp_ge", none)           \
  X(cmp_eq, "cmp_eq", none)           \
  X(cmp_ne, "cmp_ne", none)           \
  X(bit_and, "bit_and", none)         \
  X(bit_or, "bit_or", none)           \
  X(bit_xor, "bit_xor", none)         \
  X(bit_shl, "bit_shl", none)         \
  X(bit_shr, "bit_shr", none)         \
  X(bit_sar, "bit_sar", none)         \
  X(logical_and, "logical_and", none) \
  X(logical_or, "logical_or", none)

#define PB_ATOMIC_OPS(X) \
  X(add, "add")          \
  X(sub, "sub")          \
  X(mul, "mul")          \
  X(min, "min")          \
  X(max, "max")          \
  X(bit_and, "bit_and")  \
  X(bit_or, "bit_or")    \
  X(bit_xor, "bit_xor")

#define PB_ENUM_ENTRY(name, ...) name,
enum class UnaryOp { PB_UNARY_OPS(PB_ENUM_ENTRY) };
enum class BinaryOp { PB_BINARY_OPS(PB_ENUM_ENTRY) };
enum class AtomicOp { PB_ATOMIC_OPS(PB_ENUM_ENTRY) };
#undef PB_ENUM_ENTRY

std::string_view op_name(UnaryOp op);
std::string_view op_name(BinaryOp op);
std::string_view op_name(AtomicOp op);
std::optional<UnaryOp> unary_op_from_name(std::string_view s);
std::optional<BinaryOp> binary_op_from_name(std::string_view s);
std::optional<AtomicOp> atomic_op_from_name(std::string_view s);

enum class Gradient : uint8_t { none, linear, nonlinear };
Gradient gradient_of(UnaryOp op);
Gradient gradient_of(BinaryOp op);

bool is_comparison(BinaryOp op);
bool is_cast(UnaryOp op);  // cast_value and cast_bits carry a target type
// Ops defined only on floating-point operands (sqrt, sin, ...).
bool requires_float(UnaryOp op);
bool requires_integral(UnaryOp op);
bool requires_integral(BinaryOp op);

}  // namespace pb::ir
