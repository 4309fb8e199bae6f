// Compile-and-launch on Vulkan in one call, as the workbench uses it: the kernel is compiled for
// the device (f64/i64 capabilities from the types the kernel uses, atomic float add when the
// device has it) with each stack sized by an expression given the capacity that expression
// evaluates to at launch (when above the lowering's default), then launched; the flags become
// errors. A kernel that overflows a stack is a UserError, never a result.
#pragma once

#include "codegen/spirv/compiled_kernel.h"
#include "codegen/spirv/options.h"
#include "ir/kernel.h"
#include "runtime/core/state.h"
#include "runtime/vulkan/runtime.h"

namespace pb::runtime::vulkan {

struct RunReport {
  LaunchResult launch;
  codegen::spirv::CompiledKernel compiled;
  double compile_ms = 0;  // SPIR-V code generation (host wall time)
};

// The lowering `k` gets on `device`: `base` with float64/int64 set from the kernel's types,
// atomic_float_add from the device, and storage=function when a stack holds 64-bit values (heap
// stacks hold 32-bit words only).
codegen::spirv::LoweringOptions lowering_for(const ir::Kernel& k, const DeviceInfo& device,
                                             codegen::spirv::LoweringOptions base = {});

// Throws UserError for what cannot be compiled or run and for a flagged launch (flag_error).
RunReport run_kernel(Runtime& runtime, const ir::Kernel& k, State& state,
                     const codegen::spirv::LoweringOptions& base = {}, const LaunchOptions& options = {});

}  // namespace pb::runtime::vulkan
