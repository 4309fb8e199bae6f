// ModuleBuilder: ids, deduplicated types and constants, sections in the logical layout's order,
// function variables hoisted to the first block, and a hand-built module that passes spirv-val.
#include "codegen/spirv/module_builder.h"

#include "spirv_test_util.h"

namespace pb::codegen::spirv {
namespace {

using test::count_opcode;
using test::instructions;

// The smallest valid compute module: an empty entry point with a local size.
std::vector<uint32_t> empty_compute(ModuleBuilder& b) {
  b.add_capability(spv::CapabilityShader);
  Id void_t = b.type_void();
  Id fn = b.begin_function(void_t, b.type_function(void_t, {}));
  b.begin_block(b.new_label());
  b.op_void(spv::OpReturn, {});
  b.end_function();
  b.add_entry_point(spv::ExecutionModelGLCompute, fn, "main", {});
  uint32_t size[3] = {1, 1, 1};
  b.add_execution_mode(fn, spv::ExecutionModeLocalSize, size);
  b.set_name(fn, "main");
  return b.words();
}

TEST(ModuleBuilder, DeduplicatesTypesAndConstantsButNotStructs) {
  ModuleBuilder b;
  EXPECT_EQ(b.type_int(32, true), b.type_int(32, true));
  EXPECT_NE(b.type_int(32, true), b.type_int(32, false));
  EXPECT_EQ(b.type_float(32), b.type_float(32));
  EXPECT_EQ(b.const_u32(7), b.const_u32(7));
  EXPECT_NE(b.const_u32(7), b.const_i32(7));
  EXPECT_EQ(b.const_bool(true), b.const_bool(true));
  EXPECT_NE(b.const_bool(true), b.const_bool(false));
  Id f = b.type_float(32);
  EXPECT_EQ(b.type_pointer(spv::StorageClassFunction, f), b.type_pointer(spv::StorageClassFunction, f));
  EXPECT_NE(b.type_pointer(spv::StorageClassFunction, f), b.type_pointer(spv::StorageClassStorageBuffer, f));
  // Arrays with and without an explicit stride are different types (Function arrays must have none).
  EXPECT_NE(b.type_array(f, 4), b.type_array(f, 4, 4));
  EXPECT_EQ(b.type_runtime_array(f, 4), b.type_runtime_array(f, 4));
  std::vector<Id> members{f};
  EXPECT_NE(b.type_struct(members), b.type_struct(members));
  b.add_capability(spv::CapabilityShader);
  b.add_capability(spv::CapabilityShader);
  b.glsl450();
  b.glsl450();
  auto words = b.words();
  EXPECT_EQ(count_opcode(words, spv::OpCapability), 1u);
  EXPECT_EQ(count_opcode(words, spv::OpExtInstImport), 1u);
  EXPECT_EQ(count_opcode(words, spv::OpTypeInt), 2u);
  EXPECT_EQ(count_opcode(words, spv::OpConstant), 3u);  // u32 7, i32 7, the array length 4
}

TEST(ModuleBuilder, WritesHeaderAndSectionsInLayoutOrder) {
  ModuleBuilder b;
  auto words = empty_compute(b);
  ASSERT_GE(words.size(), 5u);
  EXPECT_EQ(words[0], spv::MagicNumber);
  EXPECT_EQ(words[1], 0x00010300u);
  EXPECT_EQ(words[3], b.id_bound());
  std::vector<spv::Op> order;
  for (const auto& inst : instructions(words)) order.push_back(inst.opcode);
  std::vector<spv::Op> expected{spv::OpCapability, spv::OpMemoryModel, spv::OpEntryPoint,   spv::OpExecutionMode,
                                spv::OpName,       spv::OpTypeVoid,    spv::OpTypeFunction, spv::OpFunction,
                                spv::OpLabel,      spv::OpReturn,      spv::OpFunctionEnd};
  EXPECT_EQ(order, expected);
  auto v = validate(words);
  EXPECT_TRUE(v.ok) << v.message;
}

TEST(ModuleBuilder, HoistsFunctionVariablesIntoTheFirstBlock) {
  ModuleBuilder b;
  b.add_capability(spv::CapabilityShader);
  Id void_t = b.type_void(), u32 = b.type_int(32, false);
  Id ptr = b.type_pointer(spv::StorageClassFunction, u32);
  Id fn = b.begin_function(void_t, b.type_function(void_t, {}));
  b.begin_block(b.new_label());
  Id next = b.new_label();
  b.op_void(spv::OpBranch, {next});
  EXPECT_FALSE(b.block_open());
  b.begin_block(next);
  Id var = b.function_variable(ptr);  // requested in the second block
  b.op_void(spv::OpStore, {var, b.const_u32(1)});
  b.op_void(spv::OpReturn, {});
  b.end_function();
  b.add_entry_point(spv::ExecutionModelGLCompute, fn, "main", {});
  uint32_t size[3] = {1, 1, 1};
  b.add_execution_mode(fn, spv::ExecutionModeLocalSize, size);
  auto words = b.words();
  auto insts = instructions(words);
  auto label = std::find_if(insts.begin(), insts.end(), [](const auto& i) { return i.opcode == spv::OpLabel; });
  ASSERT_NE(label, insts.end());
  EXPECT_EQ((label + 1)->opcode, spv::OpVariable);
  auto v = validate(words);
  EXPECT_TRUE(v.ok) << v.message << v.excerpt;
}

TEST(ModuleBuilder, EncodesStringsNulTerminatedAndPadded) {
  Operands ops;
  append_string(ops, "abc");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0], 0x00636261u);
  ops.clear();
  append_string(ops, "abcd");
  ASSERT_EQ(ops.size(), 2u);  // four characters need a fifth word-aligned nul
  EXPECT_EQ(ops[1], 0u);
}

TEST(Validate, ReportsTheOffendingInstructionWithContext) {
  ModuleBuilder b;
  b.add_capability(spv::CapabilityShader);
  Id void_t = b.type_void(), f32 = b.type_float(32);
  Id fn = b.begin_function(void_t, b.type_function(void_t, {}));
  b.begin_block(b.new_label());
  Id bad = b.op(spv::OpFAdd, f32, {b.const_u32(1), b.const_u32(2)});  // integer operands to FAdd
  b.set_name(bad, "broken_sum");
  b.op_void(spv::OpReturn, {});
  b.end_function();
  b.add_entry_point(spv::ExecutionModelGLCompute, fn, "main", {});
  uint32_t size[3] = {1, 1, 1};
  b.add_execution_mode(fn, spv::ExecutionModeLocalSize, size);
  auto v = validate(b.words());
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("FAdd"), std::string::npos) << v.message;
  EXPECT_NE(v.excerpt.find("> %broken_sum = OpFAdd"), std::string::npos) << v.excerpt;
}

}  // namespace
}  // namespace pb::codegen::spirv
