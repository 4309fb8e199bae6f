// The CPU backend, loaded on first use from libpassbench_cpu.so (runtime/cpu/module_api.h), so
// that commands which never run on the CPU do not map LLVM.
//
// Where it is looked for: the file named by $PASSBENCH_CPU_MODULE, when set, and nowhere else;
// otherwise libpassbench_cpu.so next to the running executable, then the path the build wrote it to. Failing to load it
// is a UserError naming every place tried and why each failed.
#pragma once

#include <string>

#include "runtime/cpu/module_api.h"

namespace pb::workbench {

// runtime::cpu::run_kernel, through the module. Throws what the backend threw (UserError,
// InternalError) and a UserError when the module cannot be loaded.
runtime::RunResult run_on_cpu(const ir::Kernel& k, runtime::State& state, const runtime::RunOptions& options);

// The kernel's LLVM module as text for the buffer shapes of `state`, before and after LLVM's
// pipeline at opt_level. Throws as run_on_cpu does.
runtime::cpu::ModuleText cpu_module_text(const ir::Kernel& k, const runtime::State& state, int opt_level);

// The file the module was loaded from; loads it if not yet loaded. Throws as run_on_cpu does.
std::string cpu_module_path();

}  // namespace pb::workbench
