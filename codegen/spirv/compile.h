// The SPIR-V backend's entry point: passbench IR in, one Vulkan 1.1 GLCompute module per task
// out, with the metadata a host needs to launch them (codegen/spirv/compiled_kernel.h).
//
// Preconditions: the kernel verifies (else UserError). Stacks are sized (max_size, or a size
// expression, which gets LoweringOptions' capacity).
// Errors: a construct that cannot be lowered is a UserError naming the statement and the task;
// a module that fails spirv-val is an InternalError (a codegen bug) with the validator's message
// and the disassembly around the offending instruction.
#pragma once

#include "codegen/spirv/compiled_kernel.h"
#include "codegen/spirv/options.h"
#include "ir/kernel.h"

namespace pb::codegen::spirv {

CompiledKernel compile(const ir::Kernel& kernel, const LoweringOptions& options = {});

// The types compile() takes: every primitive type (8- and 16-bit integers lowered to 32-bit
// words, codegen/spirv/narrow_ints.h; f16 in f32 words, rounded per result), no quant type. A kernel using another is
// refused up front, naming the first use.
bool compiles_type(ir::DataType t);

}  // namespace pb::codegen::spirv
