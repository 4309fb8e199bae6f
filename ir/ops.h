// Operator tables for unary, binary and atomic statements: each list is written once here
// and names, parsing and properties derive from it.
#pragma once

#include <optional>
#include <string_view>

namespace pb::ir {

// X(name, spelling)
#define PB_UNARY_OPS(X)                 \
  X(neg, "neg")                         \
  X(sqrt, "sqrt")                       \
  X(rsqrt, "rsqrt")                     \
  X(sin, "sin")                         \
  X(cos, "cos")                         \
  X(tan, "tan")                         \
  X(tanh, "tanh")                       \
  X(asin, "asin")                       \
  X(acos, "acos")                       \
  X(exp, "exp")                         \
  X(log, "log")                         \
  X(abs, "abs")                         \
  X(sgn, "sgn")                         \
  X(floor, "floor")                     \
  X(ceil, "ceil")                       \
  X(round, "round")                     \
  X(logic_not, "logic_not")             \
  X(bit_not, "bit_not")                 \
  X(cast_value, "cast_value")           \
  X(cast_bits, "reinterpret_cast_bits")

#define PB_BINARY_OPS(X)        \
  X(add, "add")                 \
  X(sub, "sub")                 \
  X(mul, "mul")                 \
  X(div, "div")                 \
  X(floordiv, "floordiv")       \
  X(mod, "mod")                 \
  X(pow, "pow")                 \
  X(atan2, "atan2")             \
  X(max, "max")                 \
  X(min, "min")                 \
  X(cmp_lt, "cmp_lt")           \
  X(cmp_le, "cmp_le")           \
  X(cmp_gt, "cmp_gt")           \
  X(cmp_ge, "cmp_ge")           \
  X(cmp_eq, "cmp_eq")           \
  X(cmp_ne, "cmp_ne")           \
  X(bit_and, "bit_and")         \
  X(bit_or, "bit_or")           \
  X(bit_xor, "bit_xor")         \
  X(bit_shl, "bit_shl")         \
  X(bit_shr, "bit_shr")         \
  X(bit_sar, "bit_sar")         \
  X(logical_and, "logical_and") \
  X(logical_or, "logical_or")

#define PB_ATOMIC_OPS(X) \
  X(add, "add")          \
  X(sub, "sub")          \
  X(mul, "mul")          \
  X(min, "min")          \
  X(max, "max")          \
  X(bit_and, "bit_and")  \
  X(bit_or, "bit_or")    \
  X(bit_xor, "bit_xor")

#define PB_ENUM_ENTRY(name, spelling) name,
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

bool is_comparison(BinaryOp op);
bool is_cast(UnaryOp op);  // cast_value and cast_bits carry a target type
// Ops defined only on floating-point operands (sqrt, sin, ...).
bool requires_float(UnaryOp op);
bool requires_integral(UnaryOp op);
bool requires_integral(BinaryOp op);

}  // namespace pb::ir
