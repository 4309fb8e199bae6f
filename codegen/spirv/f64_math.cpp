#include "codegen/spirv/f64_math.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <bit>

#include "codegen/math/f64.h"
#include "ir/assert.h"

namespace pb::codegen::spirv {
namespace {

// The ops of codegen/math/arith.h as SPIR-V instructions in the open block: F is an f64 id, B a
// bool id, I an i32 id.
class SpirvOps {
 public:
  using F = Id;
  using B = Id;
  using I = Id;

  explicit SpirvOps(ModuleBuilder& b)
      : b_(b),
        f_(b.type_float(64)),
        i_(b.type_int(32, true)),
        bool_(b.type_bool()),
        words_(b.type_vector(i_, 2)),
        glsl_(b.glsl450()) {}

  F c(double x) { return b_.constant(f_, std::bit_cast<uint64_t>(x), true); }
  I ci(int32_t x) { return b_.const_i32(x); }
  F add(F a, F b) { return exact(spv::OpFAdd, {a, b}); }
  F sub(F a, F b) { return exact(spv::OpFSub, {a, b}); }
  F mul(F a, F b) { return exact(spv::OpFMul, {a, b}); }
  F div(F a, F b) { return exact(spv::OpFDiv, {a, b}); }
  F neg(F a) { return exact(spv::OpFNegate, {a}); }
  F abs(F a) { return ext(GLSLstd450FAbs, {a}); }
  F sqrt(F a) { return ext(GLSLstd450Sqrt, {a}); }
  F floor(F a) { return ext(GLSLstd450Floor, {a}); }
  F rint(F a) { return ext(GLSLstd450RoundEven, {a}); }
  F select(B c, F a, F b) { return b_.op(spv::OpSelect, f_, {c, a, b}); }
  I iselect(B c, I a, I b) { return b_.op(spv::OpSelect, i_, {c, a, b}); }
  B lt(F a, F b) { return b_.op(spv::OpFOrdLessThan, bool_, {a, b}); }
  B le(F a, F b) { return b_.op(spv::OpFOrdLessThanEqual, bool_, {a, b}); }
  B eq(F a, F b) { return b_.op(spv::OpFOrdEqual, bool_, {a, b}); }
  B is_nan(F a) { return b_.op(spv::OpIsNan, bool_, {a}); }
  B is_inf(F a) { return b_.op(spv::OpIsInf, bool_, {a}); }
  B both(B a, B b) { return b_.op(spv::OpLogicalAnd, bool_, {a, b}); }
  B either(B a, B b) { return b_.op(spv::OpLogicalOr, bool_, {a, b}); }
  B negate(B a) { return b_.op(spv::OpLogicalNot, bool_, {a}); }
  // A 64-bit scalar bit-casts to two 32-bit components, the first holding the low-order bits.
  I hi(F a) { return b_.op(spv::OpCompositeExtract, i_, {b_.op(spv::OpBitcast, words_, {a}), 1}); }
  I lo(F a) { return b_.op(spv::OpCompositeExtract, i_, {b_.op(spv::OpBitcast, words_, {a}), 0}); }
  F from_words(I l, I h) { return b_.op(spv::OpBitcast, f_, {b_.op(spv::OpCompositeConstruct, words_, {l, h})}); }
  I iadd(I a, I b) { return b_.op(spv::OpIAdd, i_, {a, b}); }
  I isub(I a, I b) { return b_.op(spv::OpISub, i_, {a, b}); }
  I iand(I a, I b) { return b_.op(spv::OpBitwiseAnd, i_, {a, b}); }
  I ior(I a, I b) { return b_.op(spv::OpBitwiseOr, i_, {a, b}); }
  I shl(I a, int s) { return b_.op(spv::OpShiftLeftLogical, i_, {a, ci(s)}); }
  I sar(I a, int s) { return b_.op(spv::OpShiftRightArithmetic, i_, {a, ci(s)}); }
  B ilt(I a, I b) { return b_.op(spv::OpSLessThan, bool_, {a, b}); }
  B ieq(I a, I b) { return b_.op(spv::OpIEqual, bool_, {a, b}); }
  I to_int(F a) { return b_.op(spv::OpConvertFToS, i_, {a}); }
  F to_f(I a) { return b_.op(spv::OpConvertSToF, f_, {a}); }
  // A Function-scope array initialized with the table, one per table and function.
  F lookup(const double* table, int size, I index) {
    auto [it, fresh] = tables_.try_emplace(table, 0);
    if (fresh) {
      Operands elements;
      for (int i = 0; i < size; ++i) elements.push_back(c(table[i]));
      Id array = b_.type_array(f_, static_cast<uint32_t>(size));
      it->second = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, array),
                                        b_.constant_composite(array, elements));
    }
    Id element = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, f_), {it->second, index});
    return b_.op(spv::OpLoad, f_, {element});
  }
  // A structured loop over a Function variable holding the value.
  template <class C, class S>
  F loop_while(F init, C cond, S step) {
    Id var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, f_));
    b_.op_void(spv::OpStore, {var, init});
    ModuleBuilder::LoopLabels l = b_.begin_loop(true);
    Id v = b_.op(spv::OpLoad, f_, {var});
    b_.op_void(spv::OpBranchConditional, {cond(v), l.body, l.merge});
    b_.begin_block(l.body);
    b_.op_void(spv::OpStore, {var, step(v)});
    b_.op_void(spv::OpBranch, {l.cont});
    b_.begin_block(l.cont);
    b_.op_void(spv::OpBranch, {l.header});
    b_.begin_block(l.merge);
    return b_.op(spv::OpLoad, f_, {var});
  }

 private:
  Id exact(spv::Op op, const Operands& args) {
    Id r = b_.op(op, f_, args);
    b_.decorate(r, spv::DecorationNoContraction);
    return r;
  }
  Id ext(GLSLstd450 inst, const Operands& args) {
    Operands ops{glsl_, static_cast<uint32_t>(inst)};
    ops.insert(ops.end(), args.begin(), args.end());
    return b_.op(spv::OpExtInst, f_, ops);
  }

  ModuleBuilder& b_;
  Id f_, i_, bool_, words_, glsl_;
  std::map<const double*, Id> tables_;
};

const char* name_of(F64Function fn) {
  switch (fn) {
    case F64Function::sin:
      return "pb_sin_f64";
    case F64Function::cos:
      return "pb_cos_f64";
    case F64Function::tan:
      return "pb_tan_f64";
    case F64Function::tanh:
      return "pb_tanh_f64";
    case F64Function::asin:
      return "pb_asin_f64";
    case F64Function::acos:
      return "pb_acos_f64";
    case F64Function::exp:
      return "pb_exp_f64";
    case F64Function::log:
      return "pb_log_f64";
    case F64Function::atan2:
      return "pb_atan2_f64";
    case F64Function::pow:
      return "pb_pow_f64";
    case F64Function::fmod:
      return "pb_fmod_f64";
  }
  PB_ASSERT(false, "unknown f64 function");
}

bool binary(F64Function fn) { return fn == F64Function::atan2 || fn == F64Function::pow || fn == F64Function::fmod; }

}  // namespace

Id F64Math::call(F64Function fn, const Operands& args) {
  PB_ASSERT(args.size() == (binary(fn) ? 2u : 1u), "f64 function called with the wrong number of arguments");
  auto it = functions_.find(fn);
  Id function = it != functions_.end() ? it->second : define(fn);
  Operands ops{function};
  ops.insert(ops.end(), args.begin(), args.end());
  return b_.op(spv::OpFunctionCall, b_.type_float(64), ops);
}

Id F64Math::define(F64Function fn) {
  ModuleBuilder::SuspendedFunction caller = b_.suspend_function();
  Id f64 = b_.type_float(64);
  Id params[2] = {f64, f64};
  Id function = b_.begin_function(f64, b_.type_function(f64, std::span<const Id>(params, binary(fn) ? 2 : 1)));
  b_.set_name(function, name_of(fn));
  Id x = b_.function_parameter(f64), y = binary(fn) ? b_.function_parameter(f64) : 0;
  b_.begin_block(b_.new_label());
  SpirvOps ops(b_);
  math::Real<SpirvOps> a{&ops, x}, b{&ops, y};
  math::Real<SpirvOps> r = a;
  switch (fn) {
    case F64Function::sin:
      r = math::sin(a);
      break;
    case F64Function::cos:
      r = math::cos(a);
      break;
    case F64Function::tan:
      r = math::tan(a);
      break;
    case F64Function::tanh:
      r = math::tanh(a);
      break;
    case F64Function::asin:
      r = math::asin(a);
      break;
    case F64Function::acos:
      r = math::acos(a);
      break;
    case F64Function::exp:
      r = math::exp(a);
      break;
    case F64Function::log:
      r = math::log(a);
      break;
    case F64Function::atan2:
      r = math::atan2(a, b);
      break;
    case F64Function::pow:
      r = math::pow(a, b);
      break;
    case F64Function::fmod:
      r = math::fmod(a, b);
      break;
  }
  b_.op_void(spv::OpReturnValue, {r.v});
  b_.end_function();
  b_.resume_function(std::move(caller));
  functions_.emplace(fn, function);
  return function;
}

}  // namespace pb::codegen::spirv
