// The CPU backend as a runtime::Backend, through libpassbench_cpu.so (module_api.h), so that a
// process that never runs on the CPU never maps LLVM.
//
// Where the module is looked for: the file named by $PASSBENCH_CPU_MODULE, when set, and nowhere
// else; otherwise libpassbench_cpu.so next to the running executable, then the path the build wrote
// it to. Failing to load it is a UserError naming every place tried and why each failed.
#pragma once

#include <string>

#include "runtime/core/backend.h"
#include "runtime/cpu/module_api.h"

namespace pb::runtime::cpu {

// The process's CPU backend. Capabilities: f64 mode, the dynamic global-access check and stack
// usage; shuffling and decision tracing are refused (parallel loops run in parallel).
Backend& backend();

// The kernel's LLVM module as text for the buffer shapes of `state`, before and after LLVM's
// pipeline at opt_level. Throws as a launch does.
ModuleText module_text(const ir::Kernel& k, const State& state, int opt_level, int64_t part_statements = -1);

// The file the module was loaded from; loads it if not yet loaded.
std::string module_path();

}  // namespace pb::runtime::cpu
