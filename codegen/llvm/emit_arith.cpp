// Arithmetic, casts and atomics, with the semantics of ir/eval.h (the interpreter's): integer
// division by zero flags an error instead of trapping, INT_MIN / -1 wraps, shifts take the
// amount modulo the width, float min/max are fmin/fmax, comparisons are ordered.
#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"

namespace pb::codegen::llvmgen::detail {

llvm::Value* TaskEmitter::libm(const char* name, std::vector<llvm::Value*> args) {
  std::vector<llvm::Type*> types;
  types.reserve(args.size());
  for (llvm::Value* a : args) types.push_back(a->getType());
  bool single = args[0]->getType()->isFloatTy();
  std::string fname = single ? std::string(name) + "f" : name;
  auto callee = m_.module.getOrInsertFunction(fname, llvm::FunctionType::get(args[0]->getType(), types, false));
  auto* call = b_.CreateCall(callee, args);
  call->setDoesNotThrow();
  call->setOnlyAccessesInaccessibleMemory();
  return call;
}

llvm::Value* TaskEmitter::cast(llvm::Value* v, ir::ScalarKind from, ir::ScalarKind to) {
  llvm::Type* t = value_type(to);
  if (from == to) return v;
  if (ir::is_float(from)) {
    if (ir::is_float(to)) return b_.CreateFPCast(v, t);
    if (to == ir::ScalarKind::u1) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    auto id = ir::is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {t, v->getType()}, {v});
  }
  bool src_signed = ir::is_signed(from);
  if (ir::is_float(to)) return src_signed ? b_.CreateSIToFP(v, t) : b_.CreateUIToFP(v, t);
  if (to == ir::ScalarKind::u1) return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  return src_signed ? b_.CreateSExtOrTrunc(v, t) : b_.CreateZExtOrTrunc(v, t);
}

llvm::Value* TaskEmitter::float_unary(const ir::UnaryOpStmt& s, llvm::Value* x, ir::ScalarKind k) {
  llvm::Type* t = x->getType();
  auto intr = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  llvm::Value* zero = llvm::ConstantFP::get(t, 0.0);
  switch (s.op) {
    case ir::UnaryOp::neg:
      return b_.CreateFNeg(x);
    case ir::UnaryOp::sqrt:
      return intr(llvm::Intrinsic::sqrt);
    case ir::UnaryOp::rsqrt:
      return b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), intr(llvm::Intrinsic::sqrt));
    case ir::UnaryOp::sin:
      return intr(llvm::Intrinsic::sin);
    case ir::UnaryOp::cos:
      return intr(llvm::Intrinsic::cos);
    case ir::UnaryOp::tan:
      return libm("tan", {x});
    case ir::UnaryOp::tanh:
      return libm("tanh", {x});
    case ir::UnaryOp::asin:
      return libm("asin", {x});
    case ir::UnaryOp::acos:
      return libm("acos", {x});
    case ir::UnaryOp::exp:
      return intr(llvm::Intrinsic::exp);
    case ir::UnaryOp::log:
      return intr(llvm::Intrinsic::log);
    case ir::UnaryOp::abs:
      return intr(llvm::Intrinsic::fabs);
    case ir::UnaryOp::sgn: {
      llvm::Value* pos = b_.CreateFCmpOGT(x, zero);
      llvm::Value* neg = b_.CreateFCmpOLT(x, zero);
      return b_.CreateSelect(pos, llvm::ConstantFP::get(t, 1.0),
                             b_.CreateSelect(neg, llvm::ConstantFP::get(t, -1.0), zero));
    }
    case ir::UnaryOp::floor:
      return intr(llvm::Intrinsic::floor);
    case ir::UnaryOp::ceil:
      return intr(llvm::Intrinsic::ceil);
    case ir::UnaryOp::round:
      return intr(llvm::Intrinsic::round);
    case ir::UnaryOp::logic_not:
      return from_bool(b_.CreateFCmpOEQ(x, zero), k);
    case ir::UnaryOp::bit_not:
      unsupported(s, "bit_not needs an integer operand");
    case ir::UnaryOp::cast_value:
    case ir::UnaryOp::cast_bits:
      break;
  }
  PB_ASSERT(false, "casts are handled by emit(UnaryOpStmt)");
}

llvm::Value* TaskEmitter::int_unary(const ir::UnaryOpStmt& s, llvm::Value* x, ir::ScalarKind k) {
  ir::ScalarKind xk = s.x()->type.scalar;
  llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
  switch (s.op) {
    case ir::UnaryOp::neg:
      return b_.CreateSub(zero, x);
    case ir::UnaryOp::abs:
      return ir::is_signed(xk) ? b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateSub(zero, x), x) : x;
    case ir::UnaryOp::sgn: {
      llvm::Value* one = llvm::ConstantInt::get(x->getType(), 1);
      if (!ir::is_signed(xk)) return b_.CreateSelect(b_.CreateICmpNE(x, zero), one, zero);
      return b_.CreateSelect(
          b_.CreateICmpSGT(x, zero), one,
          b_.CreateSelect(b_.CreateICmpSLT(x, zero), llvm::ConstantInt::getSigned(x->getType(), -1), zero));
    }
    case ir::UnaryOp::logic_not:
      return from_bool(b_.CreateICmpEQ(x, zero), k);
    case ir::UnaryOp::bit_not:
      return b_.CreateNot(x);
    default:
      unsupported(s, fmt::format("{} needs a floating-point operand", ir::op_name(s.op)));
  }
}

void TaskEmitter::emit(const ir::UnaryOpStmt& s) {
  llvm::Value* x = value(s.x());
  ir::ScalarKind from = s.x()->type.scalar, to = s.type.scalar;
  if (s.op == ir::UnaryOp::cast_value) {
    set(s, cast(x, from, to));
  } else if (s.op == ir::UnaryOp::cast_bits) {
    if (ir::bit_width(from) != ir::bit_width(to) || from == ir::ScalarKind::u1)
      unsupported(s, "a bit cast between types of different widths");
    set(s, b_.CreateBitCast(x, value_type(to)));
  } else if (from == ir::ScalarKind::f16) {  // computed in f32 and rounded once, as ir/eval.h does
    llvm::Value* r = float_unary(s, b_.CreateFPExt(x, b_.getFloatTy()), to);
    set(s, r->getType()->isFloatTy() ? b_.CreateFPTrunc(r, value_type(to)) : r);
  } else if (ir::is_float(from)) {
    set(s, float_unary(s, x, to));
  } else {
    set(s, int_unary(s, x, to));
  }
}

// ---- binary ----

llvm::Value* TaskEmitter::int_divide(const ir::BinaryOpStmt& s, llvm::Value* a, llvm::Value* b, ir::ScalarKind k) {
  llvm::Type* t = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* by_zero = b_.CreateICmpEQ(b, zero);
  int code = error_site(s, fmt::format("integer {} by zero", s.op == ir::BinaryOp::mod ? "modulo" : "division"),
                        "guard the divisor: GPU backends leave integer division by zero undefined");
  flag_if(by_zero, kFlagError, code);
  if (!ir::is_signed(k)) {
    llvm::Value* d = b_.CreateSelect(by_zero, one, b);
    return s.op == ir::BinaryOp::mod ? b_.CreateURem(a, d) : b_.CreateUDiv(a, d);
  }
  unsigned w = t->getIntegerBitWidth();
  llvm::Value* overflow = b_.CreateAnd(b_.CreateICmpEQ(a, llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(w))),
                                       b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1)));
  llvm::Value* d = b_.CreateSelect(b_.CreateOr(by_zero, overflow), one, b);
  llvm::Value* q = b_.CreateSDiv(a, d);
  llvm::Value* r = b_.CreateSRem(a, d);
  if (s.op == ir::BinaryOp::mod) return b_.CreateSelect(by_zero, zero, r);
  if (s.op == ir::BinaryOp::floordiv) {
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
    q = b_.CreateSelect(adjust, b_.CreateSub(q, one), q);
  }
  return b_.CreateSelect(by_zero, zero, q);
}

llvm::Value* TaskEmitter::int_pow(const ir::BinaryOpStmt& s, llvm::Value* a, llvm::Value* b, ir::ScalarKind k) {
  llvm::Type* t = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* e = b_.CreateZExtOrTrunc(b, t);
  if (ir::is_signed(k)) {
    llvm::Value* negative = b_.CreateICmpSLT(e, zero);
    int code = error_site(s, "negative exponent in pow(int, int) is not allowed",
                          "use a float base, or make sure the exponent is not negative");
    flag_if(negative, kFlagError, code);
    e = b_.CreateSelect(negative, zero, e);
  }
  llvm::AllocaInst* base = entry_alloca(t, "pow.base");
  llvm::AllocaInst* exp = entry_alloca(t, "pow.exp");
  llvm::AllocaInst* acc = entry_alloca(t, "pow.acc");
  b_.CreateStore(a, base);
  b_.CreateStore(e, exp);
  b_.CreateStore(llvm::ConstantInt::get(t, 1), acc);
  llvm::BasicBlock* head = new_block("pow");
  llvm::BasicBlock* body = new_block("pow.body");
  llvm::BasicBlock* done = new_block("pow.done");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::Value* ev = b_.CreateLoad(t, exp);
  b_.CreateCondBr(b_.CreateICmpNE(ev, zero), body, done);
  b_.SetInsertPoint(body);
  llvm::Value* bv = b_.CreateLoad(t, base);
  llvm::Value* av = b_.CreateLoad(t, acc);
  llvm::Value* odd = b_.CreateICmpNE(b_.CreateAnd(ev, llvm::ConstantInt::get(t, 1)), zero);
  b_.CreateStore(b_.CreateSelect(odd, b_.CreateMul(av, bv), av), acc);
  b_.CreateStore(b_.CreateLShr(ev, llvm::ConstantInt::get(t, 1)), exp);
  b_.CreateStore(b_.CreateMul(bv, bv), base);
  b_.CreateBr(head);
  b_.SetInsertPoint(done);
  return b_.CreateLoad(t, acc);
}

// Ops whose result is computed in the operand kind `k` from two operands of that kind (the ones
// atomics share): add sub mul max min and bit ops.
llvm::Value* TaskEmitter::binary_value(ir::BinaryOp op, llvm::Value* a, llvm::Value* b, ir::ScalarKind k) {
  bool fl = ir::is_float(k);
  switch (op) {
    case ir::BinaryOp::add:
      return fl ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
    case ir::BinaryOp::sub:
      return fl ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
    case ir::BinaryOp::mul:
      return fl ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
    case ir::BinaryOp::max:
      if (fl) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b);
      return b_.CreateSelect(ir::is_signed(k) ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
    case ir::BinaryOp::min:
      if (fl) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b);
      return b_.CreateSelect(ir::is_signed(k) ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
    case ir::BinaryOp::bit_and:
      return b_.CreateAnd(a, b);
    case ir::BinaryOp::bit_or:
      return b_.CreateOr(a, b);
    case ir::BinaryOp::bit_xor:
      return b_.CreateXor(a, b);
    default:
      PB_ASSERT(false, "binary_value of another op");
  }
}

void TaskEmitter::emit(const ir::BinaryOpStmt& s) {
  llvm::Value* a = value(s.lhs());
  llvm::Value* b = value(s.rhs());
  ir::ScalarKind ak = s.lhs()->type.scalar, bk = s.rhs()->type.scalar, rk = s.type.scalar;
  if (ir::is_float(ak) && !ir::is_float(bk)) {  // pow(float, integer): the exponent converts
    b = cast(b, bk, ak);
    bk = ak;
  }
  if (ir::is_float(ak) != ir::is_float(bk)) unsupported(s, fmt::format("{} needs integer operands", ir::op_name(s.op)));
  if (ak == ir::ScalarKind::f16) {  // computed in f32 and rounded once at the end, as ir/eval.h does
    a = b_.CreateFPExt(a, b_.getFloatTy());
    b = b_.CreateFPExt(b, b_.getFloatTy());
    ak = bk = ir::ScalarKind::f32;
  }
  bool fl = ir::is_float(ak);
  bool sg = ir::is_signed(ak);
  using ir::BinaryOp;
  auto cmp = [&](llvm::CmpInst::Predicate f, llvm::CmpInst::Predicate si, llvm::CmpInst::Predicate ui) {
    llvm::Value* c = fl ? b_.CreateFCmp(f, a, b) : b_.CreateICmp(sg ? si : ui, a, b);
    return from_bool(c, rk);
  };
  llvm::Value* r = nullptr;
  switch (s.op) {
    case BinaryOp::add:
    case BinaryOp::sub:
    case BinaryOp::mul:
    case BinaryOp::max:
    case BinaryOp::min:
      r = binary_value(s.op, a, b, ak);
      break;
    case BinaryOp::div:
      r = fl ? b_.CreateFDiv(a, b) : int_divide(s, a, b, ak);
      break;
    case BinaryOp::floordiv:
      r = fl ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b)) : int_divide(s, a, b, ak);
      break;
    case BinaryOp::mod:
      r = fl ? b_.CreateFRem(a, b) : int_divide(s, a, b, ak);
      break;
    case BinaryOp::pow:
      r = fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, b) : int_pow(s, a, b, ak);
      break;
    case BinaryOp::atan2:
      if (!fl) unsupported(s, "atan2 needs floating-point operands");
      r = libm("atan2", {a, b});
      break;
    case BinaryOp::cmp_lt:
      r = cmp(llvm::CmpInst::FCMP_OLT, llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT);
      break;
    case BinaryOp::cmp_le:
      r = cmp(llvm::CmpInst::FCMP_OLE, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE);
      break;
    case BinaryOp::cmp_gt:
      r = cmp(llvm::CmpInst::FCMP_OGT, llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT);
      break;
    case BinaryOp::cmp_ge:
      r = cmp(llvm::CmpInst::FCMP_OGE, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE);
      break;
    case BinaryOp::cmp_eq:
      r = cmp(llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_EQ);
      break;
    case BinaryOp::cmp_ne:
      r = cmp(llvm::CmpInst::FCMP_ONE, llvm::CmpInst::ICMP_NE, llvm::CmpInst::ICMP_NE);
      break;
    case BinaryOp::bit_and:
    case BinaryOp::bit_or:
    case BinaryOp::bit_xor:
    case BinaryOp::bit_shl:
    case BinaryOp::bit_shr:
    case BinaryOp::bit_sar:
    case BinaryOp::logical_and:
    case BinaryOp::logical_or: {
      if (fl) unsupported(s, fmt::format("{} needs integer operands", ir::op_name(s.op)));
      if (s.op == BinaryOp::logical_and || s.op == BinaryOp::logical_or) {
        llvm::Value* x = truthy(s.lhs());
        llvm::Value* y = truthy(s.rhs());
        r = from_bool(s.op == BinaryOp::logical_and ? b_.CreateAnd(x, y) : b_.CreateOr(x, y), rk);
        break;
      }
      b = b_.CreateZExtOrTrunc(b, a->getType());
      if (s.op == BinaryOp::bit_and || s.op == BinaryOp::bit_or || s.op == BinaryOp::bit_xor) {
        r = binary_value(s.op, a, b, ak);
        break;
      }
      unsigned w = a->getType()->getIntegerBitWidth();
      llvm::Value* amount = b_.CreateAnd(b, llvm::ConstantInt::get(a->getType(), w - 1));
      if (s.op == BinaryOp::bit_shl)
        r = b_.CreateShl(a, amount);
      else if (s.op == BinaryOp::bit_sar && sg)
        r = b_.CreateAShr(a, amount);
      else
        r = b_.CreateLShr(a, amount);
      break;
    }
  }
  if (r->getType() != value_type(rk)) r = cast(r, ak, rk);
  set(s, r);
}

// ---- atomics ----

void TaskEmitter::emit(const ir::AtomicOpStmt& s) {
  emit_atomic(s);
  zero_if_ambient(s, s.dest());
}

void TaskEmitter::emit_atomic(const ir::AtomicOpStmt& s) {
  if (auto red = reduced_atomics_.find(&s); red != reduced_atomics_.end()) {
    Reduction& r = reductions_.at(red->second);
    llvm::Value* acc = b_.CreateLoad(value_type(r.kind), r.acc);
    llvm::Value* v = value(s.val());
    llvm::Value* next = binary_value(s.op == ir::AtomicOp::add ? ir::BinaryOp::add : ir::BinaryOp::sub, acc, v, r.kind);
    b_.CreateStore(next, r.acc);
    set(s, llvm::Constant::getNullValue(value_type(r.kind)));
    return;
  }
  llvm::Value* ptr = value(s.dest());
  check_access(s, s.dest(), ptr, true);
  ir::ScalarKind k = s.dest()->type.scalar;
  if (k == ir::ScalarKind::unknown) k = s.type.scalar;
  llvm::Value* v = value(s.val());
  if (s.val()->type.scalar != k) v = cast(v, s.val()->type.scalar, k);
  bool fl = ir::is_float(k);
  const auto* gp = ir::dyn_cast<ir::GlobalPtrStmt>(s.dest());
  if (gp && own_cell_fields_.count(gp->field) && own_cell_fields_.at(gp->field) && k != ir::ScalarKind::u1 &&
      !(fl && (s.op == ir::AtomicOp::bit_and || s.op == ir::AtomicOp::bit_or || s.op == ir::AtomicOp::bit_xor))) {
    // Only this iteration touches the cell: a plain read-modify-write.
    ir::BinaryOp bop = s.op == ir::AtomicOp::add       ? ir::BinaryOp::add
                       : s.op == ir::AtomicOp::sub     ? ir::BinaryOp::sub
                       : s.op == ir::AtomicOp::mul     ? ir::BinaryOp::mul
                       : s.op == ir::AtomicOp::max     ? ir::BinaryOp::max
                       : s.op == ir::AtomicOp::min     ? ir::BinaryOp::min
                       : s.op == ir::AtomicOp::bit_and ? ir::BinaryOp::bit_and
                       : s.op == ir::AtomicOp::bit_or  ? ir::BinaryOp::bit_or
                                                       : ir::BinaryOp::bit_xor;
    llvm::Value* old = b_.CreateLoad(value_type(k), ptr);
    b_.CreateStore(binary_value(bop, old, v, k), ptr);
    set(s, old);
    return;
  }
  using RMW = llvm::AtomicRMWInst::BinOp;
  std::optional<RMW> op;
  switch (s.op) {
    case ir::AtomicOp::add:
      op = fl ? RMW::FAdd : RMW::Add;
      break;
    case ir::AtomicOp::sub:
      op = fl ? RMW::FSub : RMW::Sub;
      break;
    case ir::AtomicOp::max:
      op = fl ? RMW::FMax : ir::is_signed(k) ? RMW::Max : RMW::UMax;
      break;
    case ir::AtomicOp::min:
      op = fl ? RMW::FMin : ir::is_signed(k) ? RMW::Min : RMW::UMin;
      break;
    case ir::AtomicOp::bit_and:
      if (!fl) op = RMW::And;
      break;
    case ir::AtomicOp::bit_or:
      if (!fl) op = RMW::Or;
      break;
    case ir::AtomicOp::bit_xor:
      if (!fl) op = RMW::Xor;
      break;
    case ir::AtomicOp::mul:
      break;
  }
  if (op && k != ir::ScalarKind::u1) {
    set(s, b_.CreateAtomicRMW(*op, ptr, v, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic));
    return;
  }
  if (fl && (s.op == ir::AtomicOp::bit_and || s.op == ir::AtomicOp::bit_or || s.op == ir::AtomicOp::bit_xor))
    unsupported(s, "bit operations need integer operands");
  // A compare-exchange loop on the cell's bits.
  llvm::Type* mt = memory_type(k);
  llvm::Type* it = b_.getIntNTy(static_cast<unsigned>(mt->getPrimitiveSizeInBits()));
  ir::BinaryOp bop = s.op == ir::AtomicOp::mul       ? ir::BinaryOp::mul
                     : s.op == ir::AtomicOp::add     ? ir::BinaryOp::add
                     : s.op == ir::AtomicOp::sub     ? ir::BinaryOp::sub
                     : s.op == ir::AtomicOp::max     ? ir::BinaryOp::max
                     : s.op == ir::AtomicOp::min     ? ir::BinaryOp::min
                     : s.op == ir::AtomicOp::bit_and ? ir::BinaryOp::bit_and
                     : s.op == ir::AtomicOp::bit_or  ? ir::BinaryOp::bit_or
                                                     : ir::BinaryOp::bit_xor;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = new_block("cas");
  llvm::BasicBlock* done = new_block("cas.done");
  llvm::Value* first = b_.CreateLoad(it, ptr);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* cur = b_.CreatePHI(it, 2);
  cur->addIncoming(first, pre);
  llvm::Value* old_v = from_memory(b_.CreateBitCast(cur, mt), k);
  llvm::Value* new_v = binary_value(bop, old_v, v, k);
  llvm::Value* new_bits = b_.CreateBitCast(to_memory(new_v, k), it);
  auto* cx = b_.CreateAtomicCmpXchg(ptr, cur, new_bits, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic,
                                    llvm::AtomicOrdering::Monotonic);
  llvm::Value* seen = b_.CreateExtractValue(cx, 0);
  llvm::Value* ok = b_.CreateExtractValue(cx, 1);
  cur->addIncoming(seen, b_.GetInsertBlock());
  b_.CreateCondBr(ok, done, loop);
  b_.SetInsertPoint(done);
  set(s, old_v);
}

}  // namespace pb::codegen::llvmgen::detail
