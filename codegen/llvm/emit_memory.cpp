// Locals and global memory: constants, arguments, allocas, local and global loads and stores,
// field and ndarray pointers (bounds-checked), selects, and the global-access check's calls.
#include <fmt/format.h>

#include "codegen/llvm/emitter.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"

namespace pb::codegen::llvmgen::detail {

void TaskEmitter::emit(const ir::ConstStmt& s) {
  const ir::Value& v = s.value;
  switch (v.kind()) {
    case ir::ScalarKind::f32:
      set(s, llvm::ConstantFP::get(b_.getFloatTy(), v.as_f32()));
      break;
    case ir::ScalarKind::f64:
      set(s, llvm::ConstantFP::get(b_.getDoubleTy(), v.as_f64()));
      break;
    case ir::ScalarKind::f16:  // exact: the value is a half
      set(s, llvm::ConstantFP::get(b_.getHalfTy(), v.as_f64()));
      break;
    default:
      set(s, llvm::ConstantInt::get(value_type(v.kind()), v.bits()));
  }
}

// The module is compiled for the launch's ndarray shapes: a shape is a constant.
void TaskEmitter::emit(const ir::ExternalTensorShapeAlongAxisStmt& s) {
  if (s.arg_id.size() != 1) unsupported(s, "the shape of an ndarray member of a struct argument is not compiled yet");
  auto it = m_.shapes.ndarrays.find(s.arg_id[0]);
  if (it == m_.shapes.ndarrays.end())
    throw UserError(fmt::format("argument {} is not an ndarray (at `{}`)", s.arg_id[0], ir::print_stmt(s, m_.kernel)),
                    "give an ndarray object for it in the inputs' \"args\"");
  if (s.axis < 0 || static_cast<size_t>(s.axis) >= it->second.size())
    throw UserError(fmt::format("ndarray argument {} has {} dimension(s), no axis {} (at `{}`)", s.arg_id[0],
                                it->second.size(), s.axis, ir::print_stmt(s, m_.kernel)),
                    "give the ndarray as many dimensions as the kernel reads");
  set(s, llvm::ConstantInt::get(value_type(s.type.scalar),
                                static_cast<uint64_t>(it->second[static_cast<size_t>(s.axis)])));
}

void TaskEmitter::emit(const ir::ArgLoadStmt& s) {
  if (s.type.pointer) {
    set(s, llvm::ConstantPointerNull::get(b_.getPtrTy()));
    return;
  }
  auto [it, fresh] = m_.info.scalar_args.try_emplace(s.arg_index, s.type.scalar);
  if (it->second != s.type.scalar) unsupported(s, "argument loaded with two different types");
  llvm::Value* p =
      b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ctx_word(kCtxArgs), static_cast<uint64_t>(s.arg_index));
  set(s, from_memory(b_.CreateLoad(memory_type(s.type.scalar), p), s.type.scalar));
}

void TaskEmitter::emit(const ir::AllocaStmt& s) {
  ir::ScalarKind k = s.type.scalar;
  llvm::Value* p = nullptr;
  if (m_.plan.shared_allocas.count(&s))
    p = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ctx_word(kCtxTemps), m_.plan.temp_word.at(&s));
  else if (auto it = values_.find(&s); it != values_.end())
    p = it->second;  // read after its part: the caller's (emit_part)
  else
    p = entry_alloca(memory_type(k), "local");
  b_.CreateStore(llvm::Constant::getNullValue(memory_type(k)), p);
  set(s, p);
}

void TaskEmitter::emit(const ir::LocalLoadStmt& s) {
  ir::ScalarKind k = s.type.scalar;
  set(s, from_memory(b_.CreateLoad(memory_type(k), value(s.src())), k));
}
void TaskEmitter::emit(const ir::LocalStoreStmt& s) {
  b_.CreateStore(to_memory(value(s.val()), s.val()->type.scalar), value(s.dest()));
}
void TaskEmitter::emit(const ir::GlobalLoadStmt& s) {
  ir::ScalarKind k = s.type.scalar;
  auto* load = b_.CreateLoad(memory_type(k), value(s.src()));
  if (s.is_volatile) load->setVolatile(true);
  set(s, from_memory(load, k));
  zero_if_ambient(s, s.src());
  check_access(s, s.src(), value(s.src()), false);
}
void TaskEmitter::emit(const ir::GlobalStoreStmt& s) {
  check_access(s, s.dest(), value(s.dest()), true);
  b_.CreateStore(to_memory(value(s.val()), s.val()->type.scalar), value(s.dest()));
}

void TaskEmitter::check_access(const ir::Stmt& s, const ir::Stmt* ptr, llvm::Value* address, bool write) {
  if (!m_.options.check_global_access || !ir::is_differentiable_ptr(m_.kernel, ptr)) return;
  m_.info.accesses.push_back({&s, write});
  auto callee = m_.module.getOrInsertFunction(
      kAccessCallback,
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt32Ty(), b_.getPtrTy(), b_.getInt64Ty()}, false));
  b_.CreateCall(callee, {ctx_word(kCtxHost), b_.getInt32(static_cast<uint32_t>(m_.info.accesses.size() - 1)), address,
                         iteration_ ? iteration_ : const_i64(-1)});
}

void TaskEmitter::emit(const ir::GlobalPtrStmt& s) {
  const ir::Field& f = m_.kernel.field(s.field);
  auto it = m_.shapes.fields.find(s.field);
  if (it == m_.shapes.fields.end())
    throw UserError(fmt::format("field '{}' has no data in the state (at `{}`)", f.name, ir::print_stmt(s, m_.kernel)),
                    "give the field a shape in the header or the inputs");
  const ir::Shape& shape = it->second;
  if (shape.size() != s.indices().size())
    unsupported(s, fmt::format("field '{}' has shape {} but is indexed with {} index(es)", f.name,
                               ir::shape_to_string(shape), s.indices().size()));
  int code =
      error_site(s, fmt::format("index out of bounds for field '{}' of shape {}", f.name, ir::shape_to_string(shape)),
                 "check the loop bounds and index arithmetic against the shape (header or inputs)");
  llvm::Value* fields = ctx_word(kCtxFields);
  llvm::IRBuilder<> eb(entry_);
  llvm::Value* base = eb.CreateLoad(
      eb.getPtrTy(), eb.CreateConstInBoundsGEP1_64(eb.getPtrTy(), fields, static_cast<uint64_t>(s.field)));
  llvm::Value* off = checked_offset(s.indices(), shape, code);
  llvm::Value* p = b_.CreateInBoundsGEP(memory_type(s.type.scalar), base, off);
  set(s, sparse_field(s.field) && !listed_cell(s) ? sparse_reach(s, s.field, p, off, s.activate) : p);
}

void TaskEmitter::emit(const ir::ExternalPtrStmt& s) {
  const auto* base = ir::dyn_cast<ir::ArgLoadStmt>(s.base());
  if (!base) unsupported(s, "the base is not an argload");
  int arg = base->arg_index;
  const auto& shapes = s.is_grad ? m_.shapes.ndarray_grads : s.is_dual ? m_.shapes.ndarray_duals : m_.shapes.ndarrays;
  auto it = shapes.find(arg);
  if (it == shapes.end())
    throw UserError(fmt::format("{}ndarray argument {} is not given (at `{}`)",
                                s.is_grad   ? "the gradient of "
                                : s.is_dual ? "the dual of "
                                            : "",
                                arg, ir::print_stmt(s, m_.kernel)),
                    "give an ndarray object (with \"grad\" where the kernel reads it) in the inputs' \"args\"");
  if (it->second.size() != s.indices().size())
    unsupported(s, fmt::format("ndarray argument {} has shape {} but is indexed with {} index(es)", arg,
                               ir::shape_to_string(it->second), s.indices().size()));
  int code = error_site(
      s, fmt::format("index out of bounds for ndarray argument {} of shape {}", arg, ir::shape_to_string(it->second)),
      "check the loop bounds and index arithmetic against the shape (header or inputs)");
  llvm::Value* arrays = ctx_word(s.is_grad ? kCtxNdarrayGrads : s.is_dual ? kCtxNdarrayDuals : kCtxNdarrays);
  llvm::IRBuilder<> eb(entry_);
  llvm::Value* p =
      eb.CreateLoad(eb.getPtrTy(), eb.CreateConstInBoundsGEP1_64(eb.getPtrTy(), arrays, static_cast<uint64_t>(arg)));
  llvm::Value* off = checked_offset(s.indices(), it->second, code);
  set(s, b_.CreateInBoundsGEP(memory_type(s.type.scalar), p, off));
}

void TaskEmitter::emit(const ir::TernaryOpStmt& s) {
  set(s, b_.CreateSelect(truthy(s.cond()), value(s.a()), value(s.b())));
}

}  // namespace pb::codegen::llvmgen::detail
