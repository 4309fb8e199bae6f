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

std::optional<uint32_t> TaskEmitter::pointer_binding(const ir::Stmt* ptr) const {
  if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(ptr)) return res_.field_binding.at(g->field);
  if (const auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(ptr))
    return res_.ndarray_binding.at({ir::dyn_cast<ir::ArgLoadStmt>(e->base())->arg_index, ndarray_array(*e)});
  return std::nullopt;
}

uint32_t TaskEmitter::unroll_factor() const { return o_.unroll > 1 && unrollable() ? o_.unroll : 1; }

bool TaskEmitter::unrollable() const {
  if (!task_.stacks.empty()) return false;
  if (const ir::OffloadedStmt* off = task_.offloaded; off && (off->tls_prologue || off->tls_epilogue)) return false;
  std::set<uint32_t> loaded, stored;  // bindings
  for (const ir::Stmt* s : loop_body(task_)) {
    if (plan_.spilled.count(s) || !s->blocks().empty()) return false;
    if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(s)) {
      if (!res_.sparse.empty() && res_.sparse.field_space(k_, g->field) >= 0) return false;  // activation atomics
    } else if (const auto* l = ir::dyn_cast<ir::GlobalLoadStmt>(s)) {
      auto b = pointer_binding(l->src());
      if (!b) return false;
      loaded.insert(*b);
    } else if (const auto* st = ir::dyn_cast<ir::GlobalStoreStmt>(s)) {
      auto b = pointer_binding(st->dest());
      if (!b) return false;
      stored.insert(*b);
    } else if (!ir::isa<ir::ConstStmt>(s) && !ir::isa<ir::LoopIndexStmt>(s) && !ir::isa<ir::LoopLinearIndexStmt>(s) &&
               !ir::isa<ir::BinaryOpStmt>(s) && !ir::isa<ir::UnaryOpStmt>(s) && !ir::isa<ir::TernaryOpStmt>(s) &&
               !ir::isa<ir::ExternalPtrStmt>(s) && !ir::isa<ir::ArgLoadStmt>(s)) {
      return false;
    }
  }
  for (uint32_t b : stored)
    if (loaded.count(b)) return false;
  return true;
}

// The lanes of one step: lane k runs iteration t + k * stride, valid while below `count` (and not
// wrapped past 2^32) when `checked`; an invalid one computes with iteration t's index and skips
// its stores. Each lane keeps its own values and places.
std::vector<TaskEmitter::Lane> TaskEmitter::step_lanes(const UnrolledRange& r, uint32_t n, bool checked) {
  std::vector<Lane> lanes(n);
  for (uint32_t k = 0; k < n; ++k) {
    Lane& c = lanes[k];
    Id it = r.t;
    if (k > 0) {
      Id tk = b_.op(spv::OpIAdd, t_u32(), {r.t, b_.op(spv::OpIMul, t_u32(), {r.stride, c_u32(k)})});
      if (checked) {
        c.valid = b_.op(
            spv::OpLogicalAnd, t_bool(),
            {b_.op(spv::OpUGreaterThanEqual, t_bool(), {tk, r.t}), b_.op(spv::OpULessThan, t_bool(), {tk, r.count})});
        it = b_.op(spv::OpSelect, t_u32(), {c.valid, tk, r.t});
      } else {
        it = tk;
      }
    }
    Id tb = int_convert(it, ScalarKind::u32, r.kind);
    Id vt = value_type(r.kind);
    c.index = r.reversed ? b_.op(spv::OpISub, vt, {b_.op(spv::OpISub, vt, {r.end, constant(r.kind, 1)}), tb})
                         : b_.op(spv::OpIAdd, vt, {r.begin, tb});
    c.kind = r.kind;
    c.values = values_;
    c.places = places_;
  }
  return lanes;
}

// Statement `s` of the loop's body in one lane.
void TaskEmitter::emit_in_lane(const ir::Stmt& loop, Lane& lane, const ir::Stmt& s) {
  std::swap(values_, lane.values);
  std::swap(places_, lane.places);
  loop_indices_[&loop] = {{lane.index, lane.kind}};
  loop_linear_[&loop] = {lane.index, lane.kind};
  if (lane.valid && ir::isa<ir::GlobalStoreStmt>(&s))
    emit_if(lane.valid, [&] { emit_stmt(s); });
  else
    emit_stmt(s);
  std::swap(values_, lane.values);
  std::swap(places_, lane.places);
}

// One step: the loop's body statement by statement across the lanes.
void TaskEmitter::emit_unrolled_step(const ir::Stmt& loop, const UnrolledRange& r, uint32_t unroll) {
  std::vector<Lane> lanes = step_lanes(r, unroll, true);
  for (const ir::Stmt* s : loop_body(task_))
    for (Lane& c : lanes) emit_in_lane(loop, c, *s);
  end_segment();
}

}  // namespace pb::codegen::spirv::detail
