// Autodiff stacks. Every stack gets a fixed capacity and its place before any code of the task
// is emitted (the pre-scan), so heap offsets, the stride, the count variables and the count
// groups are final and defined in the entry block, dominating every use. The four lowering
// choices (LoweringOptions: storage, count, push, bounds_check) are independent.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/spirv/stack_counts.h"
#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"
#include "ir/size_expr.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

namespace {

uint32_t wrap(int64_t v) { return static_cast<uint32_t>(v); }  // counts are u32 and wrap

}  // namespace

void TaskEmitter::setup_stacks() {
  std::vector<HeapArray> heap_arrays;  // heap storage: the members of an invocation's slice
  for (const ir::AdStackAllocaStmt* a : task_.stacks) {
    CurrentStmt scope(*this, a);
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
    uint32_t cap = static_cast<uint32_t>(l.capacity);
    if (o_.storage == StackStorage::heap) {
      const uint32_t bits = ir::bit_width(l.element);
      if (l.element != ScalarKind::u1 && bits != 32 && bits != 64)
        unsupported(*a,
                    fmt::format("heap stacks hold 32- and 64-bit values (and u1), not {}", ir::scalar_name(l.element)),
                    "use storage=function for this kernel");
      auto it = std::find_if(heap_arrays.begin(), heap_arrays.end(),
                             [&](const HeapArray& h) { return h.capacity == cap && h.element == l.element; });
      if (it == heap_arrays.end()) it = heap_arrays.insert(it, {l.element, cap, 0});
      slot.heap_array = static_cast<uint32_t>(it - heap_arrays.begin());
      slot.heap_index = it->stacks++;
      l.heap_words = entry_words(l.element) * cap;
      entry_type(l.element);  // a 64-bit entry without its capability is an error naming this alloc
    } else {
      Id array = b_.type_array(value_type(l.element), cap);
      Id ptr = b_.type_pointer(spv::StorageClassFunction, array);
      slot.primal_var = b_.function_variable(ptr);
      b_.set_name(slot.primal_var, fmt::format("stack{}_primal", a->id));
      if (ir::is_float(l.element)) {
        slot.adjoint_var = b_.function_variable(ptr);
        b_.set_name(slot.adjoint_var, fmt::format("stack{}_adjoint", a->id));
      }
    }
    if (o_.count == StackCount::per_stack) {
      slot.count_var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_u32()));
      b_.set_name(slot.count_var, fmt::format("stack{}_count", a->id));
    }
    stack_index_[a] = stacks_.size();
    stacks_.push_back(std::move(slot));
  }
  if (stacks_.empty()) return;
  if (o_.count == StackCount::shared_array) {
    std::vector<const ir::Stmt*> body = task_.roots;
    if (task_.kind != TaskKind::serial) {
      body.clear();
      for (const ir::Stmt* st : loop_body(task_)) body.push_back(st);
    }
    CountGroups groups = plan_count_groups(task_.stacks, body);
    for (size_t i = 0; i < stacks_.size(); ++i) stacks_[i].group = groups.group_of[i], stacks_[i].bias = groups.bias[i];
    group_last_use_ = groups.last_use;
    Id array = b_.type_array(t_u32(), groups.groups);
    counts_var_ = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, array));
    b_.set_name(counts_var_, "stack_counts");
  }
  if (o_.storage == StackStorage::heap) declare_heap_slice(heap_arrays);
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

// ---- counts ----

Place TaskEmitter::group_count_place(uint32_t group) {
  Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, t_u32()), {counts_var_, c_u32(group)});
  return Place{ptr, ScalarKind::u32, t_u32(), spv::StorageClassFunction};
}

Segment& TaskEmitter::segment() {
  if (!segment_) segment_.emplace();
  return *segment_;
}

Segment::StackUse& TaskEmitter::use(StackSlot& s) { return segment().stacks[static_cast<size_t>(&s - stacks_.data())]; }

PendingCount& TaskEmitter::pending(StackSlot& s) {
  use(s);
  PendingCount& p = segment().pending[s.group];
  p.dead_after |= group_last_use_[s.group] == current_;
  return p;
}

// The count plus `plus` when it is a compile-time constant (shared-array counts, after an alloc
// in this segment).
std::optional<int64_t> TaskEmitter::known_count(StackSlot& s, int64_t plus) {
  if (o_.count == StackCount::per_stack || !pending(s).allocated) return std::nullopt;
  return use(s).offset + plus;
}

// The count plus `plus`, as a u32 value.
Id TaskEmitter::count_value(StackSlot& s, int64_t plus) {
  if (auto k = known_count(s, plus)) return c_u32(wrap(*k));
  Id base = 0;
  if (o_.count == StackCount::per_stack) {
    base = load(Place{s.count_var, ScalarKind::u32, t_u32(), spv::StorageClassFunction});
  } else {
    PendingCount& p = pending(s);
    if (!p.start) p.start = load(group_count_place(s.group));
    base = p.start;
    plus += s.bias + use(s).offset;
  }
  if (plus == 0) return base;
  if (plus < 0) return b_.op(spv::OpISub, t_u32(), {base, c_u32(wrap(-plus))});
  return b_.op(spv::OpIAdd, t_u32(), {base, c_u32(wrap(plus))});
}

// UMin(count + plus, capacity - 1): the entry a push (plus 0) or a top access (plus -1) uses,
// inside the stack even when it overflowed or is empty.
Id TaskEmitter::clamped_index(StackSlot& s, int64_t plus) {
  uint32_t last = static_cast<uint32_t>(s.layout.capacity - 1);
  if (auto k = known_count(s, plus)) return c_u32(std::min(wrap(*k), last));
  return glsl(GLSLstd450UMin, ScalarKind::u32, {count_value(s, plus), c_u32(last)});
}

// The segment ends: shared-array counts make the overflow checks of its select pushes and store
// each group's count, once.
void TaskEmitter::end_segment() {
  if (!segment_) return;
  Segment& seg = *segment_;
  PB_ASSERT(b_.block_open(), "a stack segment ends in a closed block");
  if (o_.count == StackCount::shared_array) {
    check_pushes(seg);
    std::map<uint32_t, int64_t> end;  // per group: the stored count's change, or the stored count once allocated
    for (const auto& [i, u] : seg.stacks) {
      const StackSlot& s = stacks_[i];
      const PendingCount& p = seg.pending.at(s.group);
      int64_t e = p.allocated ? u.offset - s.bias : u.offset;
      auto [it, fresh] = end.try_emplace(s.group, e);
      PB_ASSERT(p.dead_after || it->second == e,
                fmt::format("stacks sharing count {} disagree at a segment end", s.group));
    }
    for (const auto& [group, p] : seg.pending) {
      int64_t e = end.at(group);
      if (p.dead_after) {
        continue;
      } else if (p.allocated) {
        store(group_count_place(group), c_u32(wrap(e)));
      } else if (e != 0) {
        Id start = p.start ? p.start : load(group_count_place(group));
        Id v = e > 0 ? b_.op(spv::OpIAdd, t_u32(), {start, c_u32(wrap(e))})
                     : b_.op(spv::OpISub, t_u32(), {start, c_u32(wrap(-e))});
        store(group_count_place(group), v);
      }
    }
  }
  segment_.reset();
}

// A run of pushes at offsets lo..hi of one stack overflows when the count at lo is at least
// capacity - (hi - lo) (the counts in between do not wrap: capacity <= 2^24); one check per run,
// and runs with the same condition share it (their signal is the largest stack id + 1).
void TaskEmitter::check_pushes(Segment& seg) {
  std::map<std::tuple<uint32_t, int64_t, uint32_t>, uint32_t> checks;  // (group, lo, threshold) -> signal
  uint32_t always = seg.overflow;
  for (auto& [i, u] : seg.stacks) {
    const StackSlot& s = stacks_[i];
    std::vector<int64_t>& at = u.unchecked_pushes;
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    uint32_t signal = static_cast<uint32_t>(s.layout.stack_id) + 1;
    for (size_t lo = 0; lo < at.size();) {
      size_t hi = lo;
      while (hi + 1 < at.size() && at[hi + 1] == at[hi] + 1) ++hi;
      int64_t span = at[hi] - at[lo];
      if (span >= s.layout.capacity) {
        always = std::max(always, signal);
      } else {
        uint32_t& sig = checks[{s.group, at[lo], static_cast<uint32_t>(s.layout.capacity - span)}];
        sig = std::max(sig, signal);
      }
      lo = hi + 1;
    }
    at.clear();
  }
  if (checks.empty() && !always) return;
  Id any = b_.op(spv::OpLoad, t_u32(), {overflow_any_});
  if (always) any = glsl(GLSLstd450UMax, ScalarKind::u32, {any, c_u32(always)});
  for (const auto& [key, signal] : checks) {
    const auto& [group, lo, threshold] = key;
    Id count = seg.pending.at(group).start;
    if (lo != 0)
      count = lo > 0 ? b_.op(spv::OpIAdd, t_u32(), {count, c_u32(wrap(lo))})
                     : b_.op(spv::OpISub, t_u32(), {count, c_u32(wrap(-lo))});
    Id over = b_.op(spv::OpUGreaterThanEqual, t_bool(), {count, c_u32(threshold)});
    any = glsl(GLSLstd450UMax, ScalarKind::u32, {any, b_.op(spv::OpSelect, t_u32(), {over, c_u32(signal), c_u32(0)})});
  }
  b_.op_void(spv::OpStore, {overflow_any_, any});
}

// ---- entries ----

// Heap storage: an invocation's slice of the heap is a struct with one member per element type
// and capacity, an array of those stacks, each an array of (primal, adjoint) pairs of the
// element's stored type (float2, int2, uint2 for u1; double2, int64_t2 for 64-bit values, whose
// members start on 16 bytes, as std430 aligns them, and then the slice's size is a multiple of
// 16). Entries are read and written whole (a push is one store), through one access chain whose
// indices are the invocation, two constants and the clamped count: no address arithmetic, no bitcasts.
void TaskEmitter::declare_heap_slice(const std::vector<HeapArray>& arrays) {
  std::vector<Id> members;
  std::vector<uint32_t> offsets;  // words
  uint32_t words = 0, align = 1;
  for (const HeapArray& h : arrays) {
    const uint32_t entry = entry_words(h.element);
    if (entry == 4) align = 4, words = (words + 3) / 4 * 4;
    members.push_back(
        b_.type_array(b_.type_array(entry_type(h.element), h.capacity, 4 * entry), h.stacks, 4 * entry * h.capacity));
    offsets.push_back(words);
    words += entry * h.capacity * h.stacks;
  }
  words = (words + align - 1) / align * align;
  heap_slice_ = b_.type_struct(members);
  for (uint32_t m = 0; m < members.size(); ++m)
    b_.decorate_member(heap_slice_, m, spv::DecorationOffset, {4 * offsets[m]});
  b_.set_name(heap_slice_, "heap_slice");
  heap_slice_words_ = words;
  for (StackSlot& s : stacks_) s.layout.heap_offset = offsets[s.heap_array] + s.heap_index * s.layout.heap_words;
}

Id TaskEmitter::heap_entry(const StackSlot& s, Id index) {
  PB_ASSERT(res_.heap, "a stack slot without the stack heap binding");
  return b_.op(
      spv::OpAccessChain, b_.type_pointer(spv::StorageClassStorageBuffer, entry_type(s.layout.element)),
      {buffer_variable(*res_.heap), c_u32(0), invocation_id(), c_u32(s.heap_array), c_u32(s.heap_index), index});
}

Id TaskEmitter::load_entry(const StackSlot& s, bool adjoint, Id index) {
  ScalarKind k = s.layout.element;
  if (o_.storage == StackStorage::function) {
    Id vt = value_type(k);
    Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, vt),
                   {adjoint ? s.adjoint_var : s.primal_var, index});
    return b_.op(spv::OpLoad, vt, {ptr});
  }
  Id st = storage_type(k);
  Id pair = b_.op(spv::OpLoad, entry_type(k), {heap_entry(s, index)});
  return value_form(Place{0, k, st, spv::StorageClassStorageBuffer},
                    b_.op(spv::OpCompositeExtract, st, {pair, adjoint ? 1u : 0u}));
}

// A push's stores: the value and a zero adjoint (one word-pair store on the heap).
void TaskEmitter::push_entry(const StackSlot& s, Id index, Id value) {
  ScalarKind k = s.layout.element;
  if (o_.storage == StackStorage::function) {
    Id vt = value_type(k);
    for (bool adjoint : {false, true}) {
      if (adjoint && !ir::is_float(k)) break;
      Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, vt),
                     {adjoint ? s.adjoint_var : s.primal_var, index});
      b_.op_void(spv::OpStore, {ptr, adjoint ? constant(k, 0) : value});
    }
    return;
  }
  Id st = storage_type(k);
  Id stored = stored_form(Place{0, k, st, spv::StorageClassStorageBuffer}, value);
  Id pair = b_.op(spv::OpCompositeConstruct, entry_type(k), {stored, b_.constant(st, 0, ir::bit_width(k) == 64)});
  b_.op_void(spv::OpStore, {heap_entry(s, index), pair});
}

void TaskEmitter::accumulate_adjoint(const StackSlot& s, Id index, Id value) {
  Id vt = value_type(s.layout.element);
  if (o_.storage == StackStorage::function) {
    Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassFunction, vt), {s.adjoint_var, index});
    Id sum = b_.op(spv::OpFAdd, vt, {b_.op(spv::OpLoad, vt, {ptr}), value});
    b_.op_void(spv::OpStore, {ptr, s.layout.element == ir::ScalarKind::f16 ? round_half(sum) : sum});
    return;
  }
  Id ptr = heap_entry(s, index);
  Id pair = b_.op(spv::OpLoad, entry_type(s.layout.element), {ptr});
  Id sum = b_.op(spv::OpFAdd, vt, {b_.op(spv::OpCompositeExtract, vt, {pair, 1u}), value});
  if (s.layout.element == ir::ScalarKind::f16) sum = round_half(sum);
  Id primal = b_.op(spv::OpCompositeExtract, vt, {pair, 0u});
  b_.op_void(spv::OpStore, {ptr, b_.op(spv::OpCompositeConstruct, entry_type(s.layout.element), {primal, sum})});
}

// ---- statements ----

void TaskEmitter::operator()(const ir::AdStackAllocaStmt& s) {
  StackSlot& slot = slot_of(&s);
  if (o_.count == StackCount::per_stack) {
    store(Place{slot.count_var, ScalarKind::u32, t_u32(), spv::StorageClassFunction}, c_u32(0));
    return;
  }
  pending(slot).allocated = true;
  use(slot).offset = 0;
}

void TaskEmitter::operator()(const ir::AdStackPushStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  uint32_t cap = static_cast<uint32_t>(slot.layout.capacity), signal = static_cast<uint32_t>(slot.layout.stack_id) + 1;
  Id c = count_value(slot, 0);
  std::optional<int64_t> known = known_count(slot, 0);
  if (o_.push == StackPush::select) {
    Id index =
        known ? c_u32(std::min(wrap(*known), cap - 1)) : glsl(GLSLstd450UMin, ScalarKind::u32, {c, c_u32(cap - 1)});
    push_entry(slot, index, value(s.val()));
    if (o_.bounds_check) {
      if (known) {
        if (wrap(*known) >= cap) segment().overflow = std::max(segment().overflow, signal);
      } else if (o_.count == StackCount::shared_array) {
        use(slot).unchecked_pushes.push_back(slot.bias + use(slot).offset);
      } else {
        Id over = b_.op(spv::OpUGreaterThanEqual, t_bool(), {c, c_u32(cap)});
        Id sig = b_.op(spv::OpSelect, t_u32(), {over, c_u32(signal), c_u32(0)});
        Id any = b_.op(spv::OpLoad, t_u32(), {overflow_any_});
        b_.op_void(spv::OpStore, {overflow_any_, glsl(GLSLstd450UMax, ScalarKind::u32, {any, sig})});
      }
    }
  } else {
    Id fits = b_.op(spv::OpULessThan, t_bool(), {c, c_u32(cap)});
    Id store_label = b_.new_label(), merge = b_.new_label();
    Id overflow_label = o_.bounds_check ? b_.new_label() : merge;
    b_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
    b_.op_void(spv::OpBranchConditional, {fits, store_label, overflow_label});
    b_.begin_block(store_label);
    push_entry(slot, c, value(s.val()));
    b_.op_void(spv::OpBranch, {merge});
    if (o_.bounds_check) {
      b_.begin_block(overflow_label);
      Place flag = buffer_element(*res_.flags, c_u32(kFlagStackOverflow), ScalarKind::u32);
      b_.op(spv::OpAtomicUMax, t_u32(), {flag.pointer, c_u32(spv::ScopeDevice), c_u32(0), c_u32(signal)});
      b_.op_void(spv::OpBranch, {merge});
    }
    b_.begin_block(merge);
  }
  // Counts every push, so pops stay paired.
  if (o_.count == StackCount::per_stack)
    store(Place{slot.count_var, ScalarKind::u32, t_u32(), spv::StorageClassFunction},
          b_.op(spv::OpIAdd, t_u32(), {c, c_u32(1)}));
  else
    use(slot).offset += 1;
}

// With run-time checks, an access to the top of an empty stack raises the problem.
void TaskEmitter::check_not_empty(const ir::Stmt& s, StackSlot& slot, const char* what) {
  if (!o_.run_time_checks) return;
  Id empty = b_.op(spv::OpIEqual, t_bool(), {count_value(slot, 0), c_u32(0)});
  raise_problem(empty, problem_site(s, fmt::format("autodiff stack underflow: {} on an empty stack", what),
                                    "pop only what was pushed: check the order of the stack statements"));
}

void TaskEmitter::operator()(const ir::AdStackPopStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  check_not_empty(s, slot, "pop");
  if (o_.count == StackCount::shared_array) {
    pending(slot);
    use(slot).offset -= 1;
    return;
  }
  Place count{slot.count_var, ScalarKind::u32, t_u32(), spv::StorageClassFunction};
  store(count, b_.op(spv::OpISub, t_u32(), {load(count), c_u32(1)}));
}

void TaskEmitter::operator()(const ir::AdStackLoadTopStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  check_not_empty(s, slot, "load top");
  define(s, load_entry(slot, false, clamped_index(slot, -1)));
}

void TaskEmitter::operator()(const ir::AdStackLoadTopAdjStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  check_not_empty(s, slot, "load top adj");
  define(s, load_entry(slot, true, clamped_index(slot, -1)));
}

void TaskEmitter::operator()(const ir::AdStackAccAdjointStmt& s) {
  StackSlot& slot = slot_of(s.stack());
  check_not_empty(s, slot, "acc adj");
  accumulate_adjoint(slot, clamped_index(slot, -1), value(s.val()));
}

}  // namespace pb::codegen::spirv::detail
