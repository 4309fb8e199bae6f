// Vector steps. A GPU moves memory fastest with 16-byte loads and stores; scalar 4-byte accesses
// of consecutive invocations reach about two thirds of that. A loop that qualifies for unrolled
// steps (emit_unroll.cpp: straight-line, no buffer both loaded and stored) and reaches some 32-bit
// buffer at element `i`, its own index, runs kVectorLanes consecutive iterations per step
// instead: invocation t's step q covers iterations 4q .. 4q + 3 of the range. When the range's
// begin is a multiple of 4 and the step is full, each such buffer is one 4-vector load or store
// through a second view of its binding; otherwise (the tail, an unaligned begin) the step runs
// its lanes as scalar unrolled iterations. The lanes' order is that of unrolled steps: statement by
// statement across the lanes, every load before the first store (docs/performance.md has the
// figures).
#include <fmt/format.h>

#include "codegen/spirv/task_emitter.h"
#include "ir/statements.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

namespace {

// The field or ndarray pointer `s` when it is element `i` of a rank-1 space, `i` the loop's own
// index; else null.
const ir::Stmt* indexed_by_loop(const ir::Stmt& s, const ir::Stmt& loop) {
  std::span<const ir::Stmt* const> indices;
  if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(&s))
    indices = g->indices();
  else if (const auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(&s))
    indices = e->indices();
  else
    return nullptr;
  if (indices.size() != 1) return nullptr;
  const auto* li = ir::dyn_cast<ir::LoopIndexStmt>(indices[0]);
  return li && li->loop() == &loop && li->axis == 0 ? &s : nullptr;
}

}  // namespace

std::map<const ir::Stmt*, uint32_t> TaskEmitter::vector_pointers(const ir::Stmt& loop) const {
  std::map<const ir::Stmt*, uint32_t> out;
  const auto* rf = ir::dyn_cast<ir::RangeForStmt>(&loop);
  if (o_.vector != VectorSteps::on || (rf && rf->reversed) || !unrollable()) return out;
  for (const ir::Stmt* s : loop_body(task_)) {
    std::optional<uint32_t> binding = indexed_by_loop(*s, loop) ? pointer_binding(s) : std::nullopt;
    if (binding && ir::bit_width(stored_kind(*binding)) == 32) out[s] = *binding;
  }
  // Each such pointer is only a load's source or a store's destination.
  for (const ir::Stmt* s : loop_body(task_))
    for (const ir::Stmt* op : s->operands()) {
      if (!out.count(op)) continue;
      const auto* l = ir::dyn_cast<ir::GlobalLoadStmt>(s);
      const auto* st = ir::dyn_cast<ir::GlobalStoreStmt>(s);
      if (!(l && l->src() == op) && !(st && st->dest() == op && st->val() != op)) out.erase(op);
    }
  return out;
}

// A second variable on `binding`: a runtime array of 4-vectors of its 32-bit storage type.
Id TaskEmitter::vector_view(uint32_t binding, ScalarKind element) {
  Id& var = vector_views_[binding];
  if (var) return var;
  const Binding& info = res_.bindings.at(binding);
  Id vec = b_.type_vector(storage_type(element), kVectorLanes);
  Id block = b_.type_struct(std::vector<Id>{b_.type_runtime_array(vec, 4 * kVectorLanes)});
  b_.decorate(block, spv::DecorationBlock);
  b_.decorate_member(block, 0, spv::DecorationOffset, {0});
  var = b_.global_variable(b_.type_pointer(spv::StorageClassStorageBuffer, block), spv::StorageClassStorageBuffer);
  b_.decorate(var, spv::DecorationDescriptorSet, {info.set});
  b_.decorate(var, spv::DecorationBinding, {info.binding});
  std::string name;
  for (char c : info.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  b_.set_name(block, name + "_vec4_buffer");
  b_.set_name(var, name + "_vec4");
  return var;
}

// Step t of the loop, over iterations 4t .. 4t + 3 (r.t is the step, r.stride unused).
void TaskEmitter::emit_vector_step(const ir::Stmt& loop, const UnrolledRange& r,
                                   const std::map<const ir::Stmt*, uint32_t>& vec) {
  Id first = b_.op(spv::OpShiftLeftLogical, t_u32(), {r.t, c_u32(2)});
  Id begin = int_convert(r.begin, r.kind, ScalarKind::u32);
  Id full =
      b_.op(spv::OpUGreaterThanEqual, t_bool(), {b_.op(spv::OpISub, t_u32(), {r.count, first}), c_u32(kVectorLanes)});
  Id aligned =
      b_.op(spv::OpIEqual, t_bool(), {b_.op(spv::OpBitwiseAnd, t_u32(), {begin, c_u32(kVectorLanes - 1)}), c_u32(0)});
  Id fast = b_.op(spv::OpLogicalAnd, t_bool(), {full, aligned});
  Id vector_label = b_.new_label(), scalar_label = b_.new_label(), merge = b_.new_label();
  b_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
  b_.op_void(spv::OpBranchConditional, {fast, vector_label, scalar_label});

  b_.begin_block(vector_label);
  UnrolledRange lanes_range = r;
  lanes_range.t = first;
  lanes_range.stride = c_u32(1);
  std::vector<Lane> lanes = step_lanes(lanes_range, kVectorLanes, false);
  // Element 4t of a buffer reached at the loop's index is vector (begin + 4t) / 4.
  Id element = b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpShiftRightLogical, t_u32(), {begin, c_u32(2)}), r.t});
  std::unordered_map<const ir::Stmt*, std::pair<Id, Place>> vectors;  // pointer -> its vector's pointer, its Place
  for (const ir::Stmt* s : loop_body(task_)) {
    CurrentStmt scope(*this, s);
    if (vec.count(s)) {
      uint32_t binding = vec.at(s);
      ScalarKind kind = s->type.scalar;
      ScalarKind stored = stored_kind(binding);
      Place scalar{0, kind, storage_type(stored), spv::StorageClassStorageBuffer};  // how each lane's value is stored
      Id vt = b_.type_vector(scalar.storage_type, kVectorLanes);
      Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassStorageBuffer, vt),
                     {vector_view(binding, stored), c_u32(0), element});
      vectors[s] = {ptr, scalar};
      continue;
    }
    if (const auto* l = ir::dyn_cast<ir::GlobalLoadStmt>(s); l && vec.count(l->src())) {
      const auto& [ptr, place] = vectors.at(l->src());
      Id raw = b_.op(spv::OpLoad, b_.type_vector(place.storage_type, kVectorLanes), {ptr});
      for (uint32_t k = 0; k < kVectorLanes; ++k)
        lanes[k].values[s] = value_form(place, b_.op(spv::OpCompositeExtract, place.storage_type, {raw, k}));
      continue;
    }
    if (const auto* st = ir::dyn_cast<ir::GlobalStoreStmt>(s); st && vec.count(st->dest())) {
      const auto& [ptr, place] = vectors.at(st->dest());
      std::vector<Id> parts;
      for (uint32_t k = 0; k < kVectorLanes; ++k) {
        std::swap(values_, lanes[k].values);
        parts.push_back(stored_form(place, value(st->val())));
        std::swap(values_, lanes[k].values);
      }
      b_.op_void(spv::OpStore,
                 {ptr, b_.op(spv::OpCompositeConstruct, b_.type_vector(place.storage_type, kVectorLanes), parts)});
      continue;
    }
    for (Lane& lane : lanes) emit_in_lane(loop, lane, *s);
  }
  b_.op_void(spv::OpBranch, {merge});

  b_.begin_block(scalar_label);
  emit_unrolled_step(loop, lanes_range, kVectorLanes);
  b_.op_void(spv::OpBranch, {merge});
  b_.begin_block(merge);
}

}  // namespace pb::codegen::spirv::detail
