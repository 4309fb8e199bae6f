// Internal to runtime/vulkan: the host side of a launch that needs no device: values to and from
// buffer words as the codegen stores them (std430, u1 as u32, 64-bit kinds as two words), the
// push-constant block, and the iteration count of a task evaluated at launch.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/spirv/compiled_kernel.h"
#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime::vulkan::detail {

void append_value(std::vector<uint32_t>& out, const ir::Value& v, ir::ScalarKind as);
ir::Value read_value(const uint32_t* words, size_t i, ir::ScalarKind k);
// A returned value of IR type `k` from its slot: as read_value, with 8- and 16-bit integers in a
// 32-bit word (the codegen lowers them so).
ir::Value read_return(const uint32_t* slot, ir::ScalarKind k);

// The host buffer a field, gradient or ndarray binding reads and writes; nullptr for the others.
// Throws UserError when the state has no buffer for it.
Buffer* buffer_of(const codegen::spirv::Binding& b, State& state);

// The push-constant block's words.
std::vector<uint32_t> push_constant_words(const ir::Kernel& k, const codegen::spirv::CompiledKernel& ck,
                                          const State& state);

// The iterations of `task`: its constant count, or its range / index space evaluated against
// `state`; nullopt when a bound is not an expression of arguments, constants and field elements.
std::optional<uint64_t> task_iterations(const ir::Kernel& k, const codegen::spirv::TaskInfo& task, const State& state);

}  // namespace pb::runtime::vulkan::detail
