#include "codegen/spirv/module_builder.h"

#include <cstring>

#include "ir/assert.h"

namespace pb::codegen::spirv {
namespace {

void emit(std::vector<uint32_t>& out, spv::Op opcode, const Operands& operands) {
  PB_ASSERT(operands.size() + 1 < 0x10000, "SPIR-V instruction too long");
  out.push_back(static_cast<uint32_t>((operands.size() + 1) << 16) | static_cast<uint32_t>(opcode));
  out.insert(out.end(), operands.begin(), operands.end());
}

}  // namespace

void append_string(Operands& out, std::string_view text) {
  size_t words = text.size() / 4 + 1;  // always room for the terminating nul
  size_t first = out.size();
  out.resize(first + words, 0);
  std::memcpy(out.data() + first, text.data(), text.size());
}

bool is_terminator(spv::Op opcode) {
  switch (opcode) {
    case spv::OpBranch:
    case spv::OpBranchConditional:
    case spv::OpSwitch:
    case spv::OpReturn:
    case spv::OpReturnValue:
    case spv::OpKill:
    case spv::OpUnreachable:
      return true;
    default:
      return false;
  }
}

ModuleBuilder::ModuleBuilder(uint32_t version) : version_(version) {}

void ModuleBuilder::add_capability(spv::Capability c) {
  if (capability_seen_[static_cast<uint32_t>(c)]) return;
  capability_seen_[static_cast<uint32_t>(c)] = true;
  emit(capabilities_, spv::OpCapability, {static_cast<uint32_t>(c)});
}

void ModuleBuilder::add_extension(std::string_view name) {
  if (extension_seen_.count(name)) return;
  extension_seen_.emplace(std::string(name), true);
  Operands ops;
  append_string(ops, name);
  emit(extensions_, spv::OpExtension, ops);
}

Id ModuleBuilder::ext_inst_import(std::string_view name) {
  Operands key;
  append_string(key, name);
  key.insert(key.begin(), static_cast<uint32_t>(spv::OpExtInstImport));
  if (auto it = dedup_.find(key); it != dedup_.end()) return it->second;
  Id id = fresh_id();
  Operands ops{id};
  append_string(ops, name);
  emit(imports_, spv::OpExtInstImport, ops);
  dedup_.emplace(std::move(key), id);
  return id;
}

void ModuleBuilder::add_entry_point(spv::ExecutionModel model, Id function, std::string_view name,
                                    std::span<const Id> interface) {
  Operands ops{static_cast<uint32_t>(model), function};
  append_string(ops, name);
  ops.insert(ops.end(), interface.begin(), interface.end());
  emit(entry_points_, spv::OpEntryPoint, ops);
}

void ModuleBuilder::add_execution_mode(Id function, spv::ExecutionMode mode, std::span<const uint32_t> literals) {
  Operands ops{function, static_cast<uint32_t>(mode)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  emit(execution_modes_, spv::OpExecutionMode, ops);
}

void ModuleBuilder::set_name(Id id, std::string_view name) {
  Operands ops{id};
  append_string(ops, name);
  emit(debug_names_, spv::OpName, ops);
}

void ModuleBuilder::set_member_name(Id struct_type, uint32_t member, std::string_view name) {
  Operands ops{struct_type, member};
  append_string(ops, name);
  emit(debug_names_, spv::OpMemberName, ops);
}

void ModuleBuilder::decorate(Id id, spv::Decoration d, std::initializer_list<uint32_t> literals) {
  Operands ops{id, static_cast<uint32_t>(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  emit(annotations_, spv::OpDecorate, ops);
}

void ModuleBuilder::decorate_member(Id struct_type, uint32_t member, spv::Decoration d,
                                    std::initializer_list<uint32_t> literals) {
  Operands ops{struct_type, member, static_cast<uint32_t>(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  emit(annotations_, spv::OpMemberDecorate, ops);
}

Id ModuleBuilder::dedup(std::vector<uint32_t>& section, spv::Op opcode, const Operands& key, bool result_type_first) {
  Operands full_key{static_cast<uint32_t>(opcode)};
  full_key.insert(full_key.end(), key.begin(), key.end());
  if (auto it = dedup_.find(full_key); it != dedup_.end()) return it->second;
  Id id = fresh_id();
  Operands ops = key;
  ops.insert(ops.begin() + (result_type_first ? 1 : 0), id);
  emit(section, opcode, ops);
  dedup_.emplace(std::move(full_key), id);
  return id;
}

Id ModuleBuilder::type_void() { return dedup(globals_, spv::OpTypeVoid, {}, false); }
Id ModuleBuilder::type_bool() { return dedup(globals_, spv::OpTypeBool, {}, false); }
Id ModuleBuilder::type_int(uint32_t width, bool is_signed) {
  return dedup(globals_, spv::OpTypeInt, {width, is_signed ? 1u : 0u}, false);
}
Id ModuleBuilder::type_float(uint32_t width) { return dedup(globals_, spv::OpTypeFloat, {width}, false); }
Id ModuleBuilder::type_vector(Id component, uint32_t count) {
  return dedup(globals_, spv::OpTypeVector, {component, count}, false);
}

Id ModuleBuilder::type_array(Id element, uint32_t length, uint32_t stride) {
  Id len = const_u32(length);
  Operands key{static_cast<uint32_t>(spv::OpTypeArray), element, len, stride};
  if (auto it = dedup_.find(key); it != dedup_.end()) return it->second;
  Id id = fresh_id();
  emit(globals_, spv::OpTypeArray, {id, element, len});
  if (stride) decorate(id, spv::DecorationArrayStride, {stride});
  dedup_.emplace(std::move(key), id);
  return id;
}

Id ModuleBuilder::type_runtime_array(Id element, uint32_t stride) {
  Operands key{static_cast<uint32_t>(spv::OpTypeRuntimeArray), element, stride};
  if (auto it = dedup_.find(key); it != dedup_.end()) return it->second;
  Id id = fresh_id();
  emit(globals_, spv::OpTypeRuntimeArray, {id, element});
  decorate(id, spv::DecorationArrayStride, {stride});
  dedup_.emplace(std::move(key), id);
  return id;
}

Id ModuleBuilder::type_struct(std::span<const Id> members) {
  Id id = fresh_id();
  Operands ops{id};
  ops.insert(ops.end(), members.begin(), members.end());
  emit(globals_, spv::OpTypeStruct, ops);
  return id;
}

Id ModuleBuilder::type_pointer(spv::StorageClass storage, Id pointee) {
  return dedup(globals_, spv::OpTypePointer, {static_cast<uint32_t>(storage), pointee}, false);
}

Id ModuleBuilder::type_function(Id return_type, std::span<const Id> params) {
  Operands key{return_type};
  key.insert(key.end(), params.begin(), params.end());
  return dedup(globals_, spv::OpTypeFunction, key, false);
}

Id ModuleBuilder::const_bool(bool value) {
  return dedup(globals_, value ? spv::OpConstantTrue : spv::OpConstantFalse, {type_bool()}, true);
}

Id ModuleBuilder::constant(Id type, uint64_t bits, bool wide) {
  Operands key{type, static_cast<uint32_t>(bits)};
  if (wide) key.push_back(static_cast<uint32_t>(bits >> 32));
  return dedup(globals_, spv::OpConstant, key, true);
}

Id ModuleBuilder::global_variable(Id pointer_type, spv::StorageClass storage) {
  Id id = fresh_id();
  emit(globals_, spv::OpVariable, {pointer_type, id, static_cast<uint32_t>(storage)});
  return id;
}

Id ModuleBuilder::constant_composite(Id type, std::span<const Id> constituents) {
  Operands key{type};
  key.insert(key.end(), constituents.begin(), constituents.end());
  return dedup(globals_, spv::OpConstantComposite, key, true);
}

Id ModuleBuilder::function_parameter(Id type) {
  PB_ASSERT(in_function_ && fn_body_.empty(), "function_parameter after the function's first block");
  Id id = fresh_id();
  emit(fn_header_, spv::OpFunctionParameter, {type, id});
  return id;
}

ModuleBuilder::SuspendedFunction ModuleBuilder::suspend_function() {
  PB_ASSERT(in_function_, "suspend_function outside a function");
  SuspendedFunction f{std::move(fn_header_), std::move(fn_vars_), std::move(fn_body_), fn_first_label_end_,
                      block_open_};
  fn_header_.clear();
  fn_vars_.clear();
  fn_body_.clear();
  fn_first_label_end_ = 0;
  in_function_ = block_open_ = false;
  return f;
}

void ModuleBuilder::resume_function(SuspendedFunction f) {
  PB_ASSERT(!in_function_, "resume_function inside another function");
  fn_header_ = std::move(f.header);
  fn_vars_ = std::move(f.vars);
  fn_body_ = std::move(f.body);
  fn_first_label_end_ = f.first_label_end;
  block_open_ = f.block_open;
  in_function_ = true;
}

Id ModuleBuilder::begin_function(Id return_type, Id function_type) {
  PB_ASSERT(!in_function_, "begin_function inside a function");
  in_function_ = true;
  fn_header_.clear();
  fn_vars_.clear();
  fn_body_.clear();
  fn_first_label_end_ = 0;
  Id id = fresh_id();
  emit(fn_header_, spv::OpFunction,
       {return_type, id, static_cast<uint32_t>(spv::FunctionControlMaskNone), function_type});
  return id;
}

Id ModuleBuilder::function_variable(Id pointer_type, Id initializer) {
  PB_ASSERT(in_function_, "function_variable outside a function");
  Id id = fresh_id();
  Operands ops{pointer_type, id, static_cast<uint32_t>(spv::StorageClassFunction)};
  if (initializer) ops.push_back(initializer);
  emit(fn_vars_, spv::OpVariable, ops);
  return id;
}

ModuleBuilder::LoopLabels ModuleBuilder::begin_loop(bool with_check) {
  LoopLabels l;
  l.header = new_label();
  if (with_check) l.check = new_label();
  l.body = new_label();
  l.cont = new_label();
  l.merge = new_label();
  op_void(spv::OpBranch, {l.header});
  begin_block(l.header);
  op_void(spv::OpLoopMerge, {l.merge, l.cont, spv::LoopControlMaskNone});
  Id first = with_check ? l.check : l.body;
  op_void(spv::OpBranch, {first});
  begin_block(first);
  return l;
}

void ModuleBuilder::begin_block(Id label) {
  PB_ASSERT(in_function_ && !block_open_, "begin_block while another block is open");
  emit(fn_body_, spv::OpLabel, {label});
  if (fn_first_label_end_ == 0) fn_first_label_end_ = fn_body_.size();
  block_open_ = true;
}

Id ModuleBuilder::op(spv::Op opcode, Id result_type, const Operands& operands) {
  PB_ASSERT(block_open_, "instruction emitted outside a block");
  Id id = fresh_id();
  Operands ops{result_type, id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  emit(fn_body_, opcode, ops);
  return id;
}

void ModuleBuilder::op_void(spv::Op opcode, const Operands& operands) {
  PB_ASSERT(block_open_, "instruction emitted outside a block");
  emit(fn_body_, opcode, operands);
  if (is_terminator(opcode)) block_open_ = false;
}

void ModuleBuilder::end_function() {
  PB_ASSERT(in_function_ && !block_open_, "end_function with an open block");
  functions_.insert(functions_.end(), fn_header_.begin(), fn_header_.end());
  functions_.insert(functions_.end(), fn_body_.begin(), fn_body_.begin() + static_cast<long>(fn_first_label_end_));
  functions_.insert(functions_.end(), fn_vars_.begin(), fn_vars_.end());
  functions_.insert(functions_.end(), fn_body_.begin() + static_cast<long>(fn_first_label_end_), fn_body_.end());
  emit(functions_, spv::OpFunctionEnd, {});
  in_function_ = false;
}

std::vector<uint32_t> ModuleBuilder::words() const {
  PB_ASSERT(!in_function_, "words() while a function is open");
  std::vector<uint32_t> out{spv::MagicNumber, version_, 0, next_id_, 0};
  for (const auto* section : {&capabilities_, &extensions_, &imports_})
    out.insert(out.end(), section->begin(), section->end());
  emit(out, spv::OpMemoryModel,
       {static_cast<uint32_t>(spv::AddressingModelLogical), static_cast<uint32_t>(spv::MemoryModelGLSL450)});
  for (const auto* section :
       {&entry_points_, &execution_modes_, &debug_strings_, &debug_names_, &annotations_, &globals_, &functions_})
    out.insert(out.end(), section->begin(), section->end());
  return out;
}

}  // namespace pb::codegen::spirv
