// A small SPIR-V module builder: fresh ids, deduplicated types and constants, the logical
// layout's sections in order, debug names, and the module as words. It knows nothing of
// passbench IR; codegen/spirv/task_emitter.* drives it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <spirv/unified1/spirv.hpp>
#include <string_view>
#include <vector>

namespace pb::codegen::spirv {

using Id = uint32_t;

// The words of one instruction's operands (everything after the opcode word).
using Operands = std::vector<uint32_t>;

// Encodes a literal string (UTF-8, nul-terminated, padded to whole words).
void append_string(Operands& out, std::string_view text);

class ModuleBuilder {
 public:
  explicit ModuleBuilder(uint32_t version = 0x00010300);

  Id fresh_id() { return next_id_++; }
  uint32_t id_bound() const { return next_id_; }

  // ---- module-level sections (each entry added once) ----
  void add_capability(spv::Capability c);
  void add_extension(std::string_view name);
  Id ext_inst_import(std::string_view name);  // deduplicated by name
  Id glsl450() { return ext_inst_import("GLSL.std.450"); }
  void add_entry_point(spv::ExecutionModel model, Id function, std::string_view name, std::span<const Id> interface);
  void add_execution_mode(Id function, spv::ExecutionMode mode, std::span<const uint32_t> literals);
  void set_name(Id id, std::string_view name);
  void set_member_name(Id struct_type, uint32_t member, std::string_view name);
  void decorate(Id id, spv::Decoration d, std::initializer_list<uint32_t> literals = {});
  void decorate_member(Id struct_type, uint32_t member, spv::Decoration d,
                       std::initializer_list<uint32_t> literals = {});

  // ---- types: deduplicated by their operands, except structs (decorations are per struct) ----
  Id type_void();
  Id type_bool();
  Id type_int(uint32_t width, bool is_signed);
  Id type_float(uint32_t width);
  Id type_vector(Id component, uint32_t count);
  // `stride` 0: no ArrayStride decoration (Function-scope arrays must not have one).
  Id type_array(Id element, uint32_t length, uint32_t stride = 0);
  Id type_runtime_array(Id element, uint32_t stride);
  Id type_struct(std::span<const Id> members);
  Id type_pointer(spv::StorageClass storage, Id pointee);
  Id type_function(Id return_type, std::span<const Id> params);

  // ---- constants: deduplicated by type and value ----
  Id const_bool(bool value);
  Id const_u32(uint32_t value) { return constant(type_int(32, false), value); }
  Id const_i32(int32_t value) { return constant(type_int(32, true), static_cast<uint32_t>(value)); }
  // A scalar numeric constant of `type` (int or float) with raw bits `bits`; `wide` for 64-bit types.
  Id constant(Id type, uint64_t bits, bool wide = false);

  Id global_variable(Id pointer_type, spv::StorageClass storage);
  // A composite constant (array, vector, struct) of `type` from constant ids; deduplicated.
  Id constant_composite(Id type, std::span<const Id> constituents);

  // ---- functions and blocks ----
  Id begin_function(Id return_type, Id function_type);
  // A parameter of the function just begun; all of them before its first block.
  Id function_parameter(Id type);
  // The function being built, set aside by suspend_function so that another one can be built
  // from begin_function to end_function, and continued by resume_function.
  struct SuspendedFunction {
    std::vector<uint32_t> header, vars, body;
    size_t first_label_end = 0;
    bool block_open = false;
  };
  SuspendedFunction suspend_function();
  void resume_function(SuspendedFunction f);
  // A Function-scope variable; placed at the start of the function's first block as SPIR-V requires.
  Id function_variable(Id pointer_type, Id initializer = 0);  // initializer 0: none
  Id new_label() { return fresh_id(); }
  void begin_block(Id label);
  // True between begin_block and the block's terminator.
  bool block_open() const { return block_open_; }
  // A structured loop's labels. `check` (0 unless asked for) is the block that tests the
  // condition and branches to `body` or `merge`.
  struct LoopLabels {
    Id header = 0, check = 0, body = 0, cont = 0, merge = 0;
  };
  // Ends the current block with a branch to a new loop header that declares `merge` and `cont`,
  // branches to `check` (when `with_check`) or else `body`, and begins that block. Labels are
  // allocated in the order header, check, body, cont, merge.
  LoopLabels begin_loop(bool with_check);
  // Emits an instruction with a result; returns the result id.
  Id op(spv::Op opcode, Id result_type, const Operands& operands);
  // Emits an instruction without a result (stores, branches, merges). A terminator closes the block.
  void op_void(spv::Op opcode, const Operands& operands);
  void end_function();

  // The finished module: header and sections in the order the SPIR-V logical layout requires.
  std::vector<uint32_t> words() const;

 private:
  Id dedup(std::vector<uint32_t>& section, spv::Op opcode, const Operands& key, bool result_type_first);

  uint32_t version_;
  Id next_id_ = 1;
  std::vector<uint32_t> capabilities_, extensions_, imports_, entry_points_, execution_modes_, debug_strings_,
      debug_names_, annotations_, globals_, functions_;
  std::map<std::vector<uint32_t>, Id> dedup_;  // opcode + operands -> id (types, constants, imports)
  std::map<uint32_t, bool> capability_seen_;
  std::map<std::string, bool, std::less<>> extension_seen_;
  // The function being built: its variables go after the first label.
  std::vector<uint32_t> fn_header_, fn_vars_, fn_body_;
  size_t fn_first_label_end_ = 0;  // position in fn_body_ just after the first OpLabel
  bool in_function_ = false;
  bool block_open_ = false;
};

// True for instructions that end a block.
bool is_terminator(spv::Op opcode);

}  // namespace pb::codegen::spirv
