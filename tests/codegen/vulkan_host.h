// Launches a compiled kernel on the Vulkan device (runtime/vulkan, lavapipe here and in CI)
// against a runtime::State for the differential tests: the optimized modules with `optimize`,
// the buffers copied back into the state, the raw flag words returned.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/spirv/compiled_kernel.h"
#include "ir/kernel.h"
#include "runtime/core/state.h"
#include "runtime/vulkan/runtime.h"

namespace pb::codegen::spirv::test {

// The process-wide runtime, opened on first use; nullptr when there is no Vulkan device
// (vulkan_unavailable() then says why).
runtime::vulkan::Runtime* vulkan();
std::string vulkan_unavailable();

struct HostRun {
  uint32_t stack_overflow = 0;  // flag word 0: max over overflowing pushes of stack id + 1
  uint32_t assert_code = 0;     // flag word 1
};

// A task whose range the host cannot evaluate runs `dynamic_invocations` invocations (the
// grid-stride loop covers any range). Needs vulkan() != nullptr.
HostRun run_on_host(const ir::Kernel& k, const CompiledKernel& ck, runtime::State& state, bool optimize,
                    uint32_t dynamic_invocations = 8);

// Whether a value the device computed matches the reference interpreter's: integers bit for
// bit; floats equal, both NaN, or within `tolerance` relative (GLSL.std.450 transcendentals are
// not correctly rounded).
bool matches_reference(const ir::Value& a, const ir::Value& b, double tolerance = 2e-5);

}  // namespace pb::codegen::spirv::test

// Skips the current test, saying why, only when no Vulkan device exists.
#define PB_REQUIRE_VULKAN()                                                                     \
  do {                                                                                          \
    if (!::pb::codegen::spirv::test::vulkan())                                                  \
      GTEST_SKIP() << "no Vulkan device: " << ::pb::codegen::spirv::test::vulkan_unavailable(); \
  } while (0)
