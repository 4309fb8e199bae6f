// Parallel tasks' atomic rewrites: per-chunk reductions into 0-d fields, and plain
// read-modify-writes at the iteration's own cell (docs/backends.md).
#include "codegen/llvm/emitter.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen::detail {

void TaskEmitter::plan_reductions() {
  std::unordered_map<ir::FieldId, bool> ok;  // field -> every access is a reducible atomic
  bool chain = false;
  for (const ir::Block* b : task_.loop->blocks()) {
    if (!b) continue;
    ir::walk(*b, [&](ir::Stmt& s) {
      if (ir::isa<ir::GetChStmt>(&s)) chain = true;
      const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(&s);
      if (!p) return;
      ir::ScalarKind fk = m_.kernel.field(p->field).dtype;
      // Not f16: a per-chunk sum reassociates the additions, and in f16 (a 2^-10 step) that moves
      // the result by more than the sequential atomics' tolerance (difftest seed 45069: 32 adds, 3e-3).
      bool reducible =
          p->indices().empty() && fk == p->type.scalar && fk != ir::ScalarKind::u1 && fk != ir::ScalarKind::f16;
      for (const auto& use : p->uses()) {
        const auto* a = ir::dyn_cast<ir::AtomicOpStmt>(use.user());
        reducible = reducible && a && use.slot() == 0 && !a->has_users() &&
                    (a->op == ir::AtomicOp::add || a->op == ir::AtomicOp::sub) &&
                    a->val()->type.scalar == p->type.scalar;
      }
      auto [it, fresh] = ok.try_emplace(p->field, reducible);
      if (!fresh) it->second = it->second && reducible;
    });
  }
  if (chain) return;
  for (const ir::Stmt* imp : task_.imports)  // a pointer made outside the loop: some other access
    if (const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(imp)) ok[p->field] = false;
  for (const auto& [field, reducible] : ok) {
    if (!reducible) continue;
    reductions_[field] = {field, m_.kernel.field(field).dtype, nullptr};
  }
  for (const ir::Block* b : task_.loop->blocks())
    if (b)
      ir::walk(*b, [&](ir::Stmt& s) {
        auto* a = ir::dyn_cast<ir::AtomicOpStmt>(&s);
        if (!a) return;
        const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(a->dest());
        if (p && reductions_.count(p->field)) reduced_atomics_[a] = p->field;
      });
}

void TaskEmitter::plan_own_cells() {
  const ir::Stmt* loop = task_.loop;
  size_t rank = task_.kind == TaskKind::range_for ? 1 : 0;
  if (task_.kind == TaskKind::struct_for) {
    const auto* sf = ir::dyn_cast<ir::StructForStmt>(loop);
    auto it = m_.shapes.spaces.find(sf ? sf->space : ir::dyn_cast<ir::OffloadedStmt>(loop)->snode);
    if (it == m_.shapes.spaces.end()) return;
    rank = it->second.size();
  }
  bool chain = false;
  for (const ir::Block* b : loop->blocks()) {
    if (!b) continue;
    ir::walk(*b, [&](ir::Stmt& s) {
      if (ir::isa<ir::GetChStmt>(&s)) chain = true;
      const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(&s);
      if (!p) return;
      bool own = p->indices().size() == rank && rank > 0;
      for (size_t d = 0; own && d < rank; ++d) {
        const auto* li = ir::dyn_cast<ir::LoopIndexStmt>(p->indices()[d]);
        own = li && li->loop() == loop && li->axis == static_cast<int>(d);
      }
      if (own && task_.kind == TaskKind::struct_for) {  // the field's shape must be the space's
        auto it = m_.shapes.fields.find(p->field);
        const auto* sf = ir::dyn_cast<ir::StructForStmt>(loop);
        own = it != m_.shapes.fields.end() &&
              it->second == m_.shapes.spaces.at(sf ? sf->space : ir::dyn_cast<ir::OffloadedStmt>(loop)->snode);
      }
      auto [it, fresh] = own_cell_fields_.try_emplace(p->field, own);
      if (!fresh) it->second = it->second && own;
    });
  }
  for (const ir::Stmt* imp : task_.imports)
    if (const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(imp)) own_cell_fields_[p->field] = false;
  if (chain) own_cell_fields_.clear();
}

void TaskEmitter::begin_reductions() {
  for (auto& [field, r] : reductions_) {
    r.acc = entry_alloca(value_type(r.kind), "reduction");
    b_.CreateStore(llvm::Constant::getNullValue(value_type(r.kind)), r.acc);
  }
}

void TaskEmitter::end_reductions() {
  for (auto& [field, r] : reductions_) {
    llvm::Value* fields = ctx_word(kCtxFields);
    llvm::Value* base = b_.CreateLoad(
        b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), fields, static_cast<uint64_t>(field)));
    llvm::Value* total = b_.CreateLoad(value_type(r.kind), r.acc);
    auto op = ir::is_float(r.kind) ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    b_.CreateAtomicRMW(op, base, total, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
  }
}

}  // namespace pb::codegen::llvmgen::detail
