// A small SPIR-V interpreter for the tests: runs a GLCompute module as passbench emits it (and as
// spirv-opt leaves it) one invocation after another against host memory, so that lowerings can be
// checked against the reference interpreter without a GPU. It covers the instructions passbench's
// modules use (scalars, small vectors, Function arrays, std430 buffers of one runtime array,
// structured control flow, phis, atomics, GLSL.std.450); anything else throws std::runtime_error.
// Transcendental functions use the host's libm, so compare floats with a tolerance.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace pb::codegen::spirv::test {

struct ExecMemory {
  std::map<uint32_t, std::vector<uint32_t>> buffers;  // descriptor binding -> the runtime array's words
  std::vector<uint32_t> push_constants;               // the push-constant block's words
};

// Dispatches ceil(invocations / workgroup_size) workgroups of `workgroup_size` (the module's
// LocalSize) and runs every invocation of them, in order; returns how many ran. `max_steps`
// bounds the executed instructions of each invocation (a runaway loop throws).
uint32_t execute(const std::vector<uint32_t>& module, ExecMemory& memory, uint32_t invocations, uint32_t workgroup_size,
                 uint64_t max_steps = 50'000'000);

}  // namespace pb::codegen::spirv::test
