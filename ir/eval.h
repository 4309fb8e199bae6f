// Scalar arithmetic of unary, binary and atomic statements: the one definition of their
// semantics, used by the reference interpreter and by constant folding, so the two can never
// disagree. f32 is computed in float, f64 in double; integers wrap around (two's complement)
// with no undefined behaviour. Semantics follow the reference compiler's codegen:
//   div (int)   truncates; x/0 throws; INT_MIN / -1 wraps to INT_MIN
//   floordiv    floor division (ints: Python semantics; floats: floor(a / b))
//   mod         C remainder, the sign of the dividend (IR `mod` is the frontend's raw_mod; Python's
//               `%` arrives already expanded to a - floordiv(a, b) * b); floats: fmod
//   pow (int)   repeated multiplication; a negative exponent throws
//   min/max     floats: fmin/fmax (a NaN operand yields the other operand); ints: signed/unsigned
//   cmp_*       ordered float comparisons: any NaN operand gives 0, also for cmp_ne
//   shifts      the amount is taken modulo the bit width; shr is logical; sar is arithmetic for
//               signed kinds and logical for unsigned ones
//   sgn         -1/0/1 (floats: NaN and -0.0 give 0)
//   round       half away from zero
#pragma once

#include <string>

#include "ir/ops.h"
#include "ir/value.h"

namespace pb::ir {

// A value-level error (integer division by zero, ...); callers add the statement.
struct EvalError {
  std::string message;
  std::string remedy;
};

// `result` is the statement's kind: it differs from the operand's only for logic_not.
// Casts are not handled here (Value::cast_to, Value::bitcast_to). Throws EvalError.
Value eval_unary(UnaryOp op, const Value& x, ScalarKind result);
// Operands have the same kind except for shifts; `result` is the statement's kind (the operand
// kind, or an integer kind for comparisons). Throws EvalError.
Value eval_binary(BinaryOp op, const Value& a, const Value& b, ScalarKind result);
// The new cell value of `atomic op(cell, val)`.
// The value a quant integer cell of |bits| bits (negative: signed) holds after storing `v`, in
// `v`'s kind: the low bits, sign- or zero-extended.
Value quant_wrap(const Value& v, int bits);

Value eval_atomic(AtomicOp op, const Value& old, const Value& val);

}  // namespace pb::ir
