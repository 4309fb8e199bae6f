// Arithmetic, comparisons, conversions, atomics and GLSL.std.450 of the test SPIR-V interpreter.
#include <spirv/unified1/GLSL.std.450.h>

#include "spirv_exec_impl.h"

namespace pb::codegen::spirv::test::exec {

void Invocation::atomic(const Inst& in) {
  const Value& p = val(in[2]);
  uint32_t type = in[0];
  uint32_t width = width_of(m_.type(type));
  Value old = load(p, type);
  uint64_t a = get(old, 0, width), b = 0, r = a;
  if (in.op != spv::OpAtomicLoad && in.op != spv::OpAtomicIIncrement && in.op != spv::OpAtomicIDecrement)
    b = get(val(in.op == spv::OpAtomicCompareExchange ? in[6] : in[5]), 0, width);
  switch (in.op) {
    case spv::OpAtomicLoad:
      break;
    case spv::OpAtomicExchange:
      r = b;
      break;
    case spv::OpAtomicCompareExchange:
      r = a == get(val(in[7]), 0, width) ? b : a;
      break;
    case spv::OpAtomicIAdd:
      r = a + b;
      break;
    case spv::OpAtomicISub:
      r = a - b;
      break;
    case spv::OpAtomicUMin:
      r = std::min(a, b);
      break;
    case spv::OpAtomicUMax:
      r = std::max(a, b);
      break;
    case spv::OpAtomicSMin:
      r = sext(a, width) < sext(b, width) ? a : b;
      break;
    case spv::OpAtomicSMax:
      r = sext(a, width) > sext(b, width) ? a : b;
      break;
    case spv::OpAtomicAnd:
      r = a & b;
      break;
    case spv::OpAtomicOr:
      r = a | b;
      break;
    case spv::OpAtomicXor:
      r = a ^ b;
      break;
    case spv::OpAtomicFAddEXT:
      r = from_float(narrow(to_float(a, width) + to_float(b, width), width), width);
      break;
    default:
      fail("atomic opcode " + std::to_string(in.op));
  }
  Value nv;
  put(nv, 0, width, r);
  store(p, nv);
  set(in[1], std::move(old));
}

void Invocation::ext(const Inst& in) {
  if (in[2] != m_.glsl_) fail("unknown extended instruction set");
  auto op = static_cast<GLSLstd450>(in[3]);
  auto [rt, n] = components(in[0]);
  uint32_t width = width_of(*rt);
  bool is_float = rt->op == spv::OpTypeFloat;
  Value out;
  size_t args = in.operands.size() - 4;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t a = get(val(in[4]), i, width), b = args > 1 ? get(val(in[5]), i, width) : 0,
             c = args > 2 ? get(val(in[6]), i, width) : 0;
    double x = is_float ? to_float(a, width) : 0, y = is_float ? to_float(b, width) : 0,
           z = is_float ? to_float(c, width) : 0;
    int64_t sa = sext(a, width), sb = sext(b, width);
    uint64_t r = 0;
    auto F = [&](double v) { r = from_float(narrow(v, width), width); };
    switch (op) {
      // clang-format off
      case GLSLstd450Round: F(std::round(x)); break;
      case GLSLstd450RoundEven: F(std::nearbyint(x)); break;
      case GLSLstd450Trunc: F(std::trunc(x)); break;
      case GLSLstd450FAbs: F(std::fabs(x)); break;
      case GLSLstd450SAbs: r = static_cast<uint64_t>(sa < 0 ? -sa : sa); break;
      case GLSLstd450FSign: F(x > 0 ? 1.0 : x < 0 ? -1.0 : x); break;
      case GLSLstd450SSign: r = static_cast<uint64_t>(sa > 0 ? 1 : sa < 0 ? -1 : 0); break;
      case GLSLstd450Floor: F(std::floor(x)); break;
      case GLSLstd450Ceil: F(std::ceil(x)); break;
      case GLSLstd450Fract: F(x - std::floor(x)); break;
      case GLSLstd450Sin: F(std::sin(x)); break;
      case GLSLstd450Cos: F(std::cos(x)); break;
      case GLSLstd450Tan: F(std::tan(x)); break;
      case GLSLstd450Asin: F(std::asin(x)); break;
      case GLSLstd450Acos: F(std::acos(x)); break;
      case GLSLstd450Atan: F(std::atan(x)); break;
      case GLSLstd450Sinh: F(std::sinh(x)); break;
      case GLSLstd450Cosh: F(std::cosh(x)); break;
      case GLSLstd450Tanh: F(std::tanh(x)); break;
      case GLSLstd450Atan2: F(std::atan2(x, y)); break;
      case GLSLstd450Pow: F(std::pow(x, y)); break;
      case GLSLstd450Exp: F(std::exp(x)); break;
      case GLSLstd450Log: F(std::log(x)); break;
      case GLSLstd450Exp2: F(std::exp2(x)); break;
      case GLSLstd450Log2: F(std::log2(x)); break;
      case GLSLstd450Sqrt: F(std::sqrt(x)); break;
      case GLSLstd450InverseSqrt: F(1.0 / std::sqrt(x)); break;
      case GLSLstd450FMin: F(std::fmin(x, y)); break;
      case GLSLstd450FMax: F(std::fmax(x, y)); break;
      case GLSLstd450NMin: F(std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y)); break;
      case GLSLstd450NMax: F(std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y)); break;
      case GLSLstd450FClamp: case GLSLstd450NClamp: F(std::fmin(std::fmax(x, y), z)); break;
      case GLSLstd450UMin: r = std::min(a, b); break;
      case GLSLstd450UMax: r = std::max(a, b); break;
      case GLSLstd450SMin: r = sa < sb ? a : b; break;
      case GLSLstd450SMax: r = sa > sb ? a : b; break;
      case GLSLstd450UClamp: r = std::min(std::max(a, b), c); break;
      case GLSLstd450SClamp: r = static_cast<uint64_t>(std::min(std::max(sa, sb), sext(c, width))); break;
      case GLSLstd450FMix: F(x * (1 - z) + y * z); break;
      case GLSLstd450Fma: F(width == 64 ? std::fma(x, y, z) : static_cast<double>(std::fma(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)))); break;
      case GLSLstd450Step: F(y < x ? 0.0 : 1.0); break;
      // clang-format on
      default:
        fail("GLSL.std.450 instruction " + std::to_string(op));
    }
    put(out, i, width, r);
  }
  set(in[1], std::move(out));
}

void Invocation::arithmetic(const Inst& in) {
  auto i32 = [](uint64_t v, uint32_t w) { return sext(v, w); };
  if (in.op >= spv::OpAtomicLoad && in.op <= spv::OpAtomicXor) return atomic(in);
  if (in.op == spv::OpAtomicFAddEXT) return atomic(in);

  auto [rt, n] = components(in[0]);
  uint32_t rw = width_of(*rt);
  auto fop = [&](auto f) {
    map(in, 2, 2, [&](uint64_t a, uint64_t b, uint64_t, uint32_t w) {
      return from_float(narrow(f(to_float(a, w), to_float(b, w)), w), w);
    });
  };
  auto cmp = [&](auto f) {
    map(in, 2, 2, [&](uint64_t a, uint64_t b, uint64_t, uint32_t w) { return f(a, b, w) ? uint64_t{1} : 0; });
  };
  auto fcmp = [&](auto f) {
    cmp([&](uint64_t a, uint64_t b, uint32_t w) { return f(to_float(a, w), to_float(b, w)); });
  };
  auto iop = [&](auto f) {
    map(in, 2, 2, [&](uint64_t a, uint64_t b, uint64_t, uint32_t w) { return f(a, b, w) & mask(w); });
  };
  switch (in.op) {
    // clang-format off
    case spv::OpIAdd: iop([](uint64_t a, uint64_t b, uint32_t) { return a + b; }); return;
    case spv::OpISub: iop([](uint64_t a, uint64_t b, uint32_t) { return a - b; }); return;
    case spv::OpIMul: iop([](uint64_t a, uint64_t b, uint32_t) { return a * b; }); return;
    case spv::OpUDiv: iop([](uint64_t a, uint64_t b, uint32_t) { if (!b) fail("UDiv by 0"); return a / b; }); return;
    case spv::OpUMod: iop([](uint64_t a, uint64_t b, uint32_t) { if (!b) fail("UMod by 0"); return a % b; }); return;
    case spv::OpSDiv: iop([&](uint64_t a, uint64_t b, uint32_t w) { if (!b) fail("SDiv by 0"); return static_cast<uint64_t>(i32(a, w) / i32(b, w)); }); return;
    case spv::OpSRem: iop([&](uint64_t a, uint64_t b, uint32_t w) { if (!b) fail("SRem by 0"); return static_cast<uint64_t>(i32(a, w) % i32(b, w)); }); return;
    case spv::OpSMod: iop([&](uint64_t a, uint64_t b, uint32_t w) { if (!b) fail("SMod by 0"); int64_t r = i32(a, w) % i32(b, w); if (r && ((r < 0) != (i32(b, w) < 0))) r += i32(b, w); return static_cast<uint64_t>(r); }); return;
    case spv::OpShiftLeftLogical: iop([](uint64_t a, uint64_t b, uint32_t w) { return b >= w ? 0 : a << b; }); return;
    case spv::OpShiftRightLogical: iop([](uint64_t a, uint64_t b, uint32_t w) { return b >= w ? 0 : (a & mask(w)) >> b; }); return;
    case spv::OpShiftRightArithmetic: iop([&](uint64_t a, uint64_t b, uint32_t w) { return static_cast<uint64_t>(i32(a, w) >> std::min<uint64_t>(b, w - 1)); }); return;
    case spv::OpBitwiseAnd: iop([](uint64_t a, uint64_t b, uint32_t) { return a & b; }); return;
    case spv::OpBitwiseOr: iop([](uint64_t a, uint64_t b, uint32_t) { return a | b; }); return;
    case spv::OpBitwiseXor: iop([](uint64_t a, uint64_t b, uint32_t) { return a ^ b; }); return;
    case spv::OpNot: map(in, 2, 1, [](uint64_t a, uint64_t, uint64_t, uint32_t w) { return ~a & mask(w); }); return;
    case spv::OpSNegate: map(in, 2, 1, [](uint64_t a, uint64_t, uint64_t, uint32_t w) { return (0 - a) & mask(w); }); return;
    case spv::OpFAdd: fop([](double a, double b) { return a + b; }); return;
    case spv::OpFSub: fop([](double a, double b) { return a - b; }); return;
    case spv::OpFMul: fop([](double a, double b) { return a * b; }); return;
    case spv::OpFDiv: fop([](double a, double b) { return a / b; }); return;
    case spv::OpFRem: fop([](double a, double b) { return std::fmod(a, b); }); return;
    case spv::OpFMod: fop([](double a, double b) { double r = std::fmod(a, b); return r != 0 && ((r < 0) != (b < 0)) ? r + b : r; }); return;
    case spv::OpFNegate: map(in, 2, 1, [](uint64_t a, uint64_t, uint64_t, uint32_t w) { return from_float(-to_float(a, w), w); }); return;
    case spv::OpIEqual: case spv::OpLogicalEqual: cmp([](uint64_t a, uint64_t b, uint32_t w) { return (a & mask(w)) == (b & mask(w)); }); return;
    case spv::OpINotEqual: case spv::OpLogicalNotEqual: cmp([](uint64_t a, uint64_t b, uint32_t w) { return (a & mask(w)) != (b & mask(w)); }); return;
    case spv::OpUGreaterThan: cmp([](uint64_t a, uint64_t b, uint32_t) { return a > b; }); return;
    case spv::OpUGreaterThanEqual: cmp([](uint64_t a, uint64_t b, uint32_t) { return a >= b; }); return;
    case spv::OpULessThan: cmp([](uint64_t a, uint64_t b, uint32_t) { return a < b; }); return;
    case spv::OpULessThanEqual: cmp([](uint64_t a, uint64_t b, uint32_t) { return a <= b; }); return;
    case spv::OpSGreaterThan: cmp([&](uint64_t a, uint64_t b, uint32_t w) { return i32(a, w) > i32(b, w); }); return;
    case spv::OpSGreaterThanEqual: cmp([&](uint64_t a, uint64_t b, uint32_t w) { return i32(a, w) >= i32(b, w); }); return;
    case spv::OpSLessThan: cmp([&](uint64_t a, uint64_t b, uint32_t w) { return i32(a, w) < i32(b, w); }); return;
    case spv::OpSLessThanEqual: cmp([&](uint64_t a, uint64_t b, uint32_t w) { return i32(a, w) <= i32(b, w); }); return;
    case spv::OpFOrdEqual: fcmp([](double a, double b) { return a == b; }); return;
    case spv::OpFOrdNotEqual: fcmp([](double a, double b) { return !std::isnan(a) && !std::isnan(b) && a != b; }); return;
    case spv::OpFOrdLessThan: fcmp([](double a, double b) { return a < b; }); return;
    case spv::OpFOrdGreaterThan: fcmp([](double a, double b) { return a > b; }); return;
    case spv::OpFOrdLessThanEqual: fcmp([](double a, double b) { return a <= b; }); return;
    case spv::OpFOrdGreaterThanEqual: fcmp([](double a, double b) { return a >= b; }); return;
    case spv::OpFUnordEqual: fcmp([](double a, double b) { return !(a != b); }); return;
    case spv::OpFUnordNotEqual: fcmp([](double a, double b) { return a != b; }); return;
    case spv::OpFUnordLessThan: fcmp([](double a, double b) { return !(a >= b); }); return;
    case spv::OpFUnordGreaterThan: fcmp([](double a, double b) { return !(a <= b); }); return;
    case spv::OpFUnordLessThanEqual: fcmp([](double a, double b) { return !(a > b); }); return;
    case spv::OpFUnordGreaterThanEqual: fcmp([](double a, double b) { return !(a < b); }); return;
    case spv::OpLogicalOr: cmp([](uint64_t a, uint64_t b, uint32_t) { return a || b; }); return;
    case spv::OpLogicalAnd: cmp([](uint64_t a, uint64_t b, uint32_t) { return a && b; }); return;
    case spv::OpLogicalNot: map(in, 2, 1, [](uint64_t a, uint64_t, uint64_t, uint32_t) -> uint64_t { return !a; }); return;
    case spv::OpIsNan: map(in, 2, 1, [](uint64_t a, uint64_t, uint64_t, uint32_t w) -> uint64_t { return std::isnan(to_float(a, w)); }); return;
    case spv::OpIsInf: map(in, 2, 1, [](uint64_t a, uint64_t, uint64_t, uint32_t w) -> uint64_t { return std::isinf(to_float(a, w)); }); return;
    case spv::OpConvertFToS: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t w) { return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(to_float(a, w)))) & mask(rw); }); return;
    case spv::OpConvertFToU: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t w) { return static_cast<uint64_t>(std::trunc(to_float(a, w))) & mask(rw); }); return;
    case spv::OpConvertSToF: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t w) { return from_float(narrow(static_cast<double>(i32(a, w)), rw), rw); }); return;
    case spv::OpConvertUToF: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t) { return from_float(narrow(static_cast<double>(a), rw), rw); }); return;
    case spv::OpUConvert: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t) { return a & mask(rw); }); return;
    case spv::OpSConvert: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t w) { return static_cast<uint64_t>(i32(a, w)) & mask(rw); }); return;
    case spv::OpFConvert: map(in, 2, 1, [&](uint64_t a, uint64_t, uint64_t, uint32_t w) { return from_float(narrow(to_float(a, w), rw), rw); }); return;
    case spv::OpBitcast: set(in[1], Value{val(in[2]).w}); return;
    // clang-format on
    default:
      fail("opcode " + std::to_string(in.op));
  }
}

}  // namespace pb::codegen::spirv::test::exec
