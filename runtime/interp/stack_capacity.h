// Internal to runtime/interp: the capacity an autodiff stack gets when its alloc executes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ir/kernel.h"
#include "runtime/interp/state.h"

namespace pb::runtime::detail {

// max_size when it is fixed; else the size expression evaluated against the arguments and field
// values of this moment, at least 1; 0 for an unsized stack (no max_size, no size). Evaluation
// errors (an index out of bounds, a missing argument) are UserErrors naming `stack_text`.
// `field_bufs` is indexed by field id (null: no buffer).
int64_t stack_capacity(const ir::AdStackAllocaStmt& s, const ir::Kernel& k, const State& st,
                       std::span<Buffer* const> field_bufs, const std::string& stack_text);

}  // namespace pb::runtime::detail
