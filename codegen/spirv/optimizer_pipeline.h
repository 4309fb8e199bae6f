// The spirv-opt pipeline the reference compiler runs on every task, declared once: the report name
// of each step, the equivalent spirv-opt command-line flag, and a factory for the SPIRV-Tools pass.
#pragma once

#include <spirv-tools/optimizer.hpp>
#include <string_view>
#include <vector>

namespace pb::codegen::spirv {

struct OptimizerStep {
  std::string_view name;  // as shown in reports, e.g. "AggressiveDCE"
  std::string_view flag;  // the same pass for the spirv-opt tool, e.g. "--eliminate-dead-code-aggressive"
  spvtools::Optimizer::PassToken (*make_pass)();
};

// Returns the steps in order. Without `intermediate_dce` only the last AggressiveDCE is kept;
// without `compact_ids` the final CompactIds is left out.
std::vector<OptimizerStep> optimizer_steps(bool intermediate_dce, bool compact_ids);

}  // namespace pb::codegen::spirv
