// Autodiff stacks. Every stack gets a fixed capacity and its place before any code of the task
// is emitted (the pre-scan), so heap offsets, the stride and the count variables are final and
// defined in the entry block, dominating every use. The four lowering choices
// (LoweringOptions: storage, count, push, bounds_check) are independent.
#include <fmt/format.h>

#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"
#include "ir/size_expr.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

void TaskEmitter::setup_stacks() {
  uint32_t offset = 0;
  for (const ir::AdStackAllocaStmt* a : task_.stacks) {
    current_ = a;
    StackSlot slot;
    slot.alloc = a;
    StackLayout& l = slot.layout;
    l.stack_id = plan_.stack_id.at(a);
    l.stmt_id = a->id;
    l.element = a->type.scalar;
    if (a->max_size > 0) {
      l.capacity = a->max_size;
    } else if (a->size) {
      auto it = o_.stack_capacity_by_stmt.find(a->id);
      l.capacity = it != o_.stack_capacity_by_stmt.end() ? it->second : o_.symbolic_stack_capacity;
      l.size_expr = ir::to_string(*a->size);
    } else {
      unsupported(*a, "the stack has no size (max_size=0 and no size expression)",
                  "run determine_ad_stack_size first, or give the stack a fixed max_size");
    }
    if (l.capacity < 1 || l.capacity > (int64_t{1} << 24))
      unsupported(*a, fmt::format("stack capacity {} is outside 1..2^24", l.capacity), "give the stack a smaller size");
    bool is_float = ir::is_float(l.element);
    uint32_t cap = static_cast<uint32_t>(l.capacity);
    if (o_.storage == StackStorage::heap) {
      if (l.element != ScalarKind::f32 && l.element != ScalarKind::i32 && l.element != ScalarKind::u1)
        unsupported(*a, fmt::format("heap stacks hold f32, i32 or u1 values, not {}", ir::scalar_name(l.element)),
                    "use storage=function for this kernel");
      l.heap_offset = offset;
      l.heap_words = is_float ? 2 * cap : cap;
      offset += l.heap_words;
    } else {
      Id array = b_.type_array(value_type(l.element), cap);
      Id ptr = b_.type_pointer(spv::StorageClassFunction, array);
      slot.primal_var = b_.function_variable(ptr);
      b_.set_name(slot.primal_var, fmt::format("stack{}_primal", a->id));
      if (is_float) {
        slot.adjoint_var = b_.function_variable(ptr);
        b_.set_name(slot.adjoint_var, fmt::format("stack{}_adjoint", a->id));
      }
    }
    if (o_.count == StackCount::per_stack) {
      slot.count_var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_u32()));
      b_.set_name(slot.count_var, fmt::format("stack{}_count", a->id));
    } else {
      slot.count_index = static_cast<uint32_t>(stacks_.size());
    }
    stack_index_[a] = stacks_.size();
    stacks_.push_back(slot);
  }
  current_ = nullptr;
  if (stacks_.empty()) return;
  if (o_.count == StackCount::shared_array) {
    Id array = b_.type_array(t_u32(), static_cast<uint32_t>(stacks_.size()));
    counts_var_ = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, array));
    b_.set_name(counts_var_, "stack_counts");
  }
  if (o_.storage == StackStorage::heap) {
    heap_base_ = b_.op(spv::OpIMul, t_u32(), {invocation_id(), c_u32(offset)});
    b_.set_name(heap_base_, "heap_base");
  }
  if (o_.push == StackPush::select && o_.bounds_check) {
    overflow_any_ = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_u32()));
    b_.set_name(overflow_any_, "stack_overflow");
    b_.op_void(spv::OpStore, {overflow_any_, c_u32(0)});
  }
}

// Select pushes gather their overflow signal in a variable; one atomic max per invocation
// publishes it, and only when a push overflowed.
void TaskEmitter::publish_overflow() {
  if (!overflow_any_) return;
  Id any = b_.op(spv::OpLoad, t_u32(), {overflow_any_});
  emit_if(b_.op(spv::OpINotEqual, t_bool(), {any, c_u32(0)}), [&] {
    Place flag = buffer_element(*res_.flags, c_u32(kFlagStackOverflow), ScalarKind::u32);
    b_.op(spv::OpAtomicUMax, t_u32(), {flag.pointer, c_u32(spv::ScopeDevice), c_u32(0), any});
  });
}

StackSlot& TaskEmitter::slot_of(const ir::Stmt* stack) {
  auto it = stack_index_.find(stack);
  PB_ASSERT(it != stack_index_.end(),
            fmt::format("stack ${} was not pre-scanned in this task", stack ? stack->id : -1));
  return stacks_[it->second];
}

Place TaskEmitter::count_place(const StackSlot& s) {
  if (o_.count == StackCount::per_stack) return Place{s.count_var, ScalarKind::u32, t_u32(), spv::StorageClassFunction};
  Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, t_u32()),
                 {counts_var_, c_u32(s.count_index)});
  return Place{ptr, ScalarKind::u32, t_u32(), spv::StorageClassFunction};
}

Place TaskEmitter::entry_place(const StackSlot& s, bool adjoint, Id index) {
  ScalarKind k = s.layout.element;
  if (o_.storage == StackStorage::function) {
    Id vt = value_type(k);
    Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, vt),
                   {adjoint ? s.adjoint_var : s.primal_var, index});
    return Place{ptr, k, vt, spv::StorageClassFunction};
  }
  uint32_t first = s.layout.heap_offset + (adjoint ? static_cast<uint32_t>(s.layout.capacity) : 0);
  Id word = b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpIAdd, t_u32(), {heap_base_, c_u32(first)}), index});
  return buffer_element(*res_.heap, word, k);
}

// count - 1, clamped into the stack so that an overflowed or empty stack never reads outside it.
Id TaskEmitter::top_index(const StackSlot& s) {
  Id c = load(count_place(s));
  Id top = b_.op(spv::OpISub, t_u32(), {c, c_u32(1)});
  return glsl(GLSLstd450UMin, ScalarKind::u32, {top, c_u32(static_cast<uint32_t>(s.layout.capacity - 1))});
}

void TaskEmitter::operator()(const ir::AdStackAllocaStmt& s) { store(count_place(slot_of(&s)), c_u32(0)); }

void TaskEmitter::operator()(const ir::AdStackPushStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  ScalarKind k = slot.layout.element;
  uint32_t cap = static_cast<uint32_t>(slot.layout.capacity), signal = static_cast<uint32_t>(slot.layout.stack_id) + 1;
  Place count = count_place(slot);
  Id c = load(count);
  auto store_entry = [&](Id index) {
    store(entry_place(slot, false, index), value(s.val()));
    if (ir::is_float(k)) store(entry_place(slot, true, index), constant(k, 0));
  };
  if (o_.push == StackPush::select) {
    store_entry(glsl(GLSLstd450UMin, ScalarKind::u32, {c, c_u32(cap - 1)}));
    if (o_.bounds_check) {
      Id over = b_.op(spv::OpUGreaterThanEqual, t_bool(), {c, c_u32(cap)});
      Id sig = b_.op(spv::OpSelect, t_u32(), {over, c_u32(signal), c_u32(0)});
      Id any = b_.op(spv::OpLoad, t_u32(), {overflow_any_});
      b_.op_void(spv::OpStore, {overflow_any_, glsl(GLSLstd450UMax, ScalarKind::u32, {any, sig})});
    }
  } else {
    Id fits = b_.op(spv::OpULessThan, t_bool(), {c, c_u32(cap)});
    Id store_label = b_.new_label(), merge = b_.new_label();
    Id overflow_label = o_.bounds_check ? b_.new_label() : merge;
    b_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
    b_.op_void(spv::OpBranchConditional, {fits, store_label, overflow_label});
    b_.begin_block(store_label);
    store_entry(c);
    b_.op_void(spv::OpBranch, {merge});
    if (o_.bounds_check) {
      b_.begin_block(overflow_label);
      Place flag = buffer_element(*res_.flags, c_u32(kFlagStackOverflow), ScalarKind::u32);
      b_.op(spv::OpAtomicUMax, t_u32(), {flag.pointer, c_u32(spv::ScopeDevice), c_u32(0), c_u32(signal)});
      b_.op_void(spv::OpBranch, {merge});
    }
    b_.begin_block(merge);
  }
  store(count, b_.op(spv::OpIAdd, t_u32(), {c, c_u32(1)}));  // counts every push, so pops stay paired
}

void TaskEmitter::operator()(const ir::AdStackPopStmt& s) {
  Place count = count_place(slot_of(s.stack()));
  store(count, b_.op(spv::OpISub, t_u32(), {load(count), c_u32(1)}));
}

void TaskEmitter::operator()(const ir::AdStackLoadTopStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  define(s, load(entry_place(slot, false, top_index(slot))));
}

void TaskEmitter::operator()(const ir::AdStackLoadTopAdjStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  define(s, load(entry_place(slot, true, top_index(slot))));
}

void TaskEmitter::operator()(const ir::AdStackAccAdjointStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  Place adj = entry_place(slot, true, top_index(slot));
  store(adj, b_.op(spv::OpFAdd, value_type(slot.layout.element), {load(adj), value(s.val())}));
}

}  // namespace pb::codegen::spirv::detail
