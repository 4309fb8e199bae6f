// Constants, arguments, loop indices, conversions and unary/binary/ternary arithmetic with the
// interpreter's semantics (ir/eval.h). Where SPIR-V leaves a case undefined the operands are
// guarded; the remaining divergences are listed in docs/codegen-spirv.md.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"

namespace pb::codegen::spirv::detail {

using ir::BinaryOp;
using ir::ScalarKind;
using ir::UnaryOp;

namespace {

bool wide(ScalarKind k) { return ir::bit_width(k) == 64; }

ScalarKind unsigned_of(ScalarKind k) { return wide(k) ? ScalarKind::u64 : ScalarKind::u32; }

uint64_t float_bits(ScalarKind k, double v) {
  return k == ScalarKind::f64 ? std::bit_cast<uint64_t>(v) : std::bit_cast<uint32_t>(static_cast<float>(v));
}

uint64_t int_bits(ScalarKind k, int64_t v) {
  return wide(k) ? static_cast<uint64_t>(v) : static_cast<uint32_t>(static_cast<int32_t>(v));
}

}  // namespace

// GLSL.std.450 transcendental functions take 16/32-bit floats only: f64 calls our own
// (codegen/spirv/f64_math.h).
static Id glsl_f32_only(TaskEmitter& e, uint32_t inst, ScalarKind k, const Operands& args) {
  if (k != ScalarKind::f64) return e.glsl(inst, k, args);
  switch (inst) {
    case GLSLstd450Sin:
      return e.f64_math_.call(F64Function::sin, args);
    case GLSLstd450Cos:
      return e.f64_math_.call(F64Function::cos, args);
    case GLSLstd450Tan:
      return e.f64_math_.call(F64Function::tan, args);
    case GLSLstd450Tanh:
      return e.f64_math_.call(F64Function::tanh, args);
    case GLSLstd450Asin:
      return e.f64_math_.call(F64Function::asin, args);
    case GLSLstd450Acos:
      return e.f64_math_.call(F64Function::acos, args);
    case GLSLstd450Exp:
      return e.f64_math_.call(F64Function::exp, args);
    case GLSLstd450Log:
      return e.f64_math_.call(F64Function::log, args);
    case GLSLstd450Atan2:
      return e.f64_math_.call(F64Function::atan2, args);
    default:
      PB_ASSERT(false, "no f64 form of a GLSL.std.450 instruction");
  }
}

// ---- statements ----

void TaskEmitter::operator()(const ir::ConstStmt& s) {
  const ir::Value& v = s.value;
  define(s, constant(v.kind(), v.kind() == ScalarKind::f16 ? float_bits(ScalarKind::f32, v.as_f64()) : v.bits()));
}

// GLSL.std.450 Atan2 leaves atan2(0, 0) undefined (lavapipe gives 3pi/4); as libm, it is the
// sign of y on 0 when x is +0 and on pi when x is -0.
Id TaskEmitter::float_atan2(Id y, Id x, ScalarKind k) {
  Id t = value_type(k), u = value_type(ScalarKind::u32);
  auto float_c = [&](double v) { return constant(k, float_bits(ScalarKind::f32, v)); };
  auto bits = [&](Id v) { return b_.op(spv::OpBitcast, u, {v}); };
  Id both_zero =
      b_.op(spv::OpLogicalAnd, t_bool(),
            {b_.op(spv::OpFOrdEqual, t_bool(), {y, float_c(0)}), b_.op(spv::OpFOrdEqual, t_bool(), {x, float_c(0)})});
  Id x_negative =
      b_.op(spv::OpINotEqual, t_bool(), {b_.op(spv::OpBitwiseAnd, u, {bits(x), c_u32(0x80000000u)}), c_u32(0)});
  Id magnitude = b_.op(spv::OpSelect, t, {x_negative, float_c(3.14159265358979323846), float_c(0)});
  Id signed_bits = b_.op(spv::OpBitwiseOr, u,
                         {b_.op(spv::OpBitwiseAnd, u, {bits(magnitude), c_u32(0x7fffffffu)}),
                          b_.op(spv::OpBitwiseAnd, u, {bits(y), c_u32(0x80000000u)})});
  Id at_zero = b_.op(spv::OpBitcast, t, {signed_bits});
  return b_.op(spv::OpSelect, t, {both_zero, at_zero, glsl(GLSLstd450Atan2, k, {y, x})});
}

Id TaskEmitter::round_half(Id x) {
  Id f = value_type(ScalarKind::f32), i = value_type(ScalarKind::i32), u = value_type(ScalarKind::u32);
  auto int_c = [&](int32_t v) { return constant(ScalarKind::i32, int_bits(ScalarKind::i32, v)); };
  auto float_c = [&](double v) { return constant(ScalarKind::f32, float_bits(ScalarKind::f32, v)); };
  // The half quantum at x's binade: 2^(e - 10) for normal halves, 2^-24 below them.
  Id bits = b_.op(spv::OpBitcast, u, {x});
  Id e = b_.op(spv::OpBitwiseAnd, u, {b_.op(spv::OpShiftRightLogical, u, {bits, c_u32(23)}), c_u32(0xff)});
  Id q = glsl(GLSLstd450SMax, ScalarKind::i32,
              {b_.op(spv::OpISub, i, {b_.op(spv::OpBitcast, i, {e}), int_c(137)}), int_c(-24)});
  Id steps = glsl(GLSLstd450RoundEven, ScalarKind::f32,
                  {glsl(GLSLstd450Ldexp, ScalarKind::f32, {x, b_.op(spv::OpSNegate, i, {q})})});
  Id r = glsl(GLSLstd450Ldexp, ScalarKind::f32, {steps, q});
  Id inf = b_.op(spv::OpSelect, f,
                 {b_.op(spv::OpFOrdLessThan, t_bool(), {x, float_c(0.0)}),
                  float_c(-std::numeric_limits<double>::infinity()), float_c(std::numeric_limits<double>::infinity())});
  Id big = b_.op(spv::OpFOrdGreaterThan, t_bool(), {glsl(GLSLstd450FAbs, ScalarKind::f32, {r}), float_c(65504.0)});
  r = b_.op(spv::OpSelect, f, {big, inf, r});
  return b_.op(spv::OpSelect, f, {b_.op(spv::OpIsNan, t_bool(), {x}), x, r});
}

void TaskEmitter::operator()(const ir::ArgLoadStmt& s) {
  if (s.type.pointer) return;  // an ndarray's base: external_ptr names the buffer
  Id v = push_constant(res_.arg_member.at(s.arg_index));
  define(s, s.type.scalar == ScalarKind::u1 ? to_bool(v, ScalarKind::u32) : v);
}

// An ndarray's extent along an axis, from the push constants (the host checks the axis exists).
void TaskEmitter::operator()(const ir::ExternalTensorShapeAlongAxisStmt& s) {
  if (s.arg_id.size() != 1)
    unsupported(s, "the shape of an ndarray member of a struct argument is not compiled yet",
                "pass the ndarray as an argument of its own");
  Id extent = push_constant(res_.ndarray_extent_member.at({s.arg_id[0], s.axis}));
  define(s, int_convert(extent, ScalarKind::u32, s.type.scalar));
}

void TaskEmitter::operator()(const ir::LoopIndexStmt& s) {
  auto it = loop_indices_.find(s.loop());
  if (it == loop_indices_.end() && ir::isa<ir::OffloadedStmt>(s.loop())) refuse_index_outside_iterations(s);
  PB_ASSERT(it != loop_indices_.end() && static_cast<size_t>(s.axis) < it->second.size(),
            fmt::format("loop index ${} of a loop that is not being emitted", s.id));
  auto [index, kind] = it->second[static_cast<size_t>(s.axis)];
  define(s, int_convert(index, kind, s.type.scalar));
}

void TaskEmitter::operator()(const ir::UnaryOpStmt& s) {
  define(s, unary(s.op, value(s.x()), s.x()->type.scalar, s.type.scalar));
}

void TaskEmitter::operator()(const ir::BinaryOpStmt& s) {
  define(s, binary(s.op, value(s.lhs()), value(s.rhs()), s.lhs()->type.scalar, s.rhs()->type.scalar, s.type.scalar));
}

void TaskEmitter::operator()(const ir::TernaryOpStmt& s) {
  Id cond = to_bool(value(s.cond()), s.cond()->type.scalar);
  define(s, b_.op(spv::OpSelect, value_type(s.type.scalar), {cond, value(s.a()), value(s.b())}));
}

// ---- conversions ----

Id TaskEmitter::to_bool(Id v, ScalarKind k) {
  if (k == ScalarKind::u1) return v;
  if (ir::is_float(k)) return b_.op(spv::OpFUnordNotEqual, t_bool(), {v, constant(k, 0)});  // NaN is true
  return b_.op(spv::OpINotEqual, t_bool(), {v, constant(k, 0)});
}

Id TaskEmitter::from_bool(Id b, ScalarKind k) {
  if (k == ScalarKind::u1) return b;
  uint64_t one = ir::is_float(k) ? float_bits(k, 1.0) : 1;
  return b_.op(spv::OpSelect, value_type(k), {b, constant(k, one), constant(k, 0)});
}

Id TaskEmitter::int_convert(Id v, ScalarKind from, ScalarKind to) {
  if (from == to) return v;
  if (from == ScalarKind::u1) return from_bool(v, to);
  if (to == ScalarKind::u1) return to_bool(v, from);
  if (ir::bit_width(from) == ir::bit_width(to)) return b_.op(spv::OpBitcast, value_type(to), {v});
  // Widening extends by the source's signedness; narrowing keeps the low bits. UConvert needs an
  // unsigned result type, so convert within one signedness and bit-cast at the end.
  bool sign_extend = ir::bit_width(to) > ir::bit_width(from) && ir::is_signed(from);
  ScalarKind via = sign_extend ? (wide(to) ? ScalarKind::i64 : ScalarKind::i32) : unsigned_of(to);
  Id r = b_.op(sign_extend ? spv::OpSConvert : spv::OpUConvert, value_type(via), {v});
  return via == to ? r : b_.op(spv::OpBitcast, value_type(to), {r});
}

// cast_value: C conversion; float to integer truncates, saturates, and maps NaN to 0.
Id TaskEmitter::convert(Id v, ScalarKind from, ScalarKind to) {
  if (from == to) return v;
  bool ff = ir::is_float(from), tf = ir::is_float(to);
  if (!ff && !tf) return int_convert(v, from, to);
  if (!ff) {
    if (from == ScalarKind::u1) return from_bool(v, to);
    return b_.op(ir::is_signed(from) ? spv::OpConvertSToF : spv::OpConvertUToF, value_type(to), {v});
  }
  if (tf)
    return value_type(from) == value_type(to) ? v
                                              : b_.op(spv::OpFConvert, value_type(to), {v});  // f16: define() rounds
  if (to == ScalarKind::u1) return to_bool(v, from);
  int w = ir::bit_width(to);
  bool sign = ir::is_signed(to);
  double hi = std::ldexp(1.0, sign ? w - 1 : w), lo = sign ? -hi : -1.0;
  Id hi_c = constant(from, float_bits(from, hi)), lo_c = constant(from, float_bits(from, lo));
  Id in_range = b_.op(spv::OpLogicalAnd, t_bool(),
                      {b_.op(sign ? spv::OpFOrdGreaterThanEqual : spv::OpFOrdGreaterThan, t_bool(), {v, lo_c}),
                       b_.op(spv::OpFOrdLessThan, t_bool(), {v, hi_c})});
  Id safe = b_.op(spv::OpSelect, value_type(from), {in_range, v, constant(from, 0)});
  Id r = b_.op(sign ? spv::OpConvertFToS : spv::OpConvertFToU, value_type(to), {safe});
  uint64_t max_bits =
      sign ? (wide(to) ? uint64_t{0x7fffffffffffffff} : 0x7fffffffu) : (wide(to) ? ~uint64_t{0} : 0xffffffffu);
  r = b_.op(spv::OpSelect, value_type(to),
            {b_.op(spv::OpFOrdGreaterThanEqual, t_bool(), {v, hi_c}), constant(to, max_bits), r});
  if (sign) {
    uint64_t min_bits = wide(to) ? uint64_t{1} << 63 : 0x80000000u;
    r = b_.op(spv::OpSelect, value_type(to),
              {b_.op(spv::OpFOrdLessThan, t_bool(), {v, lo_c}), constant(to, min_bits), r});
  }
  return r;
}

// ---- unary ----

Id TaskEmitter::unary(UnaryOp op, Id x, ScalarKind k, ScalarKind result) {
  Id t = value_type(k);
  bool f = ir::is_float(k);
  auto fc = [&](double v) { return constant(k, float_bits(k, v)); };
  auto ic = [&](int64_t v) { return constant(k, int_bits(k, v)); };
  if (k == ScalarKind::u1 && (op == UnaryOp::neg || op == UnaryOp::abs || op == UnaryOp::sgn)) return x;
  switch (op) {
    case UnaryOp::neg:
      return b_.op(f ? spv::OpFNegate : spv::OpSNegate, t, {x});
    case UnaryOp::sqrt:
      return glsl(GLSLstd450Sqrt, k, {x});
    case UnaryOp::rsqrt:
      return b_.op(spv::OpFDiv, t, {fc(1.0), glsl(GLSLstd450Sqrt, k, {x})});
    case UnaryOp::sin:
      return glsl_f32_only(*this, GLSLstd450Sin, k, {x});
    case UnaryOp::cos:
      return glsl_f32_only(*this, GLSLstd450Cos, k, {x});
    case UnaryOp::tan:
      return glsl_f32_only(*this, GLSLstd450Tan, k, {x});
    case UnaryOp::tanh:
      return glsl_f32_only(*this, GLSLstd450Tanh, k, {x});
    case UnaryOp::asin:
      return glsl_f32_only(*this, GLSLstd450Asin, k, {x});
    case UnaryOp::acos:
      return glsl_f32_only(*this, GLSLstd450Acos, k, {x});
    case UnaryOp::exp:
      return glsl_f32_only(*this, GLSLstd450Exp, k, {x});
    case UnaryOp::log:
      return glsl_f32_only(*this, GLSLstd450Log, k, {x});
    case UnaryOp::abs:
      if (f) return glsl(GLSLstd450FAbs, k, {x});
      if (!ir::is_signed(k)) return x;
      return b_.op(spv::OpSelect, t, {b_.op(spv::OpSLessThan, t_bool(), {x, ic(0)}), b_.op(spv::OpSNegate, t, {x}), x});
    case UnaryOp::sgn: {
      // -1 / 0 / 1; NaN and -0.0 give 0.
      Id one = f ? fc(1.0) : ic(1), zero = constant(k, 0), minus = f ? fc(-1.0) : ic(-1);
      if (!f && !ir::is_signed(k))
        return b_.op(spv::OpSelect, t, {b_.op(spv::OpINotEqual, t_bool(), {x, zero}), one, zero});
      Id gt = b_.op(f ? spv::OpFOrdGreaterThan : spv::OpSGreaterThan, t_bool(), {x, zero});
      Id lt = b_.op(f ? spv::OpFOrdLessThan : spv::OpSLessThan, t_bool(), {x, zero});
      return b_.op(spv::OpSelect, t, {gt, one, b_.op(spv::OpSelect, t, {lt, minus, zero})});
    }
    case UnaryOp::floor:
      return glsl(GLSLstd450Floor, k, {x});
    case UnaryOp::ceil:
      return glsl(GLSLstd450Ceil, k, {x});
    case UnaryOp::round: {
      // Half away from zero (GLSL Round leaves halves to the implementation).
      Id tr = glsl(GLSLstd450Trunc, k, {x});
      Id frac = glsl(GLSLstd450FAbs, k, {b_.op(spv::OpFSub, t, {x, tr})});
      Id up = b_.op(spv::OpFOrdGreaterThanEqual, t_bool(), {frac, fc(0.5)});
      return b_.op(spv::OpSelect, t, {up, b_.op(spv::OpFAdd, t, {tr, glsl(GLSLstd450FSign, k, {x})}), tr});
    }
    case UnaryOp::logic_not:
      return from_bool(b_.op(spv::OpLogicalNot, t_bool(), {to_bool(x, k)}), result);
    case UnaryOp::bit_not:
      return k == ScalarKind::u1 ? b_.op(spv::OpLogicalNot, t_bool(), {x}) : b_.op(spv::OpNot, t, {x});
    case UnaryOp::cast_value:
      return convert(x, k, result);
    case UnaryOp::cast_bits:
      return k == result ? x : b_.op(spv::OpBitcast, value_type(result), {x});
  }
  PB_ASSERT(false, "unknown unary op");
}

// ---- binary ----

Id TaskEmitter::binary(BinaryOp op, Id a, Id b, ScalarKind k, ScalarKind rk, ScalarKind result) {
  bool shift = op == BinaryOp::bit_shl || op == BinaryOp::bit_shr || op == BinaryOp::bit_sar;
  if (op == BinaryOp::logical_and || op == BinaryOp::logical_or) {
    Id r = b_.op(op == BinaryOp::logical_and ? spv::OpLogicalAnd : spv::OpLogicalOr, t_bool(),
                 {to_bool(a, k), to_bool(b, rk)});
    return from_bool(r, result);
  }
  if (k == ScalarKind::u1 || (shift && rk == ScalarKind::u1)) {  // compute on 0/1 words, keep the low bit
    ScalarKind wk = k == ScalarKind::u1 ? ScalarKind::u32 : k;
    Id r = binary(op, int_convert(a, k, wk), int_convert(b, rk, rk == ScalarKind::u1 ? ScalarKind::u32 : rk), wk,
                  rk == ScalarKind::u1 ? ScalarKind::u32 : rk, ir::is_comparison(op) ? result : wk);
    if (ir::is_comparison(op) || result != ScalarKind::u1) return r;
    return to_bool(b_.op(spv::OpBitwiseAnd, value_type(wk), {r, constant(wk, 1)}), wk);
  }
  Id t = value_type(k);
  bool f = ir::is_float(k), sign = ir::is_signed(k);
  auto cmp = [&](spv::Op fo, spv::Op so, spv::Op uo) {
    return from_bool(b_.op(f ? fo : sign ? so : uo, t_bool(), {a, b}), result);
  };
  auto ic = [&](int64_t v) { return constant(k, int_bits(k, v)); };
  // Integer divisor with 0 and -1 replaced by 1: SPIR-V leaves x/0 and INT_MIN/-1 undefined.
  auto safe_divisor = [&](Id* is_minus_one) {
    Id bad = b_.op(spv::OpIEqual, t_bool(), {b, ic(0)});
    if (sign) {
      *is_minus_one = b_.op(spv::OpIEqual, t_bool(), {b, ic(-1)});
      bad = b_.op(spv::OpLogicalOr, t_bool(), {bad, *is_minus_one});
    }
    return b_.op(spv::OpSelect, t, {bad, ic(1), b});
  };
  switch (op) {
    case BinaryOp::add:
      return b_.op(f ? spv::OpFAdd : spv::OpIAdd, t, {a, b});
    case BinaryOp::sub:
      return b_.op(f ? spv::OpFSub : spv::OpISub, t, {a, b});
    case BinaryOp::mul:
      return b_.op(f ? spv::OpFMul : spv::OpIMul, t, {a, b});
    case BinaryOp::div:
    case BinaryOp::floordiv:
    case BinaryOp::mod: {
      if (f) {
        if (op == BinaryOp::mod)  // f64: exact fmod of our own (lavapipe's OpFRem loses bits)
          return k == ScalarKind::f64 ? f64_math_.call(F64Function::fmod, {a, b}) : b_.op(spv::OpFRem, t, {a, b});
        Id q = b_.op(spv::OpFDiv, t, {a, b});
        return op == BinaryOp::div ? q : glsl(GLSLstd450Floor, k, {q});
      }
      Id minus_one = 0;
      Id d = safe_divisor(&minus_one);
      if (!sign) return b_.op(op == BinaryOp::mod ? spv::OpUMod : spv::OpUDiv, t, {a, d});
      // C remainder (the sign of the dividend) from the truncated quotient: Vulkan leaves OpSRem
      // and OpSMod undefined for negative operands (NVIDIA returns |a| rem |b|).
      Id q_safe = b_.op(spv::OpSDiv, t, {a, d});
      auto remainder = [&] { return b_.op(spv::OpISub, t, {a, b_.op(spv::OpIMul, t, {q_safe, d})}); };
      if (op == BinaryOp::mod) return remainder();
      Id q = b_.op(spv::OpSelect, t, {minus_one, b_.op(spv::OpSNegate, t, {a}), q_safe});
      if (op == BinaryOp::div) return q;
      Id r = remainder();
      Id r_neg = b_.op(spv::OpSLessThan, t_bool(), {r, ic(0)}), b_neg = b_.op(spv::OpSLessThan, t_bool(), {b, ic(0)});
      Id adjust = b_.op(
          spv::OpLogicalAnd, t_bool(),
          {b_.op(spv::OpINotEqual, t_bool(), {r, ic(0)}), b_.op(spv::OpLogicalNotEqual, t_bool(), {r_neg, b_neg})});
      return b_.op(spv::OpISub, t, {q, b_.op(spv::OpSelect, t, {adjust, ic(1), ic(0)})});
    }
    case BinaryOp::pow:
      if (f && !ir::is_float(rk)) b = convert(b, rk, k);  // pow(float, integer)
      return f ? float_pow(a, b, k) : int_pow(a, b, k);
    case BinaryOp::atan2:
      return k == ScalarKind::f64 ? glsl_f32_only(*this, GLSLstd450Atan2, k, {a, b}) : float_atan2(a, b, k);
    case BinaryOp::max:
      return glsl(f ? GLSLstd450NMax : sign ? GLSLstd450SMax : GLSLstd450UMax, k, {a, b});
    case BinaryOp::min:
      return glsl(f ? GLSLstd450NMin : sign ? GLSLstd450SMin : GLSLstd450UMin, k, {a, b});
    case BinaryOp::cmp_lt:
      return cmp(spv::OpFOrdLessThan, spv::OpSLessThan, spv::OpULessThan);
    case BinaryOp::cmp_le:
      return cmp(spv::OpFOrdLessThanEqual, spv::OpSLessThanEqual, spv::OpULessThanEqual);
    case BinaryOp::cmp_gt:
      return cmp(spv::OpFOrdGreaterThan, spv::OpSGreaterThan, spv::OpUGreaterThan);
    case BinaryOp::cmp_ge:
      return cmp(spv::OpFOrdGreaterThanEqual, spv::OpSGreaterThanEqual, spv::OpUGreaterThanEqual);
    case BinaryOp::cmp_eq:
      return cmp(spv::OpFOrdEqual, spv::OpIEqual, spv::OpIEqual);
    case BinaryOp::cmp_ne:
      return cmp(spv::OpFOrdNotEqual, spv::OpINotEqual, spv::OpINotEqual);  // ordered: NaN gives 0
    case BinaryOp::bit_and:
      return b_.op(spv::OpBitwiseAnd, t, {a, b});
    case BinaryOp::bit_or:
      return b_.op(spv::OpBitwiseOr, t, {a, b});
    case BinaryOp::bit_xor:
      return b_.op(spv::OpBitwiseXor, t, {a, b});
    case BinaryOp::bit_shl:
    case BinaryOp::bit_shr:
    case BinaryOp::bit_sar: {
      // The amount is taken modulo the bit width (SPIR-V leaves larger shifts undefined).
      Id amount =
          b_.op(spv::OpBitwiseAnd, value_type(rk), {b, constant(rk, static_cast<uint64_t>(ir::bit_width(k) - 1))});
      spv::Op o = op == BinaryOp::bit_shl           ? spv::OpShiftLeftLogical
                  : op == BinaryOp::bit_sar && sign ? spv::OpShiftRightArithmetic
                                                    : spv::OpShiftRightLogical;
      return b_.op(o, t, {a, amount});
    }
    case BinaryOp::logical_and:
    case BinaryOp::logical_or:
      break;
  }
  PB_ASSERT(false, "unhandled binary op");
}

// f32: C pow on top of GLSL Pow (defined only for x >= 0): negative bases with integral exponents,
// pow(x, 0) = 1, and zero bases are fixed up with selects.
Id TaskEmitter::float_pow(Id x, Id y, ScalarKind k) {
  if (k == ScalarKind::f64) return f64_math_.call(F64Function::pow, {x, y});  // C pow, special cases included
  Id t = value_type(k);
  auto fc = [&](double v) { return constant(k, float_bits(k, v)); };
  auto fcmp = [&](spv::Op o, Id l, Id r) { return b_.op(o, t_bool(), {l, r}); };
  auto both = [&](Id l, Id r) { return b_.op(spv::OpLogicalAnd, t_bool(), {l, r}); };
  auto sel = [&](Id c, Id l, Id r) { return b_.op(spv::OpSelect, t, {c, l, r}); };
  Id r = glsl_f32_only(*this, GLSLstd450Pow, k, {glsl(GLSLstd450FAbs, k, {x}), y});
  Id y_int = fcmp(spv::OpFOrdEqual, glsl(GLSLstd450Trunc, k, {y}), y);
  Id y_odd =
      both(y_int, fcmp(spv::OpFOrdEqual, glsl(GLSLstd450FAbs, k, {b_.op(spv::OpFRem, t, {y, fc(2.0)})}), fc(1.0)));
  Id x_neg = fcmp(spv::OpFOrdLessThan, x, fc(0.0));
  r = sel(both(x_neg, y_odd), b_.op(spv::OpFNegate, t, {r}), r);
  r = sel(both(x_neg, b_.op(spv::OpLogicalNot, t_bool(), {y_int})), fc(std::numeric_limits<double>::quiet_NaN()), r);
  Id x_zero = fcmp(spv::OpFOrdEqual, x, fc(0.0));
  r = sel(both(x_zero, fcmp(spv::OpFOrdGreaterThan, y, fc(0.0))), fc(0.0), r);
  r = sel(both(x_zero, fcmp(spv::OpFOrdLessThan, y, fc(0.0))), fc(std::numeric_limits<double>::infinity()), r);
  return sel(fcmp(spv::OpFOrdEqual, y, fc(0.0)), fc(1.0), r);
}

// Integer pow by repeated squaring, as a loop over the exponent's bits (wrap-around products).
Id TaskEmitter::int_pow(Id base, Id exponent, ScalarKind k) {
  Id t = value_type(k);
  ScalarKind uk = unsigned_of(k);
  Id ut = value_type(uk);
  Id fptr = b_.type_pointer(spv::StorageClassFunction, t), uptr = b_.type_pointer(spv::StorageClassFunction, ut);
  Id r_var = b_.function_variable(fptr), b_var = b_.function_variable(fptr), e_var = b_.function_variable(uptr);
  b_.op_void(spv::OpStore, {r_var, constant(k, 1)});
  b_.op_void(spv::OpStore, {b_var, base});
  b_.op_void(spv::OpStore, {e_var, k == uk ? exponent : b_.op(spv::OpBitcast, ut, {exponent})});
  Id header = b_.new_label(), body = b_.new_label(), cont = b_.new_label(), merge = b_.new_label();
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(header);
  Id e = b_.op(spv::OpLoad, ut, {e_var});
  Id more = b_.op(spv::OpINotEqual, t_bool(), {e, constant(uk, 0)});
  b_.op_void(spv::OpLoopMerge, {merge, cont, spv::LoopControlMaskNone});
  b_.op_void(spv::OpBranchConditional, {more, body, merge});
  b_.begin_block(body);
  Id r = b_.op(spv::OpLoad, t, {r_var}), bb = b_.op(spv::OpLoad, t, {b_var});
  Id odd = b_.op(spv::OpINotEqual, t_bool(), {b_.op(spv::OpBitwiseAnd, ut, {e, constant(uk, 1)}), constant(uk, 0)});
  b_.op_void(spv::OpStore, {r_var, b_.op(spv::OpSelect, t, {odd, b_.op(spv::OpIMul, t, {r, bb}), r})});
  b_.op_void(spv::OpStore, {b_var, b_.op(spv::OpIMul, t, {bb, bb})});
  b_.op_void(spv::OpStore, {e_var, b_.op(spv::OpShiftRightLogical, ut, {e, constant(uk, 1)})});
  b_.op_void(spv::OpBranch, {cont});
  b_.begin_block(cont);
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
  return b_.op(spv::OpLoad, t, {r_var});
}

}  // namespace pb::codegen::spirv::detail
