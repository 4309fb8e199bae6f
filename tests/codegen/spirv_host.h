// Launches a compiled kernel on the test SPIR-V interpreter (spirv_exec.h) against a
// runtime::State, as a host would: fields, gradient fields, ndarrays and scalar arguments become
// the buffers and push constants the metadata describes, the tasks run in launch order (the
// optimized modules with `optimize`), and the buffers are copied back into the state.
#pragma once

#include <cstdint>

#include "codegen/spirv/compiled_kernel.h"
#include "ir/kernel.h"
#include "runtime/interp/state.h"

namespace pb::codegen::spirv::test {

struct HostRun {
  uint32_t stack_overflow = 0;  // flag word 0: max over overflowing pushes of stack id + 1
  uint32_t assert_code = 0;     // flag word 1
};

// A task whose invocation count is not known at compile time runs `dynamic_invocations`
// invocations (the grid-stride loop covers any range).
HostRun run_on_host(const ir::Kernel& k, const CompiledKernel& ck, runtime::State& state, bool optimize,
                    uint32_t dynamic_invocations = 8);

// Whether a value the SPIR-V interpreter computed matches the reference interpreter's: integers
// bit for bit; floats equal, both NaN, or within 2e-5 relative (GLSL.std.450 transcendentals are
// not correctly rounded).
bool matches_reference(const ir::Value& a, const ir::Value& b);

}  // namespace pb::codegen::spirv::test
