// Autodiff stacks on the heap slice, print / assert / return, and the offloaded stage's SNode
// access chain. A stack at `slice + ctx.stack_offsets[id]` is an i64 count, then `capacity`
// primal slots, then `capacity` adjoint slots (capacity from ctx.stack_caps[id]). The count word
// is reserved: the count itself lives in a local of the task function (a register after mem2reg),
// so that stores to the slots do not force it back to memory.
#include <fmt/format.h>

#include "codegen/llvm/emitter.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen::detail {

TaskEmitter::StackRef& TaskEmitter::stack_of(const ir::Stmt* alloc) {
  auto it = stacks_.find(alloc);
  PB_ASSERT(it != stacks_.end(), "a stack operation before its alloc");
  return it->second;
}

llvm::Value* TaskEmitter::stack_slot(const StackRef& st, llvm::Value* index, bool adjoint) {
  llvm::Type* mt = memory_type(st.kind);
  llvm::Value* primal = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), st.base, 1);
  llvm::Value* i = adjoint ? b_.CreateAdd(index, st.capacity) : index;
  return b_.CreateInBoundsGEP(mt, primal, i);
}

llvm::Value* TaskEmitter::checked_top(const StackRef& st) {
  llvm::Value* count = b_.CreateLoad(b_.getInt64Ty(), st.count);
  llvm::Value* empty = b_.CreateICmpEQ(count, const_i64(0));
  flag_if(empty, kFlagStackUnderflow, st.id + 1);
  return b_.CreateSelect(empty, const_i64(0), b_.CreateSub(count, const_i64(1)));
}

void TaskEmitter::emit(const ir::AdStackAllocaStmt& s) {
  set(s, llvm::Constant::getNullValue(value_type(s.type.scalar)));
  if (auto it = stacks_.find(&s); it != stacks_.end()) {  // a task in parts: made at its entry
    b_.CreateStore(const_i64(0), it->second.count);
    return;
  }
  int id = m_.stack_ids.at(&s);
  // Offsets and capacities are fixed for a launch: read them once, at the function's entry.
  llvm::Value* offsets = ctx_word(kCtxStackOffsets);
  llvm::Value* caps = ctx_word(kCtxStackCaps);
  llvm::IRBuilder<> eb(entry_);
  llvm::Value* off = eb.CreateLoad(eb.getInt64Ty(),
                                   eb.CreateConstInBoundsGEP1_64(eb.getInt64Ty(), offsets, static_cast<uint64_t>(id)));
  llvm::Value* cap =
      eb.CreateLoad(eb.getInt64Ty(), eb.CreateConstInBoundsGEP1_64(eb.getInt64Ty(), caps, static_cast<uint64_t>(id)));
  StackRef st{eb.CreateInBoundsGEP(eb.getInt8Ty(), slice_, off), nullptr, cap, id, s.type.scalar};
  st.count = entry_alloca(b_.getInt64Ty(), "stack.count");
  b_.CreateStore(const_i64(0), st.count);
  st.deepest = entry_alloca(b_.getInt64Ty(), "stack.deepest");
  eb.CreateStore(const_i64(0), st.deepest);  // once per call: it spans the call's iterations
  stacks_[&s] = st;
}

void TaskEmitter::prepare_stacks() {
  llvm::Value* offsets = ctx_word(kCtxStackOffsets);
  llvm::Value* caps = ctx_word(kCtxStackCaps);
  llvm::IRBuilder<> eb(entry_);
  for (const StackInfo& si : m_.info.tasks[index_].stacks) {
    auto id = static_cast<uint64_t>(si.stack_id);
    llvm::Value* off = eb.CreateLoad(eb.getInt64Ty(), eb.CreateConstInBoundsGEP1_64(eb.getInt64Ty(), offsets, id));
    llvm::Value* cap = eb.CreateLoad(eb.getInt64Ty(), eb.CreateConstInBoundsGEP1_64(eb.getInt64Ty(), caps, id));
    StackRef st{eb.CreateInBoundsGEP(eb.getInt8Ty(), slice_, off), nullptr, cap, si.stack_id, si.element};
    st.count = entry_alloca(b_.getInt64Ty(), "stack.count");
    st.deepest = entry_alloca(b_.getInt64Ty(), "stack.deepest");
    eb.CreateStore(const_i64(0), st.deepest);
    stacks_[si.alloc] = st;
  }
}

void TaskEmitter::emit(const ir::AdStackPushStmt& s) {
  StackRef st = stack_of(s.stack());
  llvm::Value* count = b_.CreateLoad(b_.getInt64Ty(), st.count);
  llvm::Value* full = b_.CreateICmpSGE(count, st.capacity);
  llvm::BasicBlock* over = new_block("push.overflow");
  llvm::BasicBlock* ok = new_block("push");
  llvm::BasicBlock* done = new_block("push.done");
  b_.CreateCondBr(full, over, ok, unlikely());
  b_.SetInsertPoint(over);
  set_flag(kFlagStackOverflow, b_.getInt32(static_cast<uint32_t>(st.id + 1)));
  b_.CreateBr(done);
  b_.SetInsertPoint(ok);
  llvm::Value* v = value(s.val());
  if (s.val()->type.scalar != st.kind) v = cast(v, s.val()->type.scalar, st.kind);
  b_.CreateStore(to_memory(v, st.kind), stack_slot(st, count, false));
  b_.CreateStore(llvm::Constant::getNullValue(memory_type(st.kind)), stack_slot(st, count, true));
  llvm::Value* pushed = b_.CreateAdd(count, const_i64(1));
  b_.CreateStore(pushed, st.count);
  llvm::Value* deepest = b_.CreateLoad(b_.getInt64Ty(), st.deepest);
  b_.CreateStore(b_.CreateSelect(b_.CreateICmpSGT(pushed, deepest), pushed, deepest), st.deepest);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void TaskEmitter::emit(const ir::AdStackPopStmt& s) {
  StackRef st = stack_of(s.stack());
  llvm::Value* top = checked_top(st);
  b_.CreateStore(top, st.count);
}

void TaskEmitter::emit(const ir::AdStackLoadTopStmt& s) {
  StackRef st = stack_of(s.stack());
  llvm::Value* top = checked_top(st);
  set(s, from_memory(b_.CreateLoad(memory_type(st.kind), stack_slot(st, top, false)), st.kind));
}

void TaskEmitter::emit(const ir::AdStackLoadTopAdjStmt& s) {
  StackRef st = stack_of(s.stack());
  llvm::Value* top = checked_top(st);
  set(s, from_memory(b_.CreateLoad(memory_type(st.kind), stack_slot(st, top, true)), st.kind));
}

void TaskEmitter::emit(const ir::AdStackAccAdjointStmt& s) {
  StackRef st = stack_of(s.stack());
  llvm::Value* top = checked_top(st);
  llvm::Value* slot = stack_slot(st, top, true);
  llvm::Value* old = from_memory(b_.CreateLoad(memory_type(st.kind), slot), st.kind);
  llvm::Value* v = value(s.val());
  if (s.val()->type.scalar != st.kind) v = cast(v, s.val()->type.scalar, st.kind);
  if (st.kind == ir::ScalarKind::u1) unsupported(s, "acc adj on a u1 stack");
  b_.CreateStore(to_memory(binary_value(ir::BinaryOp::add, old, v, st.kind), st.kind), slot);
}

void TaskEmitter::report_stack_depths() {
  for (const auto& [alloc, st] : stacks_) {
    llvm::Value* word =
        b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ctx_word(kCtxStackDeepest), static_cast<uint64_t>(st.id));
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::Max, word, b_.CreateLoad(b_.getInt64Ty(), st.deepest), llvm::Align(8),
                       llvm::AtomicOrdering::Monotonic);
  }
}

// ---- print, assert, return ----

void TaskEmitter::emit(const ir::PrintStmt& s) {
  PrintSite site{&s, {}};
  std::vector<llvm::Value*> vals;
  for (const auto& item : s.items)
    if (const auto* i = std::get_if<size_t>(&item)) {
      const ir::Stmt* v = s.operand(*i);
      site.value_kinds.push_back(v->type.scalar);
      vals.push_back(value(v));
    }
  m_.info.prints.push_back(site);
  auto n = static_cast<uint64_t>(std::max<size_t>(vals.size(), 1));
  llvm::Value* buf = entry_alloca(llvm::ArrayType::get(b_.getInt64Ty(), n), "print.values");
  for (size_t i = 0; i < vals.size(); ++i)
    b_.CreateStore(to_memory(vals[i], site.value_kinds[i]), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), buf, i));
  auto callee = m_.module.getOrInsertFunction(
      kPrintCallback, llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt32Ty(), b_.getPtrTy()}, false));
  b_.CreateCall(callee, {ctx_word(kCtxHost), b_.getInt32(static_cast<uint32_t>(m_.info.prints.size() - 1)), buf});
}

void TaskEmitter::emit(const ir::AssertStmt& s) {
  int code = error_site(s, fmt::format("assertion failed: {}", s.message),
                        "the kernel's own assert: the inputs break a condition the kernel requires");
  flag_if(b_.CreateNot(truthy(s.cond())), kFlagError, code);
}

void TaskEmitter::emit(const ir::ReturnStmt& s) {
  ReturnSite site;
  llvm::Value* out = ctx_word(kCtxReturned);
  for (size_t i = 0; i < s.num_operands(); ++i) {
    const ir::Stmt* v = s.operand(i);
    site.kinds.push_back(v->type.scalar);
    b_.CreateStore(to_memory(value(v), v->type.scalar), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), out, i));
  }
  m_.info.returns.push_back(site);
  set_flag(kFlagReturn, b_.getInt32(static_cast<uint32_t>(m_.info.returns.size())));
}

// ---- the offloaded stage ----

void TaskEmitter::emit(const ir::OffloadedStmt& s) {
  if (s.task != ir::TaskType::serial) unsupported(s, "a loop task nested in another task");
  if (s.bls_prologue || s.bls_epilogue) unsupported(s, "block-local storage blocks");
  if (s.tls_prologue) emit_block(*s.tls_prologue);
  emit_block(*s.body);
  if (s.tls_epilogue) emit_block(*s.tls_epilogue);
}

void TaskEmitter::emit(const ir::GlobalTemporaryStmt& s) {
  m_.info.global_tmp_bytes = std::max<int64_t>(m_.info.global_tmp_bytes, s.offset + 8);
  set(s, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), ctx_word(kCtxGlobalTmps), static_cast<uint64_t>(s.offset)));
}

void TaskEmitter::emit(const ir::ThreadLocalPtrStmt& s) {
  if (s.offset < 0 || s.offset + 8 > int64_t{64} * 8) unsupported(s, "thread-local storage beyond 512 bytes");
  set(s, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), thread_locals(), static_cast<uint64_t>(s.offset)));
}

llvm::Value* TaskEmitter::thread_locals() {
  if (!tls_) {
    tls_ = entry_alloca(llvm::ArrayType::get(b_.getInt64Ty(), 64), "tls");
    llvm::IRBuilder<> eb(entry_);
    eb.CreateMemSet(tls_, eb.getInt8(0), uint64_t{64} * 8, llvm::MaybeAlign(8));
  }
  return tls_;
}

void TaskEmitter::emit(const ir::GetRootStmt& s) { set(s, const_i64(0)); }

void TaskEmitter::emit(const ir::SNodeLookupStmt& s) {
  if (host_lookup(s, to_i64(s.index()))) return;
  ir::Shape shape;
  if (auto it = m_.shapes.spaces.find(s.snode); it != m_.shapes.spaces.end())
    shape = it->second;
  else if (const auto* lin = ir::dyn_cast<ir::LinearizeStmt>(s.index()))
    shape = lin->strides;
  else
    throw UserError(
        fmt::format("the number of cells of SNode '{}' is unknown at `{}`", s.snode, ir::print_stmt(s, m_.kernel)),
        fmt::format("declare it in the header (`dense {} : [N]`) or give it in the inputs' \"spaces\"", s.snode));
  int64_t cells = 1;
  for (int64_t e : shape) cells *= e;
  int code = error_site(s, fmt::format("cell out of bounds for SNode '{}' of {} cell(s)", s.snode, cells),
                        "check the linearized index against the SNode's shape (header or inputs)");
  llvm::Value* i = to_i64(s.index());
  llvm::Value* bad = b_.CreateICmpUGE(i, const_i64(cells));
  flag_if(bad, kFlagError, code);
  i = b_.CreateSelect(bad, const_i64(0), i);
  set(s, b_.CreateAdd(b_.CreateMul(value(s.parent_ptr()), const_i64(cells)), i));
}

void TaskEmitter::emit(const ir::GetChStmt& s) {
  llvm::Value* cell = value(s.input());
  if (s.type.gen) {
    set(s, cell);
    return;
  }
  auto f = m_.kernel.find_field(s.to);
  if (!f) unsupported(s, "a place with no field");
  auto it = m_.shapes.fields.find(*f);
  if (it == m_.shapes.fields.end())
    throw UserError(fmt::format("field '{}' has no data in the state (at `{}`)", s.to, ir::print_stmt(s, m_.kernel)),
                    "give its shape in the header or the inputs");
  int64_t n = 1;
  for (int64_t e : it->second) n *= e;
  int code = error_site(s, fmt::format("cell out of bounds for field '{}' of {} element(s)", s.to, n),
                        "give the field the shape of the SNodes above it (header or inputs)");
  // With sparse SNodes, a cell of -1 is one the chain did not reach: the ambient slot.
  llvm::Value* dead = m_.info.sparse ? b_.CreateICmpSLT(cell, const_i64(0)) : nullptr;
  llvm::Value* bad = b_.CreateICmpUGE(cell, const_i64(n));
  if (dead) bad = b_.CreateAnd(bad, b_.CreateNot(dead));
  flag_if(bad, kFlagError, code);
  cell = b_.CreateSelect(dead ? b_.CreateOr(bad, dead) : bad, const_i64(0), cell);
  llvm::Value* fields = ctx_word(kCtxFields);
  llvm::IRBuilder<> eb(entry_);
  llvm::Value* base =
      eb.CreateLoad(eb.getPtrTy(), eb.CreateConstInBoundsGEP1_64(eb.getPtrTy(), fields, static_cast<uint64_t>(*f)));
  llvm::Value* p = b_.CreateInBoundsGEP(memory_type(s.type.scalar), base, cell);
  if (dead) {
    p = b_.CreateSelect(dead, ambient(), p);
    ambient_ptrs_.insert(&s);
  }
  set(s, p);
}

void TaskEmitter::emit(const ir::LinearizeStmt& s) {
  llvm::Value* v = const_i64(0);
  for (size_t i = 0; i < s.strides.size(); ++i)
    v = b_.CreateAdd(b_.CreateMul(v, const_i64(s.strides[i])), to_i64(s.operand(i)));
  set(s, cast(v, ir::ScalarKind::i64, s.type.scalar));
}

void TaskEmitter::emit(const ir::IntegerOffsetStmt& s) {
  llvm::Value* v = b_.CreateAdd(to_i64(s.input()), const_i64(s.offset));
  set(s, cast(v, ir::ScalarKind::i64, s.type.scalar == ir::ScalarKind::unknown ? ir::ScalarKind::i64 : s.type.scalar));
}

void TaskEmitter::emit(const ir::BitExtractStmt& s) {
  llvm::Value* x = value(s.input());
  llvm::Type* t = x->getType();
  if (!t->isIntegerTy()) unsupported(s, "bit_extract of a non-integer");
  int width = s.bit_end - s.bit_begin;
  unsigned w = t->getIntegerBitWidth();
  llvm::APInt mask = width >= static_cast<int>(w) ? llvm::APInt::getAllOnes(w)
                                                  : llvm::APInt::getLowBitsSet(w, static_cast<unsigned>(width));
  llvm::Value* shifted = b_.CreateLShr(x, llvm::ConstantInt::get(t, static_cast<uint64_t>(s.bit_begin) % w));
  set(s, b_.CreateAnd(shifted, llvm::ConstantInt::get(t, mask)));
}

}  // namespace pb::codegen::llvmgen::detail
