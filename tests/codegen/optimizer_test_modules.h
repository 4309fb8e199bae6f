// SPIR-V assembly for the optimizer and cross-compiler tests, and an assembler helper.
// kAdStackShader has the shape of a lowered autodiff stack: a Function-scope float heap indexed
// dynamically by a count kept in a Function-scope uint array, pushes in a loop bounded at run time,
// pops in a second loop, a helper call (InlineExhaustive grows the ID bound) and a constant-trip
// loop marked Unroll (LoopUnroll grows it a lot).
#pragma once

#include <gtest/gtest.h>

#include <spirv-tools/libspirv.hpp>
#include <string>
#include <vector>

namespace pb::codegen::spirv::test {

inline std::vector<uint32_t> assemble(const std::string& text) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string errors;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* msg) {
    errors += "line " + std::to_string(pos.line) + ": " + msg + "\n";
  });
  std::vector<uint32_t> words;
  EXPECT_TRUE(tools.Assemble(text, &words)) << errors;
  return words;
}

inline std::string disassemble(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string text;
  EXPECT_TRUE(tools.Disassemble(words, &text));
  return text;
}

inline const std::string kAdStackShader = R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rt_float ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
     %voidfn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
       %bool = OpTypeBool
     %fn_ff  = OpTypeFunction %float %float
     %v3uint = OpTypeVector %uint 3
  %ptr_in_v3 = OpTypePointer Input %v3uint
 %ptr_in_uint = OpTypePointer Input %uint
        %gid = OpVariable %ptr_in_v3 Input
   %rt_float = OpTypeRuntimeArray %float
        %Buf = OpTypeStruct %rt_float
  %ptr_sb_buf = OpTypePointer StorageBuffer %Buf
 %ptr_sb_float = OpTypePointer StorageBuffer %float
        %buf = OpVariable %ptr_sb_buf StorageBuffer
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
    %uint_16 = OpConstant %uint 16
    %uint_64 = OpConstant %uint 64
      %int_0 = OpConstant %int 0
    %float_0 = OpConstant %float 0
 %float_half = OpConstant %float 0.5
   %heap_arr = OpTypeArray %float %uint_64
  %count_arr = OpTypeArray %uint %uint_2
 %ptr_fn_heap = OpTypePointer Function %heap_arr
 %ptr_fn_counts = OpTypePointer Function %count_arr
 %ptr_fn_float = OpTypePointer Function %float
 %ptr_fn_uint = OpTypePointer Function %uint
       %main = OpFunction %void None %voidfn
      %entry = OpLabel
       %heap = OpVariable %ptr_fn_heap Function
     %counts = OpVariable %ptr_fn_counts Function
          %i = OpVariable %ptr_fn_uint Function
          %k = OpVariable %ptr_fn_uint Function
        %acc = OpVariable %ptr_fn_float Function
   %gidx_ptr = OpAccessChain %ptr_in_uint %gid %uint_0
       %gidx = OpLoad %uint %gidx_ptr
       %cnt0 = OpAccessChain %ptr_fn_uint %counts %int_0
               OpStore %cnt0 %uint_0
               OpStore %i %uint_0
               OpStore %acc %float_0
      %n_ptr = OpAccessChain %ptr_sb_float %buf %int_0 %uint_0
        %n_f = OpLoad %float %n_ptr
          %n = OpConvertFToU %uint %n_f
               OpBranch %push_header
%push_header = OpLabel
               OpLoopMerge %push_merge %push_continue None
               OpBranch %push_cond
  %push_cond = OpLabel
         %iv = OpLoad %uint %i
         %lt = OpULessThan %bool %iv %n
               OpBranchConditional %lt %push_body %push_merge
  %push_body = OpLabel
      %x_ptr = OpAccessChain %ptr_sb_float %buf %int_0 %iv
          %x = OpLoad %float %x_ptr
         %xs = OpFunctionCall %float %scale %x
          %c = OpLoad %uint %cnt0
       %slot = OpAccessChain %ptr_fn_float %heap %c
               OpStore %slot %xs
         %c1 = OpIAdd %uint %c %uint_1
               OpStore %cnt0 %c1
               OpBranch %push_continue
%push_continue = OpLabel
        %iv2 = OpLoad %uint %i
      %inext = OpIAdd %uint %iv2 %uint_1
               OpStore %i %inext
               OpBranch %push_header
 %push_merge = OpLabel
               OpBranch %pop_header
 %pop_header = OpLabel
               OpLoopMerge %pop_merge %pop_continue None
               OpBranch %pop_cond
   %pop_cond = OpLabel
         %pc = OpLoad %uint %cnt0
         %gt = OpUGreaterThan %bool %pc %uint_0
               OpBranchConditional %gt %pop_body %pop_merge
   %pop_body = OpLabel
        %top = OpISub %uint %pc %uint_1
      %tslot = OpAccessChain %ptr_fn_float %heap %top
         %tv = OpLoad %float %tslot
          %a = OpLoad %float %acc
         %a2 = OpFAdd %float %a %tv
               OpStore %acc %a2
               OpStore %cnt0 %top
               OpBranch %pop_continue
%pop_continue = OpLabel
               OpBranch %pop_header
  %pop_merge = OpLabel
               OpStore %k %uint_0
               OpBranch %u_header
   %u_header = OpLabel
               OpLoopMerge %u_merge %u_continue Unroll
               OpBranch %u_cond
     %u_cond = OpLabel
         %kv = OpLoad %uint %k
        %klt = OpULessThan %bool %kv %uint_16
               OpBranchConditional %klt %u_body %u_merge
     %u_body = OpLabel
      %hslot = OpAccessChain %ptr_fn_float %heap %kv
         %hv = OpLoad %float %hslot
         %a3 = OpLoad %float %acc
         %a4 = OpFMul %float %a3 %float_half
         %a5 = OpFAdd %float %a4 %hv
               OpStore %acc %a5
               OpBranch %u_continue
 %u_continue = OpLabel
        %kv2 = OpLoad %uint %k
      %knext = OpIAdd %uint %kv2 %uint_1
               OpStore %k %knext
               OpBranch %u_header
    %u_merge = OpLabel
        %fin = OpLoad %float %acc
    %out_ptr = OpAccessChain %ptr_sb_float %buf %int_0 %gidx
               OpStore %out_ptr %fin
               OpReturn
               OpFunctionEnd
      %scale = OpFunction %float None %fn_ff
          %p = OpFunctionParameter %float
         %sl = OpLabel
          %r = OpFMul %float %p %float_half
               OpReturnValue %r
               OpFunctionEnd
)";

}  // namespace pb::codegen::spirv::test
