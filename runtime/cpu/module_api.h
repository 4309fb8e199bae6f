// The CPU backend as a loadable module: libpassbench_cpu.so holds runtime/cpu, codegen/llvm and
// LLVM itself, so a process that never runs on the CPU backend never maps LLVM (its static
// initialisers alone made every `passbench` command's resident set several times that of stock
// spirv-opt). runtime/cpu/backend.h loads it on first use.
//
// Contract between the two images, which are built from the same sources in one build:
// - the module keeps private copies of the IR and interpreter code it links (its symbols other than
//   the entry point are local), so only plain data crosses: const references to the caller's
//   kernel and state, which the module reads (and, for the state, writes through its buffers), and
//   results it fills in;
// - the module allocates and frees statements in the caller's statement pool (ir/stmt_pool.h): a
//   clone of the caller's kernel joins, and later leaves, the use lists of the caller's statements;
// - no exception crosses: each call catches everything and returns it as a ModuleError, which the
//   caller throws again as the same kind of error;
// - quant and tensor types are ids into per-image tables: the module adopts the caller's;
// - kCpuModuleAbi changes whenever a type crossing the boundary changes; the loader refuses a
//   module built for another.
#pragma once

#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "ir/stmt_pool.h"
#include "ir/type_tables.h"
#include "runtime/core/launch.h"
#include "runtime/core/state.h"

namespace pb::runtime::cpu {

inline constexpr int kCpuModuleAbi = 5;

struct ModuleError {
  enum class Kind { none, refusal, user, internal } kind = Kind::none;
  Diagnostic diagnostic;  // kinds refusal and user
  std::string message;    // kind internal
};

// The LLVM module of a kernel as text, before and after LLVM's pipeline at opt_level.
struct ModuleText {
  std::string before, after;
  std::vector<std::string> tasks;  // task function names, in launch order
};

struct CpuModuleApi {
  int abi = kCpuModuleAbi;
  // Sizes of the crossing types, checked by the loader against its own.
  size_t sizes[4] = {sizeof(ir::Kernel), sizeof(State), sizeof(RunOptions), sizeof(RunResult)};
  // runtime::cpu::run_kernel with the module's own CpuRuntime and default CpuOptions.
  ModuleError (*run_kernel)(const ir::Kernel& k, State& state, const RunOptions& options, RunResult& result);
  // The emitted and optimized module for the buffer shapes of `state`.
  ModuleError (*module_text)(const ir::Kernel& k, const State& state, int opt_level, int64_t part_statements,
                             ModuleText& out);
  // Makes the module look quant and tensor type ids up in the caller's tables (ir/type_tables.h);
  // the loader calls it once, before anything else.
  void (*adopt_type_tables)(ir::TypeTables* host);
  // Makes the module allocate statements from the caller's pool; the loader calls it with the
  // type tables, before anything else.
  void (*adopt_stmt_pool)(ir::stmt_pool::Pool* host);
};

}  // namespace pb::runtime::cpu

// The module's one exported symbol.
extern "C" const pb::runtime::cpu::CpuModuleApi* passbench_cpu_module_api();
