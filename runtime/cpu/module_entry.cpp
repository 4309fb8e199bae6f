// The entry point of libpassbench_cpu.so (runtime/cpu/module_api.h): the CPU backend behind a
// table of functions that never let an exception out.
#include <exception>
#include <utility>

#include "codegen/llvm/emit.h"
#include "ir/assert.h"
#include "runtime/core/backend.h"
#include "runtime/cpu/cpu.h"
#include "runtime/cpu/module_api.h"

namespace pb::runtime::cpu {
namespace {

template <class F>
ModuleError guarded(F&& body) {
  ModuleError e;
  try {
    std::forward<F>(body)();
  } catch (const Refusal& r) {
    e.kind = ModuleError::Kind::refusal;
    e.diagnostic = r.diagnostic();
  } catch (const UserError& u) {
    e.kind = ModuleError::Kind::user;
    e.diagnostic = u.diagnostic();
  } catch (const std::exception& x) {
    e.kind = ModuleError::Kind::internal;
    e.message = x.what();
  } catch (...) {
    e.kind = ModuleError::Kind::internal;
    e.message = "an unknown exception left the cpu backend";
  }
  try {
    raise_deferred_internal_error();  // a check that failed where it could not throw outranks the rest
  } catch (const InternalError& x) {
    e.kind = ModuleError::Kind::internal;
    e.message = x.what();
  }
  return e;
}

ModuleError run(const ir::Kernel& k, State& state, const RunOptions& options, RunResult& result) {
  return guarded([&] { result = cpu::run_kernel(k, state, options); });
}

ModuleError text(const ir::Kernel& k, const State& state, int opt_level, int64_t part_statements, ModuleText& out) {
  return guarded([&] {
    codegen::llvmgen::EmitOptions o;
    if (part_statements >= 0) o.part_statements = static_cast<size_t>(part_statements);
    codegen::llvmgen::EmittedModule m = codegen::llvmgen::emit(k, emit_shapes(k, state), o);
    out.before = codegen::llvmgen::module_text(m);
    codegen::llvmgen::optimize(m, opt_level);
    out.after = codegen::llvmgen::module_text(m);
    out.tasks.clear();
    for (const auto& t : m.info.tasks) out.tasks.push_back(t.name);
  });
}

const CpuModuleApi kApi{kCpuModuleAbi,
                        {sizeof(ir::Kernel), sizeof(State), sizeof(RunOptions), sizeof(RunResult)},
                        &run,
                        &text,
                        &ir::adopt_type_tables,
                        &ir::stmt_pool::adopt_pool};

}  // namespace
}  // namespace pb::runtime::cpu

extern "C" __attribute__((visibility("default"))) const pb::runtime::cpu::CpuModuleApi* passbench_cpu_module_api() {
  return &pb::runtime::cpu::kApi;
}
