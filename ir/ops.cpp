#include "ir/ops.h"

#include <iterator>

namespace pb::ir {

#define PB_NAME_CASE(Enum, name, spelling) \
  case Enum::name:                         \
    return spelling;
#define PB_FROM_NAME(Enum, name, spelling) \
  if (s == (spelling)) return Enum::name;

std::string_view op_name(UnaryOp op) {
  switch (op) {
#define PB_X(name, spelling, gradient) PB_NAME_CASE(UnaryOp, name, spelling)
    PB_UNARY_OPS(PB_X)
#undef PB_X
  }
  return "?";
}
std::string_view op_name(BinaryOp op) {
  switch (op) {
#define PB_X(name, spelling, gradient) PB_NAME_CASE(BinaryOp, name, spelling)
    PB_BINARY_OPS(PB_X)
#undef PB_X
  }
  return "?";
}
std::string_view op_name(AtomicOp op) {
  switch (op) {
#define PB_X(name, spelling) PB_NAME_CASE(AtomicOp, name, spelling)
    PB_ATOMIC_OPS(PB_X)
#undef PB_X
  }
  return "?";
}

std::optional<UnaryOp> unary_op_from_name(std::string_view s) {
#define PB_X(name, spelling, gradient) PB_FROM_NAME(UnaryOp, name, spelling)
  PB_UNARY_OPS(PB_X)
#undef PB_X
  if (s == "reinterpret_cast") return UnaryOp::cast_bits;  // spelling used by some dumps
  return std::nullopt;
}
std::optional<BinaryOp> binary_op_from_name(std::string_view s) {
#define PB_X(name, spelling, gradient) PB_FROM_NAME(BinaryOp, name, spelling)
  PB_BINARY_OPS(PB_X)
#undef PB_X
  return std::nullopt;
}
std::optional<AtomicOp> atomic_op_from_name(std::string_view s) {
#define PB_X(name, spelling) PB_FROM_NAME(AtomicOp, name, spelling)
  PB_ATOMIC_OPS(PB_X)
#undef PB_X
  return std::nullopt;
}

// Tables in the enums' order (both come from the same X-macro list).
Gradient gradient_of(UnaryOp op) {
  static constexpr Gradient kGradients[] = {
#define PB_X(name, spelling, gradient) Gradient::gradient,
      PB_UNARY_OPS(PB_X)
#undef PB_X
  };
  auto i = static_cast<size_t>(op);
  return i < std::size(kGradients) ? kGradients[i] : Gradient::none;
}
Gradient gradient_of(BinaryOp op) {
  static constexpr Gradient kGradients[] = {
#define PB_X(name, spelling, gradient) Gradient::gradient,
      PB_BINARY_OPS(PB_X)
#undef PB_X
  };
  auto i = static_cast<size_t>(op);
  return i < std::size(kGradients) ? kGradients[i] : Gradient::none;
}

bool is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::cmp_lt:
    case BinaryOp::cmp_le:
    case BinaryOp::cmp_gt:
    case BinaryOp::cmp_ge:
    case BinaryOp::cmp_eq:
    case BinaryOp::cmp_ne:
      return true;
    default:
      return false;
  }
}

bool is_cast(UnaryOp op) { return op == UnaryOp::cast_value || op == UnaryOp::cast_bits; }

bool requires_float(UnaryOp op) {
  switch (op) {
    case UnaryOp::sqrt:
    case UnaryOp::rsqrt:
    case UnaryOp::sin:
    case UnaryOp::cos:
    case UnaryOp::tan:
    case UnaryOp::tanh:
    case UnaryOp::asin:
    case UnaryOp::acos:
    case UnaryOp::exp:
    case UnaryOp::log:
    case UnaryOp::floor:
    case UnaryOp::ceil:
    case UnaryOp::round:
      return true;
    default:
      return false;
  }
}

bool requires_integral(UnaryOp op) { return op == UnaryOp::bit_not; }

bool requires_integral(BinaryOp op) {
  switch (op) {
    case BinaryOp::bit_and:
    case BinaryOp::bit_or:
    case BinaryOp::bit_xor:
    case BinaryOp::bit_shl:
    case BinaryOp::bit_shr:
    case BinaryOp::bit_sar:
      return true;
    default:
      return false;
  }
}

}  // namespace pb::ir
