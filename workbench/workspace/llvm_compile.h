// The LLVM CPU backend's module for a kernel, as text before and after optimization (what
// `passbench compile --target=llvm` shows).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace pb::workbench {

struct LlvmCompile {
  std::string ir_before;           // as emitted
  std::string ir_after;            // after LLVM's pipeline at opt_level
  std::vector<std::string> tasks;  // task function names, in launch order
};

// `k` after `pipeline` (none when empty), emitted for the shapes of the state `inputs` makes
// (the header's shapes when empty). Throws UserError (a failing pass, a construct the backend
// cannot lower, an unknown shape).
// part_statements as RunOptions::cpu_part_statements.
LlvmCompile compile_llvm(const ir::Kernel& k, const std::string& pipeline, int opt_level, int64_t part_statements = -1,
                         const nlohmann::json& inputs = nlohmann::json::object());

}  // namespace pb::workbench
