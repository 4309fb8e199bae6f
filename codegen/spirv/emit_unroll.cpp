// Unrolled grid-stride steps. A GPU streams a loop that only loads and stores faster when each
// invocation has several loads in flight: one step of the loop then runs `unroll` iterations t,
// t + stride, ... (coalesced across invocations), statement by statement across them, so every
// load of the step comes before its first store. That order differs from the interpreter's only
// where a store of one iteration could reach what a load of a later one reads; a loop qualifies
// only when no buffer it stores to is one it loads from, its body is straight-line code of
// values, addresses, loads and stores, and nothing in it crosses tasks (docs/performance.md has
// the figures).
#include "codegen/spirv/task_emitter.h"
#include "ir/statements.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

uint32_t TaskEmitter::unroll_factor() const {
  if (o_.unroll <= 1 || !task_.stacks.empty()) return 1;
  if (const ir::OffloadedStmt* off = task_.offloaded; off && (off->tls_prologue || off->tls_epilogue)) return 1;
  std::set<uint32_t> loaded, stored;  // bindings
  auto binding_of = [&](const ir::Stmt* ptr) -> std::optional<uint32_t> {
    if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(ptr)) return res_.field_binding.at(g->field);
    if (const auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(ptr))
      return res_.ndarray_binding.at({ir::dyn_cast<ir::ArgLoadStmt>(e->base())->arg_index, ndarray_array(*e)});
    return std::nullopt;
  };
  for (const ir::Stmt* s : loop_body(task_)) {
    if (plan_.spilled.count(s) || !s->blocks().empty()) return 1;
    if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(s)) {
      if (!res_.sparse.empty() && res_.sparse.field_space(k_, g->field) >= 0) return 1;  // activation atomics
    } else if (const auto* l = ir::dyn_cast<ir::GlobalLoadStmt>(s)) {
      auto b = binding_of(l->src());
      if (!b) return 1;
      loaded.insert(*b);
    } else if (const auto* st = ir::dyn_cast<ir::GlobalStoreStmt>(s)) {
      auto b = binding_of(st->dest());
      if (!b) return 1;
      stored.insert(*b);
    } else if (!ir::isa<ir::ConstStmt>(s) && !ir::isa<ir::LoopIndexStmt>(s) && !ir::isa<ir::LoopLinearIndexStmt>(s) &&
               !ir::isa<ir::BinaryOpStmt>(s) && !ir::isa<ir::UnaryOpStmt>(s) && !ir::isa<ir::TernaryOpStmt>(s) &&
               !ir::isa<ir::ExternalPtrStmt>(s) && !ir::isa<ir::ArgLoadStmt>(s)) {
      return 1;
    }
  }
  for (uint32_t b : stored)
    if (loaded.count(b)) return 1;
  return o_.unroll;
}

// The body of one step: iteration k of the step is t + k * stride, valid while below `count`
// (and not wrapped past 2^32); an invalid one computes with iteration t's index and skips its
// stores. Each iteration keeps its own values and places.
void TaskEmitter::emit_unrolled_step(const ir::Stmt& loop, const UnrolledRange& r, uint32_t unroll) {
  struct Copy {
    std::unordered_map<const ir::Stmt*, Id> values;
    std::unordered_map<const ir::Stmt*, Place> places;
    Id valid = 0;  // 0: always (the step's first iteration)
    Id index = 0;
  };
  std::vector<Copy> copies(unroll);
  for (uint32_t k = 0; k < unroll; ++k) {
    Copy& c = copies[k];
    Id it = r.t;
    if (k > 0) {
      Id tk = b_.op(spv::OpIAdd, t_u32(), {r.t, b_.op(spv::OpIMul, t_u32(), {r.stride, c_u32(k)})});
      c.valid = b_.op(
          spv::OpLogicalAnd, t_bool(),
          {b_.op(spv::OpUGreaterThanEqual, t_bool(), {tk, r.t}), b_.op(spv::OpULessThan, t_bool(), {tk, r.count})});
      it = b_.op(spv::OpSelect, t_u32(), {c.valid, tk, r.t});
    }
    Id tb = int_convert(it, ScalarKind::u32, r.kind);
    Id vt = value_type(r.kind);
    c.index = r.reversed ? b_.op(spv::OpISub, vt, {b_.op(spv::OpISub, vt, {r.end, constant(r.kind, 1)}), tb})
                         : b_.op(spv::OpIAdd, vt, {r.begin, tb});
    c.values = values_;
    c.places = places_;
  }
  for (const ir::Stmt* s : loop_body(task_))
    for (Copy& c : copies) {
      std::swap(values_, c.values);
      std::swap(places_, c.places);
      loop_indices_[&loop] = {{c.index, r.kind}};
      loop_linear_[&loop] = {c.index, r.kind};
      if (c.valid && ir::isa<ir::GlobalStoreStmt>(s))
        emit_if(c.valid, [&] { emit_stmt(*s); });
      else
        emit_stmt(*s);
      std::swap(values_, c.values);
      std::swap(places_, c.places);
    }
  end_segment();
}

}  // namespace pb::codegen::spirv::detail
