#include "workbench/workspace/llvm_compile.h"

#include <utility>

#include "runtime/cpu/backend.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

LlvmCompile compile_llvm(const ir::Kernel& k, const std::string& pipeline, int opt_level, int64_t part_statements,
                         const nlohmann::json& inputs) {
  std::unique_ptr<ir::Kernel> after = pipeline.empty() ? k.clone() : make_reverse_kernel(k, pipeline);
  runtime::State state = state_from_inputs(*after, inputs, "");
  runtime::cpu::ModuleText text = runtime::cpu::module_text(*after, state, opt_level, part_statements);
  LlvmCompile out;
  out.ir_before = std::move(text.before);
  out.ir_after = std::move(text.after);
  out.tasks = std::move(text.tasks);
  return out;
}

}  // namespace pb::workbench
