// Task functions: entry, imports, loops and control flow (locals and memory: emit_memory.cpp).
#include <fmt/format.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>

#include "codegen/llvm/emitter.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen::detail {

TaskEmitter::TaskEmitter(ModuleState& m, const TaskPlan& task, size_t index)
    : m_(m), task_(task), index_(index), b_(m.ctx) {}

llvm::Type* TaskEmitter::value_type(ir::ScalarKind k) {
  switch (k) {
    case ir::ScalarKind::u1:
      return b_.getInt1Ty();
    case ir::ScalarKind::i32:
    case ir::ScalarKind::u32:
      return b_.getInt32Ty();
    case ir::ScalarKind::i64:
    case ir::ScalarKind::u64:
      return b_.getInt64Ty();
    case ir::ScalarKind::f32:
      return b_.getFloatTy();
    case ir::ScalarKind::f64:
      return b_.getDoubleTy();
    case ir::ScalarKind::f16:
      return b_.getHalfTy();
    case ir::ScalarKind::i8:
    case ir::ScalarKind::u8:
      return b_.getInt8Ty();
    case ir::ScalarKind::i16:
    case ir::ScalarKind::u16:
      return b_.getInt16Ty();
    case ir::ScalarKind::unknown:
      break;
  }
  PB_ASSERT(false, "a value of unknown type");
}

llvm::Type* TaskEmitter::memory_type(ir::ScalarKind k) {
  return k == ir::ScalarKind::u1 ? b_.getInt8Ty() : value_type(k);
}

llvm::Value* TaskEmitter::to_memory(llvm::Value* v, ir::ScalarKind k) {
  return k == ir::ScalarKind::u1 ? b_.CreateZExt(v, b_.getInt8Ty()) : v;
}
llvm::Value* TaskEmitter::from_memory(llvm::Value* v, ir::ScalarKind k) {
  return k == ir::ScalarKind::u1 ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
}

llvm::Value* TaskEmitter::value(const ir::Stmt* s) {
  auto it = values_.find(s);
  if (it == values_.end())
    if (auto home = homes_.find(s); home != homes_.end())  // made by a part: read where it is used
      return b_.CreateLoad(home->second.type, home->second.slot);
  PB_ASSERT(it != values_.end() && it->second,
            fmt::format("`{}` is used before it was emitted", s ? ir::print_stmt(*s, m_.kernel) : "null"));
  return it->second;
}

void TaskEmitter::set(const ir::Stmt& s, llvm::Value* v) { values_[&s] = v; }

llvm::Value* TaskEmitter::truthy(const ir::Stmt* s) {
  llvm::Value* v = value(s);
  if (v->getType()->isFloatingPointTy()) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  if (v->getType()->isIntegerTy(1)) return v;
  return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

llvm::Value* TaskEmitter::from_bool(llvm::Value* bit, ir::ScalarKind k) {
  if (ir::is_float(k)) return b_.CreateUIToFP(bit, value_type(k));
  return b_.CreateZExtOrTrunc(bit, value_type(k));
}

llvm::Value* TaskEmitter::to_i64(const ir::Stmt* s) {
  llvm::Value* v = value(s);
  ir::ScalarKind k = s->type.scalar;
  if (ir::is_float(k)) return cast(v, k, ir::ScalarKind::i64);
  return ir::is_signed(k) ? b_.CreateSExtOrTrunc(v, b_.getInt64Ty()) : b_.CreateZExtOrTrunc(v, b_.getInt64Ty());
}

llvm::Value* TaskEmitter::ctx_word(ContextWord w) {
  llvm::IRBuilder<> eb(entry_);
  llvm::Value* p = eb.CreateConstInBoundsGEP1_64(eb.getInt64Ty(), ctx_, static_cast<uint64_t>(w));
  return eb.CreateLoad(eb.getPtrTy(), p, fmt::format("ctx{}", static_cast<int>(w)));
}

void TaskEmitter::unsupported(const ir::Stmt& s, const std::string& why, const std::string& remedy) {
  throw UserError(fmt::format("the cpu backend cannot lower `{}`: {}", ir::print_stmt(s, m_.kernel), why), remedy);
}

llvm::MDNode* TaskEmitter::unlikely() { return llvm::MDBuilder(m_.ctx).createBranchWeights(1, 1u << 20); }

llvm::BasicBlock* TaskEmitter::new_block(const char* name) { return llvm::BasicBlock::Create(m_.ctx, name, fn_); }

llvm::AllocaInst* TaskEmitter::entry_alloca(llvm::Type* t, const char* name) {
  llvm::IRBuilder<> eb(entry_, entry_->begin());
  return eb.CreateAlloca(t, nullptr, name);
}

// ---- errors ----

int TaskEmitter::error_site(const ir::Stmt& s, std::string message, std::string remedy) {
  m_.info.errors.push_back({&s, std::move(message), std::move(remedy)});
  return static_cast<int>(m_.info.errors.size());
}

// A return's flag names the last return executed; every other flag keeps the first problem, as
// the interpreter reports the first.
void TaskEmitter::set_flag(FlagWord w, llvm::Value* code) {
  llvm::Value* flags = ctx_word(kCtxFlags);
  llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt32Ty(), flags, static_cast<uint64_t>(w));
  if (w == kFlagReturn) {
    b_.CreateAlignedStore(code, p, llvm::Align(4))->setAtomic(llvm::AtomicOrdering::Monotonic);
    return;
  }
  b_.CreateAtomicCmpXchg(p, b_.getInt32(0), code, llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic,
                         llvm::AtomicOrdering::Monotonic);
}

void TaskEmitter::flag_if(llvm::Value* bad, FlagWord w, int code) {
  llvm::BasicBlock* yes = new_block("flag");
  llvm::BasicBlock* done = new_block("flag.done");
  b_.CreateCondBr(bad, yes, done, unlikely());
  b_.SetInsertPoint(yes);
  set_flag(w, b_.getInt32(static_cast<uint32_t>(code)));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::Value* TaskEmitter::count_steps(llvm::Value* n, const ir::Stmt& loop) {
  llvm::Value* steps_word = ctx_word(kCtxSteps);
  llvm::Value* budget = b_.CreateLoad(b_.getInt64Ty(), steps_word, "budget");
  llvm::Value* steps = b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), steps_), n);
  b_.CreateStore(steps, steps_);
  llvm::Value* over = b_.CreateICmpUGT(steps, budget);
  m_.info.loop_sites.push_back(&loop);
  flag_if(over, kFlagStepBudget, static_cast<int>(m_.info.loop_sites.size()));
  return over;
}

void TaskEmitter::report_steps() {
  llvm::Value* used = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ctx_word(kCtxSteps), 1);
  b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, used, b_.CreateLoad(b_.getInt64Ty(), steps_), llvm::Align(8),
                     llvm::AtomicOrdering::Monotonic);
}

llvm::Value* TaskEmitter::checked_offset(std::span<const ir::Stmt* const> indices, const ir::Shape& shape, int code) {
  llvm::Value* off = const_i64(0);
  llvm::Value* bad = b_.getFalse();
  for (size_t d = 0; d < indices.size(); ++d) {
    llvm::Value* i = to_i64(indices[d]);
    bad = b_.CreateOr(bad, b_.CreateICmpUGE(i, const_i64(shape[d])));
    off = b_.CreateAdd(b_.CreateMul(off, const_i64(shape[d])), i);
  }
  if (!indices.empty()) {
    flag_if(bad, kFlagError, code);
    off = b_.CreateSelect(bad, const_i64(0), off);
  }
  return off;
}

// ---- the task function ----

void TaskEmitter::emit_import(const ir::Stmt& s) {
  if (std::find(task_.private_allocas.begin(), task_.private_allocas.end(), &s) != task_.private_allocas.end()) {
    set(s, entry_alloca(memory_type(s.type.scalar), "private"));  // read only after a store
    return;
  }
  if (m_.plan.shared_allocas.count(&s) || m_.plan.spilled.count(&s)) {
    llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ctx_word(kCtxTemps), m_.plan.temp_word.at(&s));
    if (m_.plan.shared_allocas.count(&s)) {
      set(s, p);
    } else {
      ir::ScalarKind k = s.type.scalar;
      set(s, from_memory(b_.CreateLoad(memory_type(k), p), k));
    }
    return;
  }
  ir::visit(s, [&](const auto& x) { emit(x); });
}

void TaskEmitter::emit_stmt(const ir::Stmt& s) {
  ir::visit(s, [&](const auto& x) { emit(x); });
  if (m_.plan.spilled.count(&s)) {
    llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ctx_word(kCtxTemps), m_.plan.temp_word.at(&s));
    b_.CreateStore(to_memory(value(&s), s.type.scalar), p);
  }
}

void TaskEmitter::emit_block(const ir::Block& blk) {
  if (in_parts_ && blk.total_size() > m_.options.part_statements) {
    std::vector<const ir::Stmt*> stmts(blk.begin(), blk.end());
    emit_in_parts(stmts);
    return;
  }
  for (const ir::Stmt* s : blk) emit_stmt(*s);
}

void TaskEmitter::emit_stmts(std::span<const ir::Stmt* const> stmts) {
  if (in_parts_) {
    emit_in_parts(stmts);
    return;
  }
  for (const ir::Stmt* s : stmts) emit_stmt(*s);
}

void TaskEmitter::counted_loop(llvm::Value* count, const std::function<void(llvm::Value*)>& body) {
  llvm::AllocaInst* counter = entry_alloca(b_.getInt64Ty(), "i");
  b_.CreateStore(const_i64(0), counter);
  llvm::BasicBlock* header = new_block("loop");
  llvm::BasicBlock* inner = new_block("loop.body");
  llvm::BasicBlock* latch = new_block("loop.latch");
  llvm::BasicBlock* exit = new_block("loop.exit");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::Value* i = b_.CreateLoad(b_.getInt64Ty(), counter);
  b_.CreateCondBr(b_.CreateICmpSLT(i, count), inner, exit);
  b_.SetInsertPoint(inner);
  continue_targets_.push_back(latch);
  body(i);
  continue_targets_.pop_back();
  b_.CreateBr(latch);
  b_.SetInsertPoint(latch);
  b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), counter), const_i64(1)), counter);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

llvm::Value* TaskEmitter::task_bound(const ir::OffloadedStmt& o, const ir::TaskBound& tb) {
  switch (tb.kind) {
    case ir::TaskBound::Kind::constant:
      return const_i64(tb.value);
    case ir::TaskBound::Kind::temporary: {
      llvm::Value* p =
          b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), ctx_word(kCtxGlobalTmps), static_cast<uint64_t>(tb.value));
      m_.info.global_tmp_bytes = std::max<int64_t>(m_.info.global_tmp_bytes, tb.value + 8);
      return b_.CreateSExt(b_.CreateLoad(b_.getInt32Ty(), p), b_.getInt64Ty());
    }
    case ir::TaskBound::Kind::operand:
      return to_i64(o.bound_operand(tb));
  }
  return const_i64(0);
}

llvm::Value* TaskEmitter::range_begin_end(llvm::Value** end) {
  if (const auto* r = ir::dyn_cast<ir::RangeForStmt>(task_.loop)) {
    *end = to_i64(r->end());
    return to_i64(r->begin());
  }
  const auto& o = *ir::dyn_cast<ir::OffloadedStmt>(task_.loop);
  *end = task_bound(o, o.end);
  return task_bound(o, o.begin);
}

static const ir::Shape& struct_shape(ModuleState& m, const std::string& space, const ir::Stmt& s) {
  auto it = m.shapes.spaces.find(space);
  if (it == m.shapes.spaces.end())
    throw UserError(fmt::format("the shape of index space '{}' of `{}` is unknown", space, ir::print_stmt(s, m.kernel)),
                    "declare it in the header or give it in the inputs' \"spaces\"");
  return it->second;
}

void TaskEmitter::emit_parallel_body(llvm::Value* t) {
  const ir::Stmt* loop = task_.loop;
  iteration_ = t;
  loop_linear_[loop] = t;
  if (task_.kind == TaskKind::range_for) {
    llvm::Value* end = nullptr;
    llvm::Value* begin = range_begin_end(&end);
    const auto* r = ir::dyn_cast<ir::RangeForStmt>(loop);
    llvm::Value* index = r && r->reversed ? b_.CreateSub(b_.CreateSub(end, const_i64(1)), t) : b_.CreateAdd(begin, t);
    loop_coords_[loop] = {index};
    loop_linear_[loop] = index;
  } else {
    const auto* sf = ir::dyn_cast<ir::StructForStmt>(loop);
    const ir::Shape& shape = struct_shape(m_, sf ? sf->space : ir::dyn_cast<ir::OffloadedStmt>(loop)->snode, *loop);
    // Over a sparse tree the iterations are the live cells the host listed at launch.
    llvm::Value* cell = t;
    if (!m_.info.tasks[index_].cell_space.empty())
      cell = b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(b_.getInt64Ty(), ctx_word(kCtxTaskCells), t));
    unravel_cell(*loop, cell, shape);
  }
  if (const auto* o = ir::dyn_cast<ir::OffloadedStmt>(loop)) {
    if (o->bls_prologue || o->bls_epilogue) unsupported(*o, "block-local storage blocks");
    emit_block(*o->body);
  } else {
    emit_block(*loop->blocks()[0]);
  }
}

void TaskEmitter::emit_count_function() {
  auto* fty = llvm::FunctionType::get(b_.getInt64Ty(), {b_.getPtrTy()}, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, m_.info.tasks[index_].name + "_count", m_.module);
  ctx_ = fn_->getArg(0);
  values_.clear();
  ambient_ = nullptr;  // the task function's
  ambient_ptrs_.clear();
  entry_ = new_block("entry");
  llvm::BasicBlock* start = new_block("start");
  b_.SetInsertPoint(start);
  for (const ir::Stmt* s : task_.imports) emit_import(*s);
  llvm::Value* count = nullptr;
  if (task_.kind == TaskKind::range_for) {
    llvm::Value* end = nullptr;
    llvm::Value* begin = range_begin_end(&end);
    llvm::Value* n = b_.CreateSub(end, begin);
    count = b_.CreateSelect(b_.CreateICmpSGT(n, const_i64(0)), n, const_i64(0));
  } else {
    const auto* sf = ir::dyn_cast<ir::StructForStmt>(task_.loop);
    const ir::Shape& shape =
        struct_shape(m_, sf ? sf->space : ir::dyn_cast<ir::OffloadedStmt>(task_.loop)->snode, *task_.loop);
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    count = const_i64(n);
  }
  b_.CreateRet(count);
  llvm::IRBuilder<>(entry_).CreateBr(start);
}

void TaskEmitter::run() {
  TaskInfo& info = m_.info.tasks[index_];
  auto* fty =
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, info.name, m_.module);
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  ctx_ = fn_->getArg(0);
  slice_ = fn_->getArg(3);
  entry_ = new_block("entry");
  llvm::BasicBlock* start = new_block("start");
  b_.SetInsertPoint(start);
  steps_ = entry_alloca(b_.getInt64Ty(), "steps");
  b_.CreateStore(task_.loop ? b_.CreateSub(fn_->getArg(2), fn_->getArg(1)) : const_i64(0), steps_);
  size_t statements = 0;
  if (task_.loop) statements = nested_size(*task_.loop);
  for (const ir::Stmt* r : task_.roots) statements += nested_size(*r);
  in_parts_ = m_.options.part_statements > 0 && statements > m_.options.part_statements;
  if (in_parts_) prepare_stacks();
  for (const ir::Stmt* s : task_.imports) emit_import(*s);
  const auto* off = ir::dyn_cast<ir::OffloadedStmt>(task_.loop);
  if (task_.loop) {
    llvm::Value* lo = fn_->getArg(1);
    llvm::Value* hi = fn_->getArg(2);
    // A reduction adds to the field after the chunk, past the sparse host: none with sparse SNodes.
    if (!m_.options.check_global_access && !m_.info.sparse) plan_reductions();
    plan_own_cells();
    // The thread-local prologue and epilogue run inside the reductions' span: an atomic add of
    // the epilogue into a reduced field goes to the chunk's partial sum, which is flushed last.
    begin_reductions();
    if (off && off->tls_prologue) emit_block(*off->tls_prologue);
    counted_loop(b_.CreateSub(hi, lo), [&](llvm::Value* i) { emit_parallel_body(b_.CreateAdd(lo, i)); });
    iteration_ = nullptr;
    if (off && off->tls_epilogue) emit_block(*off->tls_epilogue);
    end_reductions();
  } else {
    emit_stmts(task_.roots);
  }
  report_steps();
  report_stack_depths();
  b_.CreateRetVoid();
  llvm::IRBuilder<>(entry_).CreateBr(start);
  if (task_.loop) emit_count_function();
}

// ---- control flow ----

void TaskEmitter::emit(const ir::IfStmt& s) {
  llvm::BasicBlock* then_bb = new_block("if.then");
  llvm::BasicBlock* else_bb = new_block("if.else");
  llvm::BasicBlock* done = new_block("if.done");
  b_.CreateCondBr(truthy(s.cond()), then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  emit_block(*s.true_block);
  b_.CreateBr(done);
  b_.SetInsertPoint(else_bb);
  if (s.false_block) emit_block(*s.false_block);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void TaskEmitter::emit(const ir::RangeForStmt& s) {
  llvm::Value* begin = to_i64(s.begin());
  llvm::Value* end = to_i64(s.end());
  llvm::Value* n = b_.CreateSub(end, begin);
  llvm::Value* count = b_.CreateSelect(b_.CreateICmpSGT(n, const_i64(0)), n, const_i64(0));
  count = b_.CreateSelect(count_steps(count, s), const_i64(0), count);
  counted_loop(count, [&](llvm::Value* i) {
    llvm::Value* index = s.reversed ? b_.CreateSub(b_.CreateSub(end, const_i64(1)), i) : b_.CreateAdd(begin, i);
    loop_coords_[&s] = {index};
    emit_block(*s.body);
  });
}

void TaskEmitter::emit(const ir::StructForStmt& s) {
  const ir::Shape& shape = struct_shape(m_, s.space, s);
  if (sparse_struct_for(s, shape)) return;
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  llvm::Value* count = b_.CreateSelect(count_steps(const_i64(n), s), const_i64(0), const_i64(n));
  counted_loop(count, [&](llvm::Value* t) {
    unravel_cell(s, t, shape);
    emit_block(*s.body);
  });
}

void TaskEmitter::emit(const ir::LoopIndexStmt& s) {
  auto it = loop_coords_.find(s.loop());
  if (it == loop_coords_.end()) unsupported(s, "its loop does not enclose it");
  if (s.axis < 0 || static_cast<size_t>(s.axis) >= it->second.size())
    unsupported(s, fmt::format("axis {} of a loop over {} dimension(s)", s.axis, it->second.size()));
  set(s, b_.CreateTrunc(it->second[static_cast<size_t>(s.axis)], value_type(s.type.scalar)));
}

void TaskEmitter::emit(const ir::LoopLinearIndexStmt& s) {
  auto it = loop_linear_.find(s.loop());
  if (it == loop_linear_.end()) unsupported(s, "its loop does not enclose it");
  set(s, b_.CreateTrunc(it->second, value_type(s.type.scalar)));
}

// Each iteration (a `continue` starts one too) counts one step; past the budget the loop is left.
void TaskEmitter::emit(const ir::WhileStmt& s) {
  llvm::BasicBlock* head = new_block("while.head");
  llvm::BasicBlock* body = new_block("while.body");
  llvm::BasicBlock* exit = new_block("while.exit");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  b_.CreateCondBr(count_steps(const_i64(1), s), exit, body, unlikely());
  b_.SetInsertPoint(body);
  continue_targets_.push_back(head);
  while_exits_.push_back(exit);
  emit_block(*s.body);
  while_exits_.pop_back();
  continue_targets_.pop_back();
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
}

void TaskEmitter::emit(const ir::WhileControlStmt& s) {
  if (while_exits_.empty()) unsupported(s, "no enclosing while");
  llvm::Value* go = nullptr;
  if (s.has_mask()) {
    llvm::Value* mask = value(s.mask());
    ir::ScalarKind mk = s.mask()->type.scalar;
    if (!ir::is_integral(mk)) unsupported(s, "a mask of a non-integer type");
    llvm::Value* m = from_memory(b_.CreateLoad(memory_type(mk), mask), mk);
    llvm::Value* c = value(s.cond());
    if (c->getType()->isFloatingPointTy()) c = b_.CreateZExt(truthy(s.cond()), m->getType());
    c = b_.CreateZExtOrTrunc(c, m->getType());
    llvm::Value* m2 = b_.CreateAnd(m, c);
    b_.CreateStore(to_memory(m2, mk), mask);
    go = b_.CreateICmpNE(m2, llvm::ConstantInt::get(m2->getType(), 0));
  } else {
    go = truthy(s.cond());
  }
  llvm::BasicBlock* cont = new_block("while.cont");
  b_.CreateCondBr(go, cont, while_exits_.back());
  b_.SetInsertPoint(cont);
}

void TaskEmitter::emit(const ir::ContinueStmt& s) {
  if (continue_targets_.empty()) unsupported(s, "no enclosing loop");
  b_.CreateBr(continue_targets_.back());
  b_.SetInsertPoint(new_block("after.continue"));
}

}  // namespace pb::codegen::llvmgen::detail
