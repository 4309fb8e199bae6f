// Sparse SNodes on the CPU: which cells are active lives on the host (runtime/cpu/sparse_host.h,
// the interpreter's rules), and the task functions ask it through the kSparse* callbacks. Field
// data stays in the dense buffers over each space's full shape; a pointer through a cell that is
// not live is the call's ambient slot, which reads as 0 and drops what is written to it, as the
// interpreter's ambient element does (docs/backends.md, "Sparse SNodes").
#include <fmt/format.h>

#include "codegen/llvm/emitter.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen::detail {

bool TaskEmitter::listed_cell(const ir::GlobalPtrStmt& s) const {
  const TaskInfo& task = m_.info.tasks[index_];
  const ir::Field& field = m_.kernel.field(s.field);
  if (task.cell_space.empty() || field.space != task.cell_space) return false;
  auto shape = m_.shapes.fields.find(s.field);
  auto space = m_.shapes.spaces.find(task.cell_space);
  if (shape == m_.shapes.fields.end() || space == m_.shapes.spaces.end() || shape->second != space->second ||
      s.indices().size() != shape->second.size())
    return false;
  for (size_t d = 0; d < s.indices().size(); ++d) {
    const auto* li = ir::dyn_cast<ir::LoopIndexStmt>(s.indices()[d]);
    if (!li || li->loop() != task_.loop || li->axis != static_cast<int>(d)) return false;
  }
  if (deactivates_ < 0) {
    bool any = false;
    ir::walk(m_.kernel.root(), [&](const ir::Stmt& st) {
      if (const auto* op = ir::dyn_cast<ir::SNodeOpStmt>(&st); op && op->op == "deactivate") any = true;
    });
    deactivates_ = any ? 1 : 0;
  }
  return deactivates_ == 0;
}

bool TaskEmitter::sparse_field(ir::FieldId f) const {
  const ir::Field& field = m_.kernel.field(f);
  return !field.space.empty() && ir::in_sparse_tree(m_.kernel, field.space);
}

llvm::Value* TaskEmitter::host_call(const char* name, llvm::Type* result, const std::vector<llvm::Value*>& args) {
  std::vector<llvm::Type*> types;
  types.reserve(args.size());
  for (llvm::Value* a : args) types.push_back(a->getType());
  auto callee = m_.module.getOrInsertFunction(name, llvm::FunctionType::get(result, types, false));
  return b_.CreateCall(callee, args);
}

int TaskEmitter::sparse_site(SparseSite site) {
  m_.info.sparse_sites.push_back(std::move(site));
  return static_cast<int>(m_.info.sparse_sites.size() - 1);
}

llvm::Value* TaskEmitter::ambient() {
  if (!ambient_) {
    ambient_ = entry_alloca(b_.getInt64Ty(), "ambient");
    llvm::IRBuilder<>(entry_).CreateStore(const_i64(0), ambient_);
  }
  return ambient_;
}

llvm::Value* TaskEmitter::sparse_reach(const ir::Stmt& s, ir::FieldId f, llvm::Value* element, llvm::Value* offset,
                                       bool activate) {
  llvm::Value* live =
      host_call(kSparseReach, b_.getInt32Ty(),
                {ctx_word(kCtxSparse), b_.getInt32(static_cast<uint32_t>(f)), offset, b_.getInt32(activate ? 1 : 0)});
  ambient_ptrs_.insert(&s);
  return b_.CreateSelect(b_.CreateICmpNE(live, b_.getInt32(0)), element, ambient());
}

void TaskEmitter::zero_if_ambient(const ir::Stmt& s, const ir::Stmt* ptr) {
  if (!ambient_ptrs_.count(ptr)) return;
  llvm::Value* v = value(&s);
  llvm::Value* is_ambient = b_.CreateICmpEQ(value(ptr), ambient());
  set(s, b_.CreateSelect(is_ambient, llvm::Constant::getNullValue(v->getType()), v));
}

bool TaskEmitter::host_lookup(const ir::SNodeLookupStmt& s, llvm::Value* index) {
  const ir::IndexSpace* sp = m_.kernel.find_space(s.snode);
  if (!sp || !sp->declared || !sp->shape || (sp->parent.empty() && !ir::in_sparse_tree(m_.kernel, s.snode)))
    return false;
  // Cells per parent cell: the full shape less the parent's.
  ir::Shape own = *sp->shape;
  if (const ir::IndexSpace* up = sp->parent.empty() ? nullptr : m_.kernel.find_space(sp->parent)) {
    ir::Shape parent = ir::padded_parent_shape(up->shape.value_or(ir::Shape{}), own.size());
    for (size_t d = 0; d < own.size(); ++d) own[d] /= parent[d];
  }
  int64_t cells = 1;
  for (int64_t e : own) cells *= e;
  int code = error_site(
      s, fmt::format("cell out of bounds for SNode '{}' of {} cell(s) {}", s.snode, cells, ir::shape_to_string(own)),
      "check the linearized index against the SNode's shape (header or inputs)");
  llvm::Value* bad = b_.CreateICmpUGE(index, const_i64(cells));
  flag_if(bad, kFlagError, code);
  index = b_.CreateSelect(bad, const_i64(0), index);
  int site = sparse_site({&s, s.snode, s.activate, {}, ir::ScalarKind::unknown});
  set(s, host_call(kSparseLookup, b_.getInt64Ty(),
                   {ctx_word(kCtxSparse), b_.getInt32(static_cast<uint32_t>(site)), value(s.parent_ptr()), index}));
  return true;
}

void TaskEmitter::unravel_cell(const ir::Stmt& loop, llvm::Value* cell, const ir::Shape& shape) {
  std::vector<llvm::Value*> coords(shape.size());
  llvm::Value* rest = cell;
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = b_.CreateSRem(rest, const_i64(shape[d]));
    rest = b_.CreateSDiv(rest, const_i64(shape[d]));
  }
  loop_coords_[&loop] = coords;
  loop_linear_[&loop] = cell;
}

bool TaskEmitter::sparse_struct_for(const ir::StructForStmt& s, const ir::Shape& shape) {
  if (!ir::in_sparse_tree(m_.kernel, s.space)) return false;
  int site = sparse_site({&s, s.space, false, {}, ir::ScalarKind::unknown});
  llvm::Value* count_slot = entry_alloca(b_.getInt64Ty(), "cells.count");
  llvm::Value* list = host_call(kSparseCells, b_.getPtrTy(),
                                {ctx_word(kCtxSparse), b_.getInt32(static_cast<uint32_t>(site)), count_slot});
  llvm::Value* n = b_.CreateLoad(b_.getInt64Ty(), count_slot);
  llvm::Value* count = b_.CreateSelect(count_steps(n, s), const_i64(0), n);
  counted_loop(count, [&](llvm::Value* t) {
    unravel_cell(s, b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(b_.getInt64Ty(), list, t)), shape);
    emit_block(*s.body);
  });
  host_call(kSparseFreeCells, b_.getVoidTy(), {ctx_word(kCtxSparse), list});
  return true;
}

void TaskEmitter::emit(const ir::SNodeOpStmt& s) {
  SparseSite site{&s, s.snode, false, {}, s.type.is_value() ? s.type.scalar : ir::ScalarKind::unknown};
  auto n = static_cast<uint64_t>(std::max<size_t>(s.num_operands(), 1));
  llvm::Value* words = entry_alloca(llvm::ArrayType::get(b_.getInt64Ty(), n), "snode_op.words");
  for (size_t i = 0; i < s.num_operands(); ++i) {
    llvm::Value* v = value(s.operand(i));
    ir::ScalarKind k = s.operand(i)->type.scalar;
    if (v->getType()->isPointerTy() || s.operand(i)->type.pointer || k == ir::ScalarKind::unknown) {
      // A cell (an i64 from the access chain or a cell pointer) or an element's address.
      if (v->getType()->isPointerTy()) v = b_.CreatePtrToInt(v, b_.getInt64Ty());
      k = ir::ScalarKind::i64;
    } else {
      v = to_memory(v, k);
    }
    site.operand_kinds.push_back(k);
    b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), words, i));
  }
  ir::ScalarKind result = site.result;
  int index = sparse_site(std::move(site));
  host_call(kSparseOp, b_.getVoidTy(), {ctx_word(kCtxSparse), b_.getInt32(static_cast<uint32_t>(index)), words});
  if (result != ir::ScalarKind::unknown) set(s, from_memory(b_.CreateLoad(memory_type(result), words), result));
}

void TaskEmitter::emit(const ir::SNodePtrStmt& s) {
  std::optional<ir::Shape> cells = ir::cell_pointer_shape(m_.kernel, s.snode);
  if (!cells)
    throw UserError(fmt::format("the SNode '{}' is not declared (at `{}`)", s.snode, ir::print_stmt(s, m_.kernel)),
                    ir::kDeclareSNodeRemedy);
  const ir::Shape& shape = *cells;
  if (s.indices().size() != shape.size())
    throw UserError(fmt::format("the cells of SNode '{}' have {} coordinate(s), but `{}` gives {}", s.snode,
                                shape.size(), ir::print_stmt(s, m_.kernel), s.indices().size()),
                    "give one index per dimension of the SNode's full shape (of its parent's, for a dynamic SNode)");
  int code =
      error_site(s, fmt::format("index out of bounds for SNode '{}' of shape {}", s.snode, ir::shape_to_string(shape)),
                 "check the index against the SNode's shape in the header");
  set(s, checked_offset(s.indices(), shape, code));
}

}  // namespace pb::codegen::llvmgen::detail
