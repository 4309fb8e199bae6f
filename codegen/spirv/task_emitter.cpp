#include "codegen/spirv/task_emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/spirv/stack_counts.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

TaskEmitter::TaskEmitter(const ir::Kernel& k, const KernelPlan& plan, const KernelResources& res,
                         const LoweringOptions& o, const Task& task, CompiledKernel& out)
    : k_(k), plan_(plan), res_(res), o_(o), task_(task), out_(out) {}

// ---- errors and notes ----

void TaskEmitter::unsupported(const ir::Stmt& s, const std::string& why, const std::string& remedy) const {
  throw UserError(fmt::format("cannot lower `{}` to SPIR-V (task {}): {}", ir::print_stmt(s, k_), task_.name, why),
                  remedy);
}

void TaskEmitter::note(const std::string& text) {
  std::string line = fmt::format("{}: {}", task_.name, text);
  if (std::find(out_.notes.begin(), out_.notes.end(), line) == out_.notes.end()) out_.notes.push_back(line);
}

// ---- types and constants ----

Id TaskEmitter::value_type(ScalarKind k) {
  auto need = [&](bool enabled, const char* cap, const char* option) {
    if (enabled) return;
    PB_ASSERT(current_, "64-bit type requested outside a statement");
    unsupported(*current_, fmt::format("{} needs the {} capability", ir::scalar_name(k), cap),
                fmt::format("compile with the {} lowering option, or use a 32-bit type", option));
  };
  switch (k) {
    case ScalarKind::u1:
      return b_.type_bool();
    case ScalarKind::i32:
      return b_.type_int(32, true);
    case ScalarKind::u32:
      return b_.type_int(32, false);
    case ScalarKind::f32:
      return b_.type_float(32);
    case ScalarKind::i64:
    case ScalarKind::u64:
      need(o_.int64, "Int64", "int64=on");
      b_.add_capability(spv::CapabilityInt64);
      return b_.type_int(64, k == ScalarKind::i64);
    case ScalarKind::f64:
      need(o_.float64, "Float64", "float64=on");
      b_.add_capability(spv::CapabilityFloat64);
      return b_.type_float(64);
    case ScalarKind::f16:  // in f32 registers, rounded by define()
      return b_.type_float(32);
    case ScalarKind::i8:  // lowered to 32 bits before emission (codegen/spirv/narrow_ints.h)
    case ScalarKind::i16:
    case ScalarKind::u8:
    case ScalarKind::u16:
    case ScalarKind::unknown:
      break;
  }
  PB_ASSERT(false, "value_type of a kind the SPIR-V backend does not compile");
}

Id TaskEmitter::storage_type(ScalarKind k) { return k == ScalarKind::u1 ? t_u32() : value_type(k); }

Id TaskEmitter::constant(ScalarKind k, uint64_t bits) {
  if (k == ScalarKind::u1) return b_.const_bool(bits != 0);
  return b_.constant(value_type(k), bits, ir::bit_width(k) == 64);
}

Id TaskEmitter::glsl(uint32_t instruction, ScalarKind k, const Operands& args) {
  Operands ops{b_.glsl450(), instruction};
  ops.insert(ops.end(), args.begin(), args.end());
  return b_.op(spv::OpExtInst, value_type(k), ops);
}

Id TaskEmitter::value(const ir::Stmt* s) const {
  auto it = values_.find(s);
  PB_ASSERT(it != values_.end(), fmt::format("SPIR-V value of ${} used before it was emitted", s ? s->id : -1));
  return it->second;
}

// ---- resources ----

Id TaskEmitter::buffer_variable(uint32_t binding) {
  if (auto it = buffer_vars_.find(binding); it != buffer_vars_.end()) return it->second;
  const Binding& info = res_.bindings.at(binding);
  ScalarKind element = stored_kind(binding);
  Id elem = storage_type(element);
  uint32_t stride = ir::bit_width(element) == 64 ? 8 : 4;
  if (info.kind == BindingKind::heap) elem = heap_slice_, stride = 4 * heap_slice_words_;  // a slice per invocation
  Id array = b_.type_runtime_array(elem, stride);
  Id block = b_.type_struct(std::vector<Id>{array});
  b_.decorate(block, spv::DecorationBlock);
  b_.decorate_member(block, 0, spv::DecorationOffset, {0});
  Id var = b_.global_variable(b_.type_pointer(spv::StorageClassStorageBuffer, block), spv::StorageClassStorageBuffer);
  b_.decorate(var, spv::DecorationDescriptorSet, {info.set});
  b_.decorate(var, spv::DecorationBinding, {info.binding});
  std::string name;
  for (char c : info.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  b_.set_name(block, name + "_buffer");
  b_.set_member_name(block, 0, "data");
  b_.set_name(var, name);
  buffer_vars_[binding] = var;
  return var;
}

Place TaskEmitter::buffer_element(uint32_t binding, Id index, ScalarKind kind) {
  Id var = buffer_variable(binding);
  PB_ASSERT(res_.bindings.at(binding).kind != BindingKind::heap,
            "heap entries are reached through heap_entry, not buffer_element");
  Id st = storage_type(stored_kind(binding));
  Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassStorageBuffer, st), {var, c_u32(0), index});
  return Place{ptr, kind, st, spv::StorageClassStorageBuffer};
}

ScalarKind TaskEmitter::stored_kind(uint32_t binding) const {
  const Binding& info = res_.bindings.at(binding);
  ScalarKind element = info.element == ScalarKind::u1 ? ScalarKind::u32 : info.element;
  if (word_views_.count(binding) || info.kind == BindingKind::temps || info.kind == BindingKind::flags)
    element = ir::bit_width(element) == 64 ? ScalarKind::u64 : ScalarKind::u32;
  return element;
}

Id TaskEmitter::push_constant(uint32_t member) {
  if (!push_var_) {
    std::vector<Id> members;
    members.reserve(res_.push_constants.size());
    for (const PushConstant& p : res_.push_constants) members.push_back(storage_type(p.type));
    push_struct_ = b_.type_struct(members);
    b_.decorate(push_struct_, spv::DecorationBlock);
    for (uint32_t i = 0; i < res_.push_constants.size(); ++i) {
      b_.decorate_member(push_struct_, i, spv::DecorationOffset, {res_.push_constants[i].offset});
      b_.set_member_name(push_struct_, i, res_.push_constants[i].name);
    }
    b_.set_name(push_struct_, "PushConstants");
    push_var_ =
        b_.global_variable(b_.type_pointer(spv::StorageClassPushConstant, push_struct_), spv::StorageClassPushConstant);
    b_.set_name(push_var_, "push_constants");
  }
  Id t = storage_type(res_.push_constants.at(member).type);
  Id ptr = b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassPushConstant, t), {push_var_, c_u32(member)});
  return b_.op(spv::OpLoad, t, {ptr});
}

Id TaskEmitter::invocation_id() { return gid_ ? gid_ : c_u32(0); }

Place TaskEmitter::temps_place(const ir::Stmt* s, ScalarKind kind) {
  PB_ASSERT(res_.temps, "a value shared between tasks without the temps binding");
  uint32_t word = plan_.temp_slot.at(s);
  if (ir::bit_width(kind) == 64) return temps_wide_element(word, kind);
  return buffer_element(*res_.temps, c_u32(word), kind);
}

// 64-bit values in temps go through a second view of the same binding, an array of 64-bit
// elements: u64 with int64=on (so compare-exchange atomics work on the bits), else the value's
// own type. `word` is even.
Place TaskEmitter::temps_wide_element(uint32_t word, ScalarKind kind) {
  PB_ASSERT(res_.temps && word % 2 == 0, "a 64-bit temps value at an odd word");
  ScalarKind element = o_.int64 ? ScalarKind::u64 : kind;
  Id st = storage_type(element);
  Id& var = temps_views_[element];
  if (!var) {
    const Binding& info = res_.bindings.at(*res_.temps);
    Id block = b_.type_struct(std::vector<Id>{b_.type_runtime_array(st, 8)});
    b_.decorate(block, spv::DecorationBlock);
    b_.decorate_member(block, 0, spv::DecorationOffset, {0});
    var = b_.global_variable(b_.type_pointer(spv::StorageClassStorageBuffer, block), spv::StorageClassStorageBuffer);
    b_.decorate(var, spv::DecorationDescriptorSet, {info.set});
    b_.decorate(var, spv::DecorationBinding, {info.binding});
    b_.set_name(block, fmt::format("temps_{}_buffer", ir::scalar_name(element)));
    b_.set_member_name(block, 0, "data");
    b_.set_name(var, fmt::format("temps_{}", ir::scalar_name(element)));
  }
  Id ptr =
      b_.op(spv::OpAccessChain, b_.type_pointer(spv::StorageClassStorageBuffer, st), {var, c_u32(0), c_u32(word / 2)});
  return Place{ptr, kind, st, spv::StorageClassStorageBuffer};
}

// ---- statements and blocks ----

void TaskEmitter::emit_stmt(const ir::Stmt& s) {
  if (is_segment_boundary(s)) end_segment();
  {
    CurrentStmt scope(*this, &s);
    ir::visit(s, *this);
  }
  // A root value another task reads is stored where it is defined.
  if (!emitting_import_ && plan_.spilled.count(&s)) store(temps_place(&s, s.type.scalar), value(&s));
}

void TaskEmitter::emit_block(const ir::Block& b) {
  for (const ir::Stmt* s : b) {
    emit_stmt(*s);
    if (!b_.block_open()) return;  // after `continue` the rest of the block is dead
  }
  end_segment();
}

void TaskEmitter::emit_imports() {
  emitting_import_ = true;
  struct EndImports {
    bool& flag;
    ~EndImports() { flag = false; }
  } end_imports{emitting_import_};
  for (const ir::Stmt* a : task_.shared_allocas) places_[a] = temps_place(a, a->type.scalar);
  for (const ir::Stmt* a : task_.private_allocas) places_[a] = function_place(*a);
  for (const Import& imp : task_.imports) {
    CurrentStmt scope(*this, imp.stmt);
    if (imp.from_temps)
      define(*imp.stmt, load(temps_place(imp.stmt, imp.stmt->type.scalar)));
    else
      ir::visit(*imp.stmt, *this);
  }
}

// Fields and ndarrays that a float atomic reaches through compare-exchange are declared as
// uint words in this module (same bits, so the host sees no difference).
void TaskEmitter::plan_word_views() {
  auto visit_atomic = [&](const ir::Stmt& s) {
    const auto* a = ir::dyn_cast<ir::AtomicOpStmt>(&s);
    if (!a || !ir::is_float(a->type.scalar)) return;
    bool native = o_.atomic_float_add && a->type.scalar == ScalarKind::f32 &&
                  (a->op == ir::AtomicOp::add || a->op == ir::AtomicOp::sub);
    if (native) return;
    if (a->type.scalar == ScalarKind::f64 && o_.float64 && !o_.int64)
      unsupported(
          *a, "an f64 atomic is a 64-bit compare-exchange loop, which needs the Int64 and Int64Atomics capabilities",
          "compile with int64=on as well as float64=on");
    if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(a->dest())) word_views_.insert(res_.field_binding.at(g->field));
    if (const auto* ch = ir::dyn_cast<ir::GetChStmt>(a->dest()); ch && !ch->type.gen)
      if (auto f = k_.find_field(ch->to)) word_views_.insert(res_.field_binding.at(*f));
    if (const auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(a->dest()))
      word_views_.insert(
          res_.ndarray_binding.at({ir::dyn_cast<ir::ArgLoadStmt>(e->base())->arg_index, ndarray_array(*e)}));
  };
  for (const ir::Stmt* r : task_.roots) {
    visit_atomic(*r);
    for (const ir::Block* blk : r->blocks())
      if (blk) ir::walk(*blk, [&](ir::Stmt& s) { visit_atomic(s); });
  }
}

// ---- the task function ----

TaskInfo TaskEmitter::emit() {
  b_.add_capability(spv::CapabilityShader);
  if (o_.int64) b_.add_capability(spv::CapabilityInt64Atomics);
  plan_word_views();
  const ir::Stmt* loop = task_.kind == TaskKind::serial ? nullptr : task_.roots.front();
  int block_dim = 0;
  if (const auto* rf = ir::dyn_cast<ir::RangeForStmt>(loop)) block_dim = rf->block_dim;
  if (const auto* sf = ir::dyn_cast<ir::StructForStmt>(loop)) block_dim = sf->block_dim;
  if (task_.offloaded) block_dim = task_.offloaded->block_dim;
  workgroup_size_ = loop ? (block_dim > 0 ? static_cast<uint32_t>(block_dim) : o_.workgroup_size) : 1;

  Id void_t = b_.type_void();
  Id fn = b_.begin_function(void_t, b_.type_function(void_t, {}));
  b_.set_name(fn, task_.name);
  b_.begin_block(b_.new_label());
  if (loop) declare_invocation_ids();
  setup_stacks();
  emit_imports();
  if (loop)
    emit_parallel_loop(*loop);
  else
    for (const ir::Stmt* s : task_.roots) {
      emit_stmt(*s);
      PB_ASSERT(b_.block_open(), "a root statement closed the entry function's block");
    }
  end_segment();
  publish_overflow();
  return finish(fn);
}

void TaskEmitter::declare_invocation_ids() {
  Id v3 = b_.type_vector(t_u32(), 3);
  Id in_ptr = b_.type_pointer(spv::StorageClassInput, v3);
  gid_var_ = b_.global_variable(in_ptr, spv::StorageClassInput);
  b_.decorate(gid_var_, spv::DecorationBuiltIn, {spv::BuiltInGlobalInvocationId});
  b_.set_name(gid_var_, "global_invocation_id");
  num_groups_var_ = b_.global_variable(in_ptr, spv::StorageClassInput);
  b_.decorate(num_groups_var_, spv::DecorationBuiltIn, {spv::BuiltInNumWorkgroups});
  b_.set_name(num_groups_var_, "num_workgroups");
  gid_ = b_.op(spv::OpCompositeExtract, t_u32(), {b_.op(spv::OpLoad, v3, {gid_var_}), 0});
  b_.set_name(gid_, "invocation");
}

// Closes the entry function and describes the module.
TaskInfo TaskEmitter::finish(Id fn) {
  b_.op_void(spv::OpReturn, {});
  b_.end_function();
  declare_entry_point(fn);

  TaskInfo info;
  info.name = task_.name;
  info.kind = task_.kind;
  info.workgroup_size = workgroup_size_;
  info.heap_stride_words = stacks_.empty() || o_.storage != StackStorage::heap ? 0 : heap_slice_words_;
  for (const StackSlot& s : stacks_) info.stacks.push_back(s.layout);
  for (const auto& [binding, var] : buffer_vars_) info.bindings.push_back(binding);
  if (res_.temps && !temps_views_.empty() && !buffer_vars_.count(*res_.temps)) {  // only a 64-bit view
    info.bindings.push_back(*res_.temps);
    std::sort(info.bindings.begin(), info.bindings.end());
  }
  info.spirv = b_.words();
  info.streaming = info.stacks.empty() && !has_atomic(info.spirv);
  info.unroll = unroll_;
  info.vector = vector_;
  return info;
}

bool has_atomic(const std::vector<uint32_t>& words) {
  for (size_t i = 5; i < words.size();) {  // after the header: (word count << 16 | opcode) each
    uint32_t op = words[i] & 0xffffu, count = words[i] >> 16;
    if ((op >= spv::OpAtomicLoad && op <= spv::OpAtomicXor) || op == spv::OpAtomicFAddEXT ||
        op == spv::OpAtomicFMinEXT || op == spv::OpAtomicFMaxEXT)
      return true;
    i += count ? count : 1;
  }
  return false;
}

void TaskEmitter::declare_entry_point(Id fn) {
  std::vector<Id> interface;
  if (gid_var_) interface = {gid_var_, num_groups_var_};
  b_.add_entry_point(spv::ExecutionModelGLCompute, fn, task_.name, interface);
  uint32_t size[3] = {workgroup_size_, 1, 1};
  b_.add_execution_mode(fn, spv::ExecutionModeLocalSize, size);
  if (o_.preserve_inf_nan || (o_.preserve_inf_nan_f64 && o_.float64)) {
    b_.add_extension("SPV_KHR_float_controls");  // core from SPIR-V 1.4; these modules are 1.3
    b_.add_capability(spv::CapabilitySignedZeroInfNanPreserve);
  }
  if (o_.preserve_inf_nan) {
    uint32_t width[1] = {32};
    b_.add_execution_mode(fn, spv::ExecutionModeSignedZeroInfNanPreserve, width);
  }
  if (o_.preserve_inf_nan_f64 && o_.float64) {
    uint32_t width[1] = {64};
    b_.add_execution_mode(fn, spv::ExecutionModeSignedZeroInfNanPreserve, width);
  }
}

// count = end > begin ? end - begin : 0, as an unsigned integer of the bounds' width.
Id TaskEmitter::range_count(Id begin, Id end, ScalarKind k, Id* count_type) {
  bool wide = ir::bit_width(k) == 64;
  ScalarKind ck = wide ? ScalarKind::u64 : ScalarKind::u32;
  *count_type = value_type(ck);
  Id greater = b_.op(ir::is_signed(k) ? spv::OpSGreaterThan : spv::OpUGreaterThan, t_bool(), {end, begin});
  Id diff = b_.op(spv::OpISub, value_type(k), {end, begin});
  if (k != ck) diff = b_.op(spv::OpBitcast, *count_type, {diff});
  return b_.op(spv::OpSelect, *count_type, {greater, diff, constant(ck, 0)});
}

// A grid-stride loop: invocation i runs iterations i, i + total, ... of the loop's range. An
// offloaded task's tls prologue runs before it and its tls epilogue after it, once per invocation.
void TaskEmitter::emit_parallel_loop(const ir::Stmt& loop) {
  CurrentStmt scope(*this, &loop);
  const auto* rf = ir::dyn_cast<ir::RangeForStmt>(&loop);
  const ir::OffloadedStmt* off = task_.offloaded;
  if (off) {
    check_no_block_local_storage(*off);
    if (off->tls_prologue) emit_block(*off->tls_prologue);
  }
  const bool range = rf || (off && off->task == ir::TaskType::range_for);
  Id count = 0, count_type = t_u32();
  ScalarKind bound_kind = ScalarKind::i32;
  Id begin = 0, end = 0;
  if (range) {
    if (rf) {
      bound_kind = rf->begin()->type.scalar;
      begin = value(rf->begin());
      end = value(rf->end());
    } else {
      begin = task_bound(*off, off->begin);
      end = task_bound(*off, off->end);
    }
    count = range_count(begin, end, bound_kind, &count_type);
    if (count_type != t_u32()) {  // 64-bit bounds: saturate the trip count to 32 bits
      Id limit = constant(ScalarKind::u64, 0xffffffffu);
      count = b_.op(spv::OpUConvert, t_u32(), {glsl(GLSLstd450UMin, ScalarKind::u64, {count, limit})});
      note(fmt::format("range for ${} has 64-bit bounds: at most 2^32-1 iterations run", loop.id));
    }
  } else {
    count = c_u32(1);
    auto shape = struct_for_shape(k_, loop);
    int rank = struct_for_rank(k_, loop);
    for (int axis = 0; axis < rank; ++axis)
      count = b_.op(spv::OpIMul, t_u32(), {count, space_extent(loop, shape, axis)});
  }
  b_.set_name(count, "iterations");
  Id t_ptr = b_.type_pointer(spv::StorageClassFunction, t_u32());
  Id t_var = b_.function_variable(t_ptr);
  b_.set_name(t_var, "iteration");
  b_.op_void(spv::OpStore, {t_var, gid_});
  Id v3 = b_.type_vector(t_u32(), 3);
  Id groups = b_.op(spv::OpCompositeExtract, t_u32(), {b_.op(spv::OpLoad, v3, {num_groups_var_}), 0});
  Id stride = b_.op(spv::OpIMul, t_u32(), {groups, c_u32(workgroup_size_)});

  const std::map<const ir::Stmt*, uint32_t> vec = range ? vector_pointers(loop) : std::map<const ir::Stmt*, uint32_t>{};
  const uint32_t unroll = !vec.empty() ? kVectorLanes : range ? unroll_factor() : 1;
  unroll_ = vec.empty() ? unroll : 1;
  vector_ = vec.empty() ? 1 : kVectorLanes;
  // Vector steps: t counts steps of kVectorLanes iterations, ceil(count / kVectorLanes) of them.
  Id steps = vec.empty() ? count
                         : b_.op(spv::OpIAdd, t_u32(),
                                 {b_.op(spv::OpShiftRightLogical, t_u32(), {count, c_u32(2)}),
                                  b_.op(spv::OpSelect, t_u32(),
                                        {b_.op(spv::OpINotEqual, t_bool(),
                                               {b_.op(spv::OpBitwiseAnd, t_u32(), {count, c_u32(3)}), c_u32(0)}),
                                         c_u32(1), c_u32(0)})});
  auto [header, check, body, cont, merge] = b_.begin_loop(true);
  Id t = b_.op(spv::OpLoad, t_u32(), {t_var});
  b_.op_void(spv::OpBranchConditional, {b_.op(spv::OpULessThan, t_bool(), {t, steps}), body, merge});
  b_.begin_block(body);
  if (unroll > 1) {
    UnrolledRange r{t, count, stride, begin, end, bound_kind, rf && rf->reversed};
    if (vec.empty())
      emit_unrolled_step(loop, r, unroll);
    else
      emit_vector_step(loop, r, vec);
    if (b_.block_open()) b_.op_void(spv::OpBranch, {cont});
    b_.begin_block(cont);
    Id step = vec.empty() ? b_.op(spv::OpIMul, t_u32(), {stride, c_u32(unroll)}) : stride;
    b_.op_void(spv::OpStore, {t_var, b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpLoad, t_u32(), {t_var}), step})});
    b_.op_void(spv::OpBranch, {header});
    b_.begin_block(merge);
    if (off && off->tls_epilogue) emit_block(*off->tls_epilogue);
    return;
  }
  if (range) {
    Id tb = int_convert(t, ScalarKind::u32, bound_kind);
    Id index = rf && rf->reversed
                   ? b_.op(spv::OpISub, value_type(bound_kind),
                           {b_.op(spv::OpISub, value_type(bound_kind), {end, constant(bound_kind, 1)}), tb})
                   : b_.op(spv::OpIAdd, value_type(bound_kind), {begin, tb});
    loop_indices_[&loop] = {{index, bound_kind}};
    loop_linear_[&loop] = {index, bound_kind};
    b_.set_name(index, fmt::format("i{}", loop.id));
  } else {
    emit_struct_for_indices(loop, t);
    loop_linear_[&loop] = {t, ScalarKind::u32};
  }
  loops_.push_back({cont, merge, false});
  if (Id in_list = range ? 0 : listed(loop, t))
    emit_if(in_list, [&] { emit_block(loop_body(task_)); });
  else
    emit_block(loop_body(task_));
  loops_.pop_back();
  if (b_.block_open()) b_.op_void(spv::OpBranch, {cont});
  b_.begin_block(cont);
  Id next = b_.op(spv::OpIAdd, t_u32(), {b_.op(spv::OpLoad, t_u32(), {t_var}), stride});
  b_.op_void(spv::OpStore, {t_var, next});
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
  if (off && off->tls_epilogue) emit_block(*off->tls_epilogue);
}

// Extent `axis` of the space a struct for walks: a constant, or a push constant.
Id TaskEmitter::space_extent(const ir::Stmt& loop, const std::optional<ir::Shape>& shape, int axis) {
  if (shape) return c_u32(static_cast<uint32_t>((*shape)[static_cast<size_t>(axis)]));
  return push_constant(res_.space_extent_member.at({iterated_space(loop), axis}));
}

// Row-major decomposition of the linear cell number into one i32 index per axis.
void TaskEmitter::emit_struct_for_indices(const ir::Stmt& loop, Id linear) {
  auto shape = struct_for_shape(k_, loop);
  int rank = struct_for_rank(k_, loop);
  std::vector<Id> indices(static_cast<size_t>(rank));
  Id rest = linear;
  for (int axis = rank - 1; axis >= 0; --axis) {
    if (axis == 0) {
      indices[0] = rest;
      break;
    }
    Id extent = space_extent(loop, shape, axis);
    indices[static_cast<size_t>(axis)] = b_.op(spv::OpUMod, t_u32(), {rest, extent});
    rest = b_.op(spv::OpUDiv, t_u32(), {rest, extent});
  }
  auto& out = loop_indices_[&loop];
  for (Id i : indices) out.emplace_back(b_.op(spv::OpBitcast, value_type(ScalarKind::i32), {i}), ScalarKind::i32);
}

}  // namespace pb::codegen::spirv::detail
