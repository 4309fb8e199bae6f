// Locals, field and ndarray addresses, loads, stores and atomics. A Place says where a pointer
// statement points and how its values are stored; load/store convert on the way.
#include <fmt/format.h>

#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"
#include "ir/printer.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

namespace {

ir::BinaryOp binary_of(ir::AtomicOp op) {
  switch (op) {
    case ir::AtomicOp::add:
      return ir::BinaryOp::add;
    case ir::AtomicOp::sub:
      return ir::BinaryOp::sub;
    case ir::AtomicOp::mul:
      return ir::BinaryOp::mul;
    case ir::AtomicOp::min:
      return ir::BinaryOp::min;
    case ir::AtomicOp::max:
      return ir::BinaryOp::max;
    case ir::AtomicOp::bit_and:
      return ir::BinaryOp::bit_and;
    case ir::AtomicOp::bit_or:
      return ir::BinaryOp::bit_or;
    case ir::AtomicOp::bit_xor:
      return ir::BinaryOp::bit_xor;
  }
  return ir::BinaryOp::add;
}

}  // namespace

Place TaskEmitter::place_of(const ir::Stmt* pointer) const {
  auto it = places_.find(pointer);
  PB_ASSERT(it != places_.end(),
            fmt::format("SPIR-V address of ${} used before it was emitted", pointer ? pointer->id : -1));
  return it->second;
}

// ---- conversions between values and their stored form ----

Id TaskEmitter::load(const Place& p) {
  Id v = value_form(p, b_.op(spv::OpLoad, p.storage_type, {p.pointer}));
  return p.live ? b_.op(spv::OpSelect, value_type(p.kind), {p.live, v, constant(p.kind, 0)}) : v;
}

Id TaskEmitter::value_form(const Place& p, Id raw) {
  Id vt = value_type(p.kind);
  if (p.storage_type == vt) return raw;
  if (p.kind == ScalarKind::u1) return b_.op(spv::OpINotEqual, t_bool(), {raw, b_.constant(p.storage_type, 0)});
  return b_.op(spv::OpBitcast, vt, {raw});
}

Id TaskEmitter::stored_form(const Place& p, Id v) {
  if (p.storage_type == value_type(p.kind)) return v;
  if (p.kind == ScalarKind::u1)
    return b_.op(spv::OpSelect, p.storage_type, {v, b_.constant(p.storage_type, 1), b_.constant(p.storage_type, 0)});
  return b_.op(spv::OpBitcast, p.storage_type, {v});
}

void TaskEmitter::store(const Place& p, Id value) { b_.op_void(spv::OpStore, {p.pointer, stored_form(p, value)}); }

// ---- locals ----

Place TaskEmitter::function_place(const ir::Stmt& alloca) {
  ScalarKind k = alloca.type.scalar;
  Id vt = value_type(k);
  Place p{b_.function_variable(b_.type_pointer(spv::StorageClassFunction, vt)), k, vt, spv::StorageClassFunction};
  b_.set_name(p.pointer, fmt::format("local{}", alloca.id));
  return p;
}

void TaskEmitter::operator()(const ir::AllocaStmt& s) {
  ScalarKind k = s.type.scalar;
  Place p = plan_.shared_allocas.count(&s) ? temps_place(&s, k) : function_place(s);
  places_[&s] = p;
  store(p, constant(k, 0));  // zero each time the alloca executes
}

void TaskEmitter::operator()(const ir::LocalLoadStmt& s) { define(s, load(place_of(s.src()))); }
void TaskEmitter::operator()(const ir::LocalStoreStmt& s) { store(place_of(s.dest()), value(s.val())); }

// ---- fields and ndarrays ----

// Row-major element number: ((i0 * e1 + i1) * e2 + i2) ..., computed in u32 (no bounds check).
Id TaskEmitter::linear_index(const ir::Stmt&, std::span<const ir::Stmt* const> indices,
                             const std::vector<Id>& extents) {
  if (indices.empty()) return c_u32(0);
  Id lin = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    Id i = int_convert(value(indices[d]), indices[d]->type.scalar, ScalarKind::u32);
    lin = d == 0 ? i : b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpIMul, t_u32(), {lin, extents[d]}), i});
  }
  return lin;
}

void TaskEmitter::operator()(const ir::GlobalPtrStmt& s) {
  if (sparse_global_ptr(s)) return;
  const ir::Field& f = k_.field(s.field);
  std::vector<Id> extents(s.indices().size(), 0);
  for (size_t d = o_.run_time_checks ? 0 : 1; d < extents.size(); ++d)
    extents[d] = f.shape ? c_u32(static_cast<uint32_t>((*f.shape)[d]))
                         : push_constant(res_.field_extent_member.at({s.field, static_cast<int>(d)}));
  std::string what = fmt::format("field '{}' of shape {}", f.name,
                                 f.shape ? ir::shape_to_string(*f.shape) : std::string("given by the inputs"));
  Id index =
      o_.run_time_checks ? checked_linear_index(s, s.indices(), extents, what) : linear_index(s, s.indices(), extents);
  places_[&s] = buffer_element(res_.field_binding.at(s.field), index, f.dtype);
}

void TaskEmitter::operator()(const ir::ExternalPtrStmt& s) {
  int arg = ir::dyn_cast<ir::ArgLoadStmt>(s.base())->arg_index;
  std::vector<Id> extents(s.indices().size(), 0);
  for (size_t d = o_.run_time_checks ? 0 : 1; d < extents.size(); ++d)
    extents[d] = push_constant(res_.ndarray_extent_member.at({arg, static_cast<int>(d)}));
  Id index = o_.run_time_checks ? checked_linear_index(s, s.indices(), extents, fmt::format("ndarray argument {}", arg))
                                : linear_index(s, s.indices(), extents);
  places_[&s] = buffer_element(res_.ndarray_binding.at({arg, ndarray_array(s)}), index, s.type.scalar);
}

// linear_index with every index checked against its axis' extent: an index outside raises the
// problem and the access goes to element 0 instead.
Id TaskEmitter::checked_linear_index(const ir::Stmt& s, std::span<const ir::Stmt* const> indices,
                                     const std::vector<Id>& extents, const std::string& what) {
  if (indices.empty()) return c_u32(0);
  Id bad = b_.const_bool(false), lin = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    Id i = int_convert(value(indices[d]), indices[d]->type.scalar, ScalarKind::u32);
    bad = b_.op(spv::OpLogicalOr, t_bool(), {bad, b_.op(spv::OpUGreaterThanEqual, t_bool(), {i, extents[d]})});
    lin = d == 0 ? i : b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpIMul, t_u32(), {lin, extents[d]}), i});
  }
  raise_problem(bad, problem_site(s, fmt::format("index out of bounds for {}", what),
                                  "check the loop bounds and index arithmetic against the shape"));
  return b_.op(spv::OpSelect, t_u32(), {bad, c_u32(0), lin});
}

void TaskEmitter::operator()(const ir::GlobalLoadStmt& s) { define(s, load(place_of(s.src()))); }
void TaskEmitter::operator()(const ir::GlobalStoreStmt& s) { store(place_of(s.dest()), value(s.val())); }

// ---- atomics ----

void TaskEmitter::operator()(const ir::AtomicOpStmt& s) {
  const Place p = place_of(s.dest());
  Id old = atomic(p, s.op, value(s.val()));
  define(s, p.live ? b_.op(spv::OpSelect, value_type(p.kind), {p.live, old, constant(p.kind, 0)}) : old);
}

// Returns the old value. Function-scope cells need no atomicity; integer buffers use the native
// instruction; f32 add/sub use SPV_EXT_shader_atomic_float_add when enabled; everything else is
// a compare-exchange loop on the cell's integer storage.
Id TaskEmitter::atomic(const Place& p, ir::AtomicOp op, Id v) {
  ScalarKind k = p.kind;
  ir::BinaryOp bop = binary_of(op);
  if (p.storage == spv::StorageClassFunction) {
    Id old = load(p);
    Id next = binary(bop, old, v, k, k, k);
    store(p, k == ScalarKind::f16 ? round_half(next) : next);
    return old;
  }
  Id scope = c_u32(spv::ScopeDevice), relaxed = c_u32(spv::MemorySemanticsMaskNone);
  // Integer cells stored as same-width words (temps) take the native instruction on the bits.
  bool native_int = !ir::is_float(k) && k != ScalarKind::u1 && op != ir::AtomicOp::mul &&
                    (p.storage_type == value_type(k) || ir::bit_width(k) == 32);
  if (native_int) {
    bool sign = ir::is_signed(k);
    spv::Op o = spv::OpAtomicIAdd;
    switch (op) {
      case ir::AtomicOp::add:
        o = spv::OpAtomicIAdd;
        break;
      case ir::AtomicOp::sub:
        o = spv::OpAtomicISub;
        break;
      case ir::AtomicOp::min:
        o = sign ? spv::OpAtomicSMin : spv::OpAtomicUMin;
        break;
      case ir::AtomicOp::max:
        o = sign ? spv::OpAtomicSMax : spv::OpAtomicUMax;
        break;
      case ir::AtomicOp::bit_and:
        o = spv::OpAtomicAnd;
        break;
      case ir::AtomicOp::bit_or:
        o = spv::OpAtomicOr;
        break;
      case ir::AtomicOp::bit_xor:
        o = spv::OpAtomicXor;
        break;
      case ir::AtomicOp::mul:
        break;
    }
    Id operand = p.storage_type == value_type(k) ? v : b_.op(spv::OpBitcast, p.storage_type, {v});
    Id old = b_.op(o, p.storage_type, {p.pointer, scope, relaxed, operand});
    return p.storage_type == value_type(k) ? old : b_.op(spv::OpBitcast, value_type(k), {old});
  }
  bool float_add = op == ir::AtomicOp::add || op == ir::AtomicOp::sub;
  if (k == ScalarKind::f32 && o_.atomic_float_add && float_add && p.storage_type == value_type(k)) {
    b_.add_extension("SPV_EXT_shader_atomic_float_add");
    b_.add_capability(spv::CapabilityAtomicFloat32AddEXT);
    Id delta = op == ir::AtomicOp::sub ? b_.op(spv::OpFNegate, value_type(k), {v}) : v;
    return b_.op(spv::OpAtomicFAddEXT, value_type(k), {p.pointer, scope, relaxed, delta});
  }
  PB_ASSERT(p.storage_type != value_type(k) || !ir::is_float(k),
            "float compare-exchange atomic on a buffer that was not declared as words");
  auto [header, check, body, cont, merge] = b_.begin_loop(false);
  Id expected = b_.op(spv::OpAtomicLoad, p.storage_type, {p.pointer, scope, relaxed});
  Id old = expected;
  if (p.storage_type != value_type(k))
    old = k == ScalarKind::u1 ? b_.op(spv::OpINotEqual, t_bool(), {expected, b_.constant(p.storage_type, 0)})
                              : b_.op(spv::OpBitcast, value_type(k), {expected});
  Id next = binary(bop, old, v, k, k, k);
  Id desired = stored_form(p, k == ScalarKind::f16 ? round_half(next) : next);
  Id got = b_.op(spv::OpAtomicCompareExchange, p.storage_type, {p.pointer, scope, relaxed, relaxed, desired, expected});
  Id done = b_.op(spv::OpIEqual, t_bool(), {got, expected});
  b_.op_void(spv::OpBranchConditional, {done, merge, cont});
  b_.begin_block(cont);
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
  return old;
}

}  // namespace pb::codegen::spirv::detail
