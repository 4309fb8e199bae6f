#include "workbench/workspace/llvm_compile.h"

#include "codegen/llvm/emit.h"
#include "runtime/cpu/cpu.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

LlvmCompile compile_llvm(const ir::Kernel& k, const std::string& pipeline, int opt_level,
                         const nlohmann::json& inputs) {
  std::unique_ptr<ir::Kernel> after = pipeline.empty() ? k.clone() : make_reverse_kernel(k, pipeline);
  runtime::State state = state_from_inputs(*after, inputs, "");
  codegen::llvmgen::EmittedModule m = codegen::llvmgen::emit(*after, runtime::cpu::emit_shapes(*after, state));
  LlvmCompile out;
  out.ir_before = codegen::llvmgen::module_text(m);
  codegen::llvmgen::optimize(m, opt_level);
  out.ir_after = codegen::llvmgen::module_text(m);
  for (const auto& t : m.info.tasks) out.tasks.push_back(t.name);
  return out;
}

}  // namespace pb::workbench
