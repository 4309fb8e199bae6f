// `passbench compile K --target=llvm`: the LLVM module before and after optimization.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>

#include "ir/diagnostic.h"
#include "workbench/cli/compile_command.h"
#include "workbench/workspace/llvm_compile.h"
#include "workbench/workspace/replay.h"

namespace pb::cli {

int cmd_compile_llvm(const CompileArgs& a) {
  auto source = workbench::load_source(a.codegen.file, a.codegen.dump);
  std::string pipeline = a.codegen.passes_given ? a.codegen.passes : source.pipeline.value_or("");
  workbench::LlvmCompile c = workbench::compile_llvm(*source.kernel, pipeline, a.opt_level, a.part_statements);
  std::string text = fmt::format(
      "; ---- LLVM IR before optimization ({} task(s): {}) ----\n{}\n"
      "; ---- LLVM IR after optimization (O{}) ----\n{}",
      c.tasks.size(), fmt::join(c.tasks, ", "), c.ir_before, a.opt_level, c.ir_after);
  if (a.output.empty() || a.output == "-") {  // "-": standard output, as for the other targets
    std::cout << text;
  } else {
    std::ofstream out(a.output);
    if (!out) throw UserError(fmt::format("cannot write '{}'", a.output), "check the path");
    out << text;
  }
  std::cerr << fmt::format("compile: kernel '{}'{}, llvm O{}, {} task(s)\n", source.kernel->name,
                           pipeline.empty() ? "" : fmt::format(" after '{}'", pipeline), a.opt_level, c.tasks.size());
  return 0;
}

}  // namespace pb::cli
