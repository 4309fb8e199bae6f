// The offloaded stage: serial task statements, global temporaries, thread-local storage and the
// SNode access chain of dense SNodes. Addresses follow the interpreter (runtime/interp): a cell
// of SNode S under parent cell p is p * cells(S) + i, the root's cell is 0, and a place's element
// is its field's element at the cell number. Cell numbers are u32 values; they are not bounds
// checked (as global ptr indices are not).
#include <fmt/format.h>

#include <algorithm>

#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

void TaskEmitter::check_no_block_local_storage(const ir::OffloadedStmt& o) {
  if (o.bls_prologue || o.bls_epilogue)
    unsupported(o,
                "block-local storage blocks (bls prologue / epilogue) are not compiled (the interpreter does not "
                "run them either)",
                "dump the kernel with block-local storage off");
}

// A serial task: its tls prologue, body and tls epilogue, once. Loop tasks are emitted by
// emit_parallel_loop; a task statement anywhere but at the root is refused.
void TaskEmitter::operator()(const ir::OffloadedStmt& s) {
  if (s.task != ir::TaskType::serial || task_.offloaded != &s)
    unsupported(s, "an offloaded task nested in another statement", "offloaded tasks belong at the kernel root");
  check_no_block_local_storage(s);
  for (const ir::Block* b : {s.tls_prologue.get(), s.body.get(), s.tls_epilogue.get()})
    if (b && b_.block_open()) emit_block(*b);
}

Id TaskEmitter::task_bound(const ir::OffloadedStmt& o, const ir::TaskBound& b) {
  switch (b.kind) {
    case ir::TaskBound::Kind::constant:
      return constant(ScalarKind::i32, static_cast<uint64_t>(static_cast<uint32_t>(b.value)));
    case ir::TaskBound::Kind::temporary:
      PB_ASSERT(res_.temps, "a range_for bound in a global temporary without the temps binding");
      return load(buffer_element(*res_.temps, c_u32(static_cast<uint32_t>(b.value / 4)), ScalarKind::i32));
    case ir::TaskBound::Kind::operand: {
      const ir::Stmt* v = o.bound_operand(b);
      return int_convert(value(v), v->type.scalar, ScalarKind::i32);
    }
  }
  PB_ASSERT(false, "a task bound of no known kind");
}

// The word at byte offset / 4 of `temps`, or the word pair there for a 64-bit value (the planner
// checked the alignment).
void TaskEmitter::operator()(const ir::GlobalTemporaryStmt& s) {
  PB_ASSERT(res_.temps && s.offset % 4 == 0, "a global temporary outside the temps words");
  auto word = static_cast<uint32_t>(s.offset / 4);
  places_[&s] = ir::bit_width(s.type.scalar) == 64 ? temps_wide_element(word, s.type.scalar)
                                                   : buffer_element(*res_.temps, c_u32(word), s.type.scalar);
}

// One Function variable per byte offset and invocation, zero at the task's start. As in the
// interpreter, the tls prologue initialises it and the tls epilogue reduces it into global
// memory; each invocation does so for the iterations it ran.
void TaskEmitter::operator()(const ir::ThreadLocalPtrStmt& s) {
  ScalarKind k = s.type.scalar;
  auto it = thread_locals_.find(s.offset);
  if (it == thread_locals_.end()) {
    Id vt = value_type(k);
    Place p{b_.function_variable(b_.type_pointer(spv::StorageClassFunction, vt), constant(k, 0)), k, vt,
            spv::StorageClassFunction};
    b_.set_name(p.pointer, fmt::format("tls{}", s.offset));
    it = thread_locals_.emplace(s.offset, p).first;
  } else if (it->second.kind != k) {
    unsupported(s,
                fmt::format("thread-local storage at offset {} is used as both {} and {}", s.offset,
                            ir::scalar_name(it->second.kind), ir::scalar_name(k)),
                "give each thread-local value its own offset");
  }
  places_[&s] = it->second;
}

void TaskEmitter::operator()(const ir::GetRootStmt& s) { define(s, c_u32(0)); }

// The cells of the SNode per parent cell: its declared shape (a space or field of that name),
// else the strides of the linearized index that feeds the lookup.
uint32_t TaskEmitter::cells_of(const ir::SNodeLookupStmt& s) {
  std::optional<ir::Shape> shape;
  if (const ir::IndexSpace* sp = k_.find_space(s.snode); sp && sp->shape) shape = sp->shape;
  if (auto f = k_.find_field(s.snode); !shape && f && k_.field(*f).shape) shape = k_.field(*f).shape;
  if (const auto* lin = ir::dyn_cast<ir::LinearizeStmt>(s.index()); !shape && lin) shape = lin->strides;
  if (!shape)
    unsupported(s, fmt::format("the number of cells of SNode '{}' is not known when compiling", s.snode),
                fmt::format("declare it in the header (`dense {} : [N]`)", s.snode));
  constexpr int64_t kPastU32 = int64_t{1} << 33;  // the product saturates here
  int64_t cells = 1;
  for (int64_t e : *shape) {
    if (e <= 0) {
      cells = 0;
      break;
    }
    cells = e > kPastU32 / cells ? kPastU32 : cells * e;
  }
  if (cells <= 0 || cells > int64_t{0xffffffff})
    unsupported(s, fmt::format("SNode '{}' has {} cells, outside what a 32-bit cell number holds", s.snode, cells),
                "use SNodes of fewer cells, or run the kernel on the interpreter");
  return static_cast<uint32_t>(cells);
}

void TaskEmitter::operator()(const ir::SNodeLookupStmt& s) {
  if (sparse_lookup(s)) return;
  Id index = int_convert(value(s.index()), s.index()->type.scalar, ScalarKind::u32);
  Id base = b_.op(spv::OpIMul, t_u32(), {value(s.parent_ptr()), c_u32(cells_of(s))});
  define(s, b_.op(spv::OpIAdd, t_u32(), {base, index}));
}

// A container child keeps the cell number; a place addresses its field's element at it.
void TaskEmitter::operator()(const ir::GetChStmt& s) {
  if (s.type.gen) {
    define(s, value(s.input()));
    return;
  }
  auto f = k_.find_field(s.to);
  PB_ASSERT(f, fmt::format("get child ${} names a place with no field (the verifier checks this)", s.id));
  if (sparse_place(s, *f)) return;
  places_[&s] = buffer_element(res_.field_binding.at(*f), value(s.input()), k_.field(*f).dtype);
}

// sum over i of ind[i] * (product of strides after i), in the statement's integer kind.
void TaskEmitter::operator()(const ir::LinearizeStmt& s) {
  ScalarKind k = s.type.scalar;
  Id v = constant(k, 0);
  for (size_t i = 0; i < s.strides.size(); ++i) {
    const ir::Stmt* in = s.operand(i);
    Id scaled = b_.op(spv::OpIMul, value_type(k), {v, constant(k, static_cast<uint64_t>(s.strides[i]))});
    v = b_.op(spv::OpIAdd, value_type(k), {scaled, int_convert(value(in), in->type.scalar, k)});
  }
  define(s, v);
}

void TaskEmitter::operator()(const ir::IntegerOffsetStmt& s) {
  const ir::Stmt* in = s.input();
  if (places_.count(in))
    unsupported(s, "a byte offset on an address", "offset the index before the access chain instead");
  ScalarKind k = in->type.gen ? ScalarKind::u32 : s.type.scalar;  // a cell number, or an integer
  if (!ir::is_integral(k)) unsupported(s, "an integer offset on a non-integer value", "offset an integer index");
  define(s, b_.op(spv::OpIAdd, value_type(k), {value(in), constant(k, static_cast<uint64_t>(s.offset))}));
}

// (x >> begin) & (2^(end - begin) - 1) of the value's bits, read as the interpreter reads them:
// signed kinds sign-extended, so bits past the width repeat the sign bit.
void TaskEmitter::operator()(const ir::BitExtractStmt& s) {
  ScalarKind k = s.type.scalar;
  if (!ir::is_integral(k) || k == ScalarKind::u1)
    unsupported(s, "bit_extract of a value that is not an integer", "extract bits of an integer value");
  const int width = ir::bit_width(k);
  const int begin = std::clamp(s.bit_begin, 0, width - 1), bits = s.bit_end - s.bit_begin;
  Id x = int_convert(value(s.input()), s.input()->type.scalar, k);
  Id shifted = b_.op(ir::is_signed(k) ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical, value_type(k),
                     {x, constant(k, static_cast<uint64_t>(begin))});
  if (!ir::is_signed(k) && s.bit_begin >= width) shifted = constant(k, 0);
  uint64_t mask = bits <= 0 ? 0 : bits >= width ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (width == 32) mask &= 0xffffffffu;
  define(s, b_.op(spv::OpBitwiseAnd, value_type(k), {shifted, constant(k, mask)}));
}

void TaskEmitter::refuse_index_outside_iterations(const ir::Stmt& s) const {
  unsupported(s, "it reads a loop task's index in the task's tls prologue or epilogue, where no iteration runs",
              "read the index in the task's body");
}

// The loop's iteration as one number: a range's index, a struct for's row-major cell number.
void TaskEmitter::operator()(const ir::LoopLinearIndexStmt& s) {
  if (auto it = loop_linear_.find(s.loop()); it != loop_linear_.end()) {
    define(s, int_convert(it->second.first, it->second.second, s.type.scalar));
    return;
  }
  if (ir::isa<ir::OffloadedStmt>(s.loop())) refuse_index_outside_iterations(s);
  auto it = loop_indices_.find(s.loop());
  if (it == loop_indices_.end() || it->second.size() != 1)
    unsupported(s, "the linear index of a loop that is not a range for or a parallel struct for",
                "use the loop's own indices");
  define(s, int_convert(it->second[0].first, it->second[0].second, s.type.scalar));
}

// The values go to their slots after the marker word in `temps` (CompiledKernel::return_word),
// then the marker: the host reads them when it is 1. Only a serial task returns: in a parallel
// one every invocation would race to write them.
void TaskEmitter::operator()(const ir::ReturnStmt& s) {
  if (task_.kind != TaskKind::serial)
    unsupported(s, "a return inside a parallel loop", "return from the kernel's top level, after the loop");
  PB_ASSERT(res_.temps && out_.returns.size() == s.num_operands(), "a return without its planned temps slots");
  for (size_t i = 0; i < s.num_operands(); ++i) {
    const ir::Stmt* v = s.operand(i);
    auto word = out_.return_word + 2 + 2 * static_cast<uint32_t>(i);
    ScalarKind k = v->type.scalar;
    store(ir::bit_width(k) == 64 ? temps_wide_element(word, k) : buffer_element(*res_.temps, c_u32(word), k), value(v));
  }
  store(buffer_element(*res_.temps, c_u32(out_.return_word), ScalarKind::u32), c_u32(1));
}

}  // namespace pb::codegen::spirv::detail
