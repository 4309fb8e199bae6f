// Sparse SNodes: the interpreter's rules (runtime/core/sparse.h) inline, over the activity
// binding (sparse_layout.h). A field's data stays in its dense buffer over its space's full
// shape; an access through a cell that is not live goes to the buffer's ambient slot, past the
// field's elements, and reads as 0. Activation is an atomic or (a dynamic space's length an atomic
// max), so parallel invocations may activate cells concurrently. What the interpreter reports as
// an error raises the problem flag with the statement's code (ProblemInfo).
#include <fmt/format.h>

#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"
#include "ir/printer.h"
#include "ir/snode.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

namespace {

int64_t product(const ir::Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

}  // namespace

template <class F>
void TaskEmitter::counted_loop(uint64_t n, F&& body) {
  Id var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_u32()));
  b_.op_void(spv::OpStore, {var, c_u32(0)});
  auto [header, check, loop_body, cont, merge] = b_.begin_loop(true);
  Id i = b_.op(spv::OpLoad, t_u32(), {var});
  b_.op_void(spv::OpBranchConditional,
             {b_.op(spv::OpULessThan, t_bool(), {i, c_u32(static_cast<uint32_t>(n))}), loop_body, merge});
  b_.begin_block(loop_body);
  body(i);
  b_.op_void(spv::OpBranch, {cont});
  b_.begin_block(cont);
  b_.op_void(spv::OpStore, {var, b_.op(spv::OpIAdd, t_u32(), {i, c_u32(1)})});
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
}

// ---- cell arithmetic (u32) ----

std::vector<Id> TaskEmitter::unravel(Id cell, const ir::Shape& shape) {
  std::vector<Id> c(shape.size());
  Id rest = cell;
  for (size_t d = shape.size(); d-- > 0;) {
    Id extent = c_u32(static_cast<uint32_t>(shape[d]));
    c[d] = d == 0 ? rest : b_.op(spv::OpUMod, t_u32(), {rest, extent});
    if (d > 0) rest = b_.op(spv::OpUDiv, t_u32(), {rest, extent});
  }
  return c;
}

Id TaskEmitter::ravel(const std::vector<Id>& coords, const ir::Shape& shape) {
  Id cell = c_u32(0);
  for (size_t d = 0; d < shape.size(); ++d) {
    Id scaled = d == 0 ? cell : b_.op(spv::OpIMul, t_u32(), {cell, c_u32(static_cast<uint32_t>(shape[d]))});
    cell = d < coords.size() ? (d == 0 ? coords[d] : b_.op(spv::OpIAdd, t_u32(), {scaled, coords[d]})) : scaled;
  }
  return cell;
}

Place TaskEmitter::activity_word(Id index) {
  PB_ASSERT(res_.activity, "a sparse access without the activity binding");
  return buffer_element(*res_.activity, index, ScalarKind::u32);
}

// One space alone: whether cell `coords` (over its full shape) is active, activating it when
// `act` holds. The atomic gives the old word, so an activation that did nothing reads the cell.
Id TaskEmitter::level_live(const SparseSpace& sp, const std::vector<Id>& coords, Id act) {
  if (!sp.sparse()) return b_.const_bool(true);
  Id scope = c_u32(spv::ScopeDevice), relaxed = c_u32(spv::MemorySemanticsMaskNone);
  if (sp.kind != ir::SNodeKind::dynamic) {
    Place w = activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(sp.word), ravel(coords, sp.full)}));
    if (!act) return b_.op(spv::OpINotEqual, t_bool(), {b_.op(spv::OpLoad, t_u32(), {w.pointer}), c_u32(0)});
    Id one = b_.op(spv::OpSelect, t_u32(), {act, c_u32(1), c_u32(0)});
    Id old = b_.op(spv::OpAtomicOr, t_u32(), {w.pointer, scope, relaxed, one});
    return b_.op(spv::OpINotEqual, t_bool(), {b_.op(spv::OpBitwiseOr, t_u32(), {old, one}), c_u32(0)});
  }
  std::vector<Id> local(coords.size()), up(coords.size());
  for (size_t d = 0; d < coords.size(); ++d) {
    Id own = c_u32(static_cast<uint32_t>(sp.own[d]));
    local[d] = sp.own[d] == 1 ? c_u32(0) : b_.op(spv::OpUMod, t_u32(), {coords[d], own});
    up[d] = sp.own[d] == 1 ? coords[d] : b_.op(spv::OpUDiv, t_u32(), {coords[d], own});
  }
  Id i = ravel(local, sp.own);
  Id parent = sp.parent < 0 ? c_u32(0) : ravel(up, sp.parent_full);
  Place len = activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(sp.word), parent}));
  Id n = 0;
  if (!act) {
    n = b_.op(spv::OpLoad, t_u32(), {len.pointer});
  } else {
    Id want = b_.op(spv::OpSelect, t_u32(), {act, b_.op(spv::OpIAdd, t_u32(), {i, c_u32(1)}), c_u32(0)});
    Id old = b_.op(spv::OpAtomicUMax, t_u32(), {len.pointer, scope, relaxed, want});
    n = glsl(GLSLstd450UMax, ScalarKind::u32, {old, want});
  }
  return b_.op(spv::OpULessThan, t_bool(), {i, n});
}

// Whether every sparse space from `s` up is live at `coords`; every level is activated when
// `act` holds, live or not, as the interpreter does.
Id TaskEmitter::reach_coords(int s, std::vector<Id> coords, Id act) {
  Id live = b_.const_bool(true);
  for (int l = s; l >= 0;) {
    const SparseSpace& sp = sparse_space(l);
    if (sp.sparse()) live = b_.op(spv::OpLogicalAnd, t_bool(), {level_live(sp, coords, act), live});
    if (sp.parent < 0) break;
    for (size_t d = 0; d < coords.size(); ++d)
      if (sp.own[d] != 1) coords[d] = b_.op(spv::OpUDiv, t_u32(), {coords[d], c_u32(static_cast<uint32_t>(sp.own[d]))});
    coords.resize(sparse_space(sp.parent).full.size());
    l = sp.parent;
  }
  return live;
}

// Cell `index` (of the space's own shape) under cell `parent` of its parent, over the full shape.
Id TaskEmitter::child_cell(int s, Id parent, Id index) {
  const SparseSpace& sp = sparse_space(s);
  if (sp.parent < 0)
    return b_.op(spv::OpIAdd, t_u32(),
                 {b_.op(spv::OpIMul, t_u32(), {parent, c_u32(static_cast<uint32_t>(product(sp.own)))}), index});
  std::vector<Id> c = unravel(parent, sp.parent_full), local = unravel(index, sp.own);
  for (size_t d = 0; d < c.size(); ++d)
    c[d] = b_.op(spv::OpIAdd, t_u32(),
                 {b_.op(spv::OpIMul, t_u32(), {c[d], c_u32(static_cast<uint32_t>(sp.own[d]))}), local[d]});
  return ravel(c, sp.full);
}

// Zeroes every field element under cell `cell` of `s` (a dynamic space: under its parent cell)
// and deactivates the sparse spaces' cells below it, as SparseCells::zero_under does.
void TaskEmitter::zero_under(int s, Id cell) {
  const SparseSpace& sp = sparse_space(s);
  bool dynamic = sp.kind == ir::SNodeKind::dynamic;
  ir::Shape anchor = dynamic ? (sp.parent < 0 ? ir::Shape(sp.full.size(), 1) : sp.parent_full) : sp.full;
  std::vector<Id> at = unravel(dynamic && sp.parent < 0 ? c_u32(0) : cell, anchor);
  for (size_t t = 0; t < res_.sparse.spaces.size(); ++t) {
    bool below = false;
    for (int l = static_cast<int>(t); l >= 0 && !below; l = sparse_space(l).parent) below = l == s;
    if (!below) continue;
    const SparseSpace& low = res_.sparse.spaces[t];
    ir::Shape a = ir::padded_parent_shape(anchor, low.full.size()), div(low.full.size());
    for (size_t d = 0; d < div.size(); ++d) div[d] = low.full[d] / a[d];
    bool clear_activity = static_cast<int>(t) != s && low.sparse();
    if (low.fields.empty() && !clear_activity) continue;
    counted_loop(static_cast<uint64_t>(product(div)), [&](Id e) {
      std::vector<Id> c = unravel(e, div);
      for (size_t d = 0; d < c.size() && d < at.size(); ++d)
        c[d] = b_.op(spv::OpIAdd, t_u32(),
                     {c[d], b_.op(spv::OpIMul, t_u32(), {at[d], c_u32(static_cast<uint32_t>(div[d]))})});
      Id element = ravel(c, low.full);
      for (ir::FieldId f : low.fields) {
        ScalarKind k = k_.field(f).dtype;
        store(buffer_element(res_.field_binding.at(f), element, k), constant(k, 0));
      }
      if (!clear_activity) return;
      Id entry = element;
      if (low.kind == ir::SNodeKind::dynamic) {
        for (size_t d = 0; d < c.size(); ++d)
          if (low.own[d] != 1) c[d] = b_.op(spv::OpUDiv, t_u32(), {c[d], c_u32(static_cast<uint32_t>(low.own[d]))});
        entry = low.parent < 0 ? c_u32(0) : ravel(c, low.parent_full);
      }
      b_.op_void(spv::OpStore,
                 {activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(low.word), entry})).pointer, c_u32(0)});
    });
  }
}

// ---- problems ----

uint32_t TaskEmitter::problem_site(const ir::Stmt& s, const std::string& message, const std::string& remedy) {
  std::string text = fmt::format("{} at `{}`", message, ir::print_stmt(s, k_));
  for (const ProblemInfo& p : out_.problems)
    if (p.message == text) return p.code;
  auto code = static_cast<uint32_t>(out_.problems.size() + 1);
  out_.problems.push_back({code, s.id, text, remedy});
  return code;
}

// The first problem wins: the flag word takes the code only while it is 0.
void TaskEmitter::raise_problem(Id cond, uint32_t code) {
  PB_ASSERT(res_.flags, "a sparse problem without the flags binding");
  auto raise = [&] {
    Place flag = buffer_element(*res_.flags, c_u32(kFlagProblem), ScalarKind::u32);
    Id scope = c_u32(spv::ScopeDevice), relaxed = c_u32(spv::MemorySemanticsMaskNone);
    b_.op(spv::OpAtomicCompareExchange, t_u32(), {flag.pointer, scope, relaxed, relaxed, c_u32(code), c_u32(0)});
  };
  if (cond)
    emit_if(cond, raise);
  else
    raise();
}

// Whether `cell` lies outside space `s` (its activity entries: a dynamic space's parent cells),
// which a chain through a cell of another SNode than the space's parent gives; raises the problem.
Id TaskEmitter::outside_space(const ir::Stmt& st, int s, Id cell, bool parent_cells) {
  const SparseSpace& sp = sparse_space(s);
  uint64_t n = parent_cells ? sp.words : static_cast<uint64_t>(product(sp.full));
  Id outside = b_.op(spv::OpUGreaterThanEqual, t_bool(), {cell, c_u32(static_cast<uint32_t>(n))});
  raise_problem(outside, problem_site(st,
                                      fmt::format("a cell is outside SNode '{}' ({} {})", sp.name, n,
                                                  parent_cells ? "parent cells" : "cells"),
                                      "the access chain reaches this SNode through a cell of another SNode than its "
                                      "parent, or past its shape: check the dump's lookups against the header"));
  return outside;
}

// ---- addresses ----

Place TaskEmitter::sparse_element(ir::FieldId f, Id element, Id live) {
  const ir::Field& field = k_.field(f);
  PB_ASSERT(field.shape, "a field under a sparse space has its space's shape");
  Id index = b_.op(spv::OpSelect, t_u32(), {live, element, c_u32(static_cast<uint32_t>(product(*field.shape)))});
  Place p = buffer_element(res_.field_binding.at(f), index, field.dtype);
  p.live = live;
  return p;
}

// The indices as u32 coordinates within `shape`; `bad` says one is outside it (and the raised
// problem), and the coordinates are then 0.
std::vector<Id> TaskEmitter::checked_coords(const ir::Stmt& s, std::span<const ir::Stmt* const> indices,
                                            const ir::Shape& shape, const std::string& what, Id* bad) {
  if (indices.size() != shape.size())
    unsupported(s,
                fmt::format("{} has {} axes, and the statement gives {} indices", what, shape.size(), indices.size()),
                "give one index per axis of the full shape");
  std::vector<Id> c(indices.size());
  *bad = b_.const_bool(false);
  for (size_t d = 0; d < c.size(); ++d) {
    c[d] = int_convert(value(indices[d]), indices[d]->type.scalar, ScalarKind::u32);
    Id out = b_.op(spv::OpUGreaterThanEqual, t_bool(), {c[d], c_u32(static_cast<uint32_t>(shape[d]))});
    *bad = b_.op(spv::OpLogicalOr, t_bool(), {*bad, out});
  }
  raise_problem(*bad,
                problem_site(s, fmt::format("index out of bounds for {} of shape {}", what, ir::shape_to_string(shape)),
                             "check the loop bounds and index arithmetic against the shape in the header"));
  for (Id& x : c) x = b_.op(spv::OpSelect, t_u32(), {*bad, c_u32(0), x});
  return c;
}

bool TaskEmitter::sparse_global_ptr(const ir::GlobalPtrStmt& s) {
  int sp = res_.sparse.empty() ? -1 : res_.sparse.field_space(k_, s.field);
  if (sp < 0) return false;
  const ir::Field& f = k_.field(s.field);
  Id bad = 0;
  std::vector<Id> c = checked_coords(s, s.indices(), sparse_space(sp).full, fmt::format("field '{}'", f.name), &bad);
  Id live = reach_coords(sp, c, s.activate ? b_.op(spv::OpLogicalNot, t_bool(), {bad}) : 0);
  live = b_.op(spv::OpLogicalAnd, t_bool(), {live, b_.op(spv::OpLogicalNot, t_bool(), {bad})});
  places_[&s] = sparse_element(s.field, ravel(c, sparse_space(sp).full), live);
  return true;
}

// In a kernel with sparse spaces, a lookup under a dead cell gives a dead cell; a declared
// space's cell is numbered over its full shape and is dead when not live (activated first when
// the lookup activates).
bool TaskEmitter::sparse_lookup(const ir::SNodeLookupStmt& s) {
  if (res_.sparse.empty()) return false;
  int sp = res_.sparse.find(s.snode);
  ir::Shape own = sp >= 0 ? sparse_space(sp).own : ir::Shape{static_cast<int64_t>(cells_of(s))};
  auto n = static_cast<uint32_t>(product(own));
  Id parent = value(s.parent_ptr());
  Id dead = b_.op(spv::OpIEqual, t_bool(), {parent, c_u32(kDeadCell)});
  Id index = int_convert(value(s.index()), s.index()->type.scalar, ScalarKind::u32);
  Id bad = b_.op(spv::OpUGreaterThanEqual, t_bool(), {index, c_u32(n)});
  raise_problem(bad, problem_site(s,
                                  fmt::format("cell out of bounds for SNode '{}' of {} cell(s) {}", s.snode, n,
                                              ir::shape_to_string(own)),
                                  "check the linearized index against the SNode's shape (header or inputs)"));
  index = b_.op(spv::OpSelect, t_u32(), {bad, c_u32(0), index});
  Id safe_parent = b_.op(spv::OpSelect, t_u32(), {dead, c_u32(0), parent});
  Id cell = 0;
  if (sp < 0) {
    cell = b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpIMul, t_u32(), {safe_parent, c_u32(n)}), index});
  } else {
    cell = child_cell(sp, safe_parent, index);
    Id outside = outside_space(s, sp, cell, false);
    dead = b_.op(spv::OpLogicalOr, t_bool(), {dead, outside});
    cell = b_.op(spv::OpSelect, t_u32(), {outside, c_u32(0), cell});
    Id act = s.activate ? b_.op(spv::OpLogicalNot, t_bool(), {dead}) : 0;
    Id live = level_live(sparse_space(sp), unravel(cell, sparse_space(sp).full), act);
    dead = b_.op(spv::OpLogicalOr, t_bool(), {dead, b_.op(spv::OpLogicalNot, t_bool(), {live})});
  }
  define(s, b_.op(spv::OpSelect, t_u32(), {dead, c_u32(kDeadCell), cell}));
  return true;
}

bool TaskEmitter::sparse_place(const ir::GetChStmt& s, ir::FieldId f) {
  if (res_.sparse.empty() || res_.sparse.field_space(k_, f) < 0) return false;
  Id cell = value(s.input());
  places_[&s] = sparse_element(f, cell, b_.op(spv::OpINotEqual, t_bool(), {cell, c_u32(kDeadCell)}));
  return true;
}

Id TaskEmitter::listed(const ir::Stmt& loop, Id cell) {
  int sp = res_.sparse.find(iterated_space(loop));
  if (sp < 0 || sparse_space(sp).list_word < 0) return 0;
  auto word = static_cast<uint32_t>(sparse_space(sp).list_word);
  Place w = activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(word), cell}));
  return b_.op(spv::OpINotEqual, t_bool(), {b_.op(spv::OpLoad, t_u32(), {w.pointer}), c_u32(0)});
}

TaskInfo TaskEmitter::emit_listing(int space) {
  const SparseSpace& sp = sparse_space(space);
  b_.add_capability(spv::CapabilityShader);
  workgroup_size_ = o_.workgroup_size;
  Id void_t = b_.type_void();
  Id fn = b_.begin_function(void_t, b_.type_function(void_t, {}));
  b_.set_name(fn, task_.name);
  b_.begin_block(b_.new_label());
  declare_invocation_ids();
  auto cells = static_cast<uint64_t>(product(sp.full));
  Id v3 = b_.type_vector(t_u32(), 3);
  Id groups = b_.op(spv::OpCompositeExtract, t_u32(), {b_.op(spv::OpLoad, v3, {num_groups_var_}), 0});
  Id stride = b_.op(spv::OpIMul, t_u32(), {groups, c_u32(workgroup_size_)});
  Id var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_u32()));
  b_.op_void(spv::OpStore, {var, gid_});
  auto [header, check, body, cont, merge] = b_.begin_loop(true);
  Id t = b_.op(spv::OpLoad, t_u32(), {var});
  b_.op_void(spv::OpBranchConditional,
             {b_.op(spv::OpULessThan, t_bool(), {t, c_u32(static_cast<uint32_t>(cells))}), body, merge});
  b_.begin_block(body);
  Id live = reach_coords(space, unravel(t, sp.full), 0);
  Place w = activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(static_cast<uint32_t>(sp.list_word)), t}));
  b_.op_void(spv::OpStore, {w.pointer, b_.op(spv::OpSelect, t_u32(), {live, c_u32(1), c_u32(0)})});
  b_.op_void(spv::OpBranch, {cont});
  b_.begin_block(cont);
  b_.op_void(spv::OpStore, {var, b_.op(spv::OpIAdd, t_u32(), {t, stride})});
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
  TaskInfo info = finish(fn);
  info.kind = TaskKind::range_for;
  info.begin.constant = 0;
  info.end.constant = static_cast<int64_t>(cells);
  info.invocations = cells;
  return info;
}

// ---- SNode ops ----

// A cell of the SNode's full shape (a dynamic SNode's: its parent's), as the op's operand.
void TaskEmitter::operator()(const ir::SNodePtrStmt& s) {
  std::optional<ir::Shape> shape = ir::cell_pointer_shape(k_, s.snode);
  if (!shape) unsupported(s, fmt::format("the SNode '{}' is not declared", s.snode), ir::kDeclareSNodeRemedy);
  Id bad = 0;
  define(s, ravel(checked_coords(s, s.indices(), *shape, fmt::format("SNode '{}'", s.snode), &bad), *shape));
}

void TaskEmitter::operator()(const ir::SNodeOpStmt& s) {
  const bool gives = s.type.is_value();
  const ScalarKind kind = gives ? s.type.scalar : ScalarKind::i32;
  auto give = [&](Id v) {
    if (gives) define(s, v);
  };
  auto fail = [&](const std::string& what, const std::string& remedy, Id cond = 0) {
    raise_problem(cond, problem_site(s, what, remedy));
  };
  Id zero = gives ? constant(kind, 0) : 0;
  int sp = res_.sparse.find(s.snode);
  if (sp < 0 || !sparse_space(sp).sparse()) {
    if (sp < 0 && ir::is_sparse_snode(k_, s.snode))
      unsupported(s, fmt::format("the sparse SNode '{}' is not declared", s.snode), ir::kDeclareSNodeRemedy);
    if (s.op == "is_active") return give(constant(kind, 1));
    if (s.op != "activate" && s.op != "deactivate")
      fail(fmt::format("SNode op '{}' has no meaning on the dense SNode '{}'", s.op, s.snode),
           "declare the space dynamic (append, length) or run the kernel on the reference runtime");
    return give(zero);
  }
  if (s.ptr() && ir::isa<ir::GlobalPtrStmt>(s.ptr())) {
    fail("an SNode op on a field's element has no meaning on sparse SNodes",
         "give the op a global ptr to the SNode itself (`<*gen> ... global ptr [S1pointer]`) or the parent's cell");
    return give(zero);
  }
  const SparseSpace& space = sparse_space(sp);
  const bool dynamic = space.kind == ir::SNodeKind::dynamic;
  const bool by_coords = s.ptr() && ir::isa<ir::SNodePtrStmt>(s.ptr());
  Id parent = s.ptr() ? value(s.ptr()) : c_u32(0);
  Id dead = b_.op(spv::OpIEqual, t_bool(), {parent, c_u32(kDeadCell)});
  if (by_coords && dynamic && space.parent >= 0) {
    Id act = s.op == "append" ? b_.const_bool(true) : 0;
    Id live = reach_coords(space.parent, unravel(parent, sparse_space(space.parent).full), act);
    dead = b_.op(spv::OpLogicalNot, t_bool(), {live});
  }
  Id safe = b_.op(spv::OpSelect, t_u32(), {dead, c_u32(0), parent});
  if (s.ptr() && (dynamic || !s.val() || by_coords)) {  // the cell itself (a dynamic space: its parent's)
    Id outside = outside_space(s, sp, safe, dynamic);
    dead = b_.op(spv::OpLogicalOr, t_bool(), {dead, outside});
    safe = b_.op(spv::OpSelect, t_u32(), {outside, c_u32(0), safe});
  }
  Id alive = b_.op(spv::OpLogicalNot, t_bool(), {dead});
  if (!dynamic) {
    Id cell = safe;
    if (s.val() && !by_coords) {
      auto n = static_cast<uint32_t>(product(space.own));
      Id i = int_convert(value(s.val()), s.val()->type.scalar, ScalarKind::u32);
      Id bad = b_.op(spv::OpUGreaterThanEqual, t_bool(), {i, c_u32(n)});
      fail(fmt::format("cell out of bounds for SNode '{}' of {} cell(s) per parent cell", s.snode, n),
           "check the linearized index against the space's shape", bad);
      cell = child_cell(sp, safe, b_.op(spv::OpSelect, t_u32(), {bad, c_u32(0), i}));
      Id outside = outside_space(s, sp, cell, false);
      cell = b_.op(spv::OpSelect, t_u32(), {outside, c_u32(0), cell});
      bad = b_.op(spv::OpLogicalOr, t_bool(), {bad, outside});
      alive = b_.op(spv::OpLogicalAnd, t_bool(), {alive, b_.op(spv::OpLogicalNot, t_bool(), {bad})});
    }
    if (s.op == "is_active") {
      Id live = reach_coords(sp, unravel(cell, space.full), 0);
      return give(from_bool(b_.op(spv::OpLogicalAnd, t_bool(), {alive, live}), kind));
    }
    if (s.op == "activate") {
      reach_coords(sp, unravel(cell, space.full), alive);
      return give(zero);
    }
    if (s.op == "deactivate") {
      emit_if(alive, [&] {
        b_.op_void(spv::OpStore,
                   {activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(space.word), cell})).pointer, c_u32(0)});
        zero_under(sp, cell);
      });
      return give(zero);
    }
    fail(fmt::format("SNode op '{}' has no meaning on the {} SNode '{}'", s.op, ir::snode_kind_name(space.kind),
                     s.snode),
         "use is_active, activate or deactivate on pointer and bitmasked SNodes");
    return give(zero);
  }
  Place len = activity_word(b_.op(spv::OpIAdd, t_u32(), {c_u32(space.word), safe}));
  if (s.op == "length" || s.op == "is_active") {
    Id n = b_.op(spv::OpSelect, t_u32(), {dead, c_u32(0), b_.op(spv::OpLoad, t_u32(), {len.pointer})});
    if (s.op == "length") return give(int_convert(n, ScalarKind::u32, kind));
    return give(from_bool(b_.op(spv::OpINotEqual, t_bool(), {n, c_u32(0)}), kind));
  }
  if (s.op == "deactivate") {
    emit_if(alive, [&] {
      b_.op_void(spv::OpStore, {len.pointer, c_u32(0)});
      zero_under(sp, safe);
    });
    return give(zero);
  }
  if (s.op != "append") {
    fail(fmt::format("SNode op '{}' has no meaning on the dynamic SNode '{}'", s.op, s.snode),
         "use append, length or deactivate on dynamic SNodes");
    return give(zero);
  }
  std::vector<ir::FieldId> primals;
  for (ir::FieldId f : space.fields)
    if (!k_.field(f).primal) primals.push_back(f);
  if (!s.val() || primals.size() != 1) {
    fail(!s.val() ? std::string("append without a value")
                  : fmt::format("append to dynamic SNode '{}': it holds {} fields, and append needs exactly one",
                                s.snode, primals.size()),
         !s.val() ? "give the value to append (`, val = $v`)"
                  : "place one field in the dynamic space (the reference requires it too)");
    return give(zero);
  }
  fail(fmt::format("append to dynamic SNode '{}' under an inactive cell", s.snode),
       "activate the cells above it first (a write through them does)", dead);
  auto capacity = static_cast<uint32_t>(product(space.own));
  Id scope = c_u32(spv::ScopeDevice), relaxed = c_u32(spv::MemorySemanticsMaskNone);
  Id old = b_.op(spv::OpAtomicIAdd, t_u32(),
                 {len.pointer, scope, relaxed, b_.op(spv::OpSelect, t_u32(), {dead, c_u32(0), c_u32(1)})});
  Id full =
      b_.op(spv::OpLogicalAnd, t_bool(), {alive, b_.op(spv::OpUGreaterThanEqual, t_bool(), {old, c_u32(capacity)})});
  fail(fmt::format("append to dynamic SNode '{}': a parent cell is full ({} cells)", s.snode, capacity),
       "give the dynamic space more cells per parent cell, or append less", full);
  Id write = b_.op(spv::OpLogicalAnd, t_bool(), {alive, b_.op(spv::OpLogicalNot, t_bool(), {full})});
  ir::FieldId f = primals.front();
  ScalarKind fk = k_.field(f).dtype;
  Id v = convert(value(s.val()), s.val()->type.scalar, fk);
  emit_if(write, [&] {
    std::vector<Id> c =
        space.parent < 0 ? std::vector<Id>(space.full.size(), c_u32(0)) : unravel(safe, space.parent_full);
    std::vector<Id> local = unravel(old, space.own);
    for (size_t d = 0; d < c.size(); ++d)
      c[d] = b_.op(spv::OpIAdd, t_u32(),
                   {b_.op(spv::OpIMul, t_u32(), {c[d], c_u32(static_cast<uint32_t>(space.own[d]))}), local[d]});
    store(buffer_element(res_.field_binding.at(f), ravel(c, space.full), fk), v);
  });
  give(int_convert(old, ScalarKind::u32, kind));
}

}  // namespace pb::codegen::spirv::detail
