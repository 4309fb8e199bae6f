#include "runtime/cpu/jit.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/llvm/module_impl.h"
#include "ir/assert.h"

namespace pb::runtime::cpu::detail {
namespace {

struct LlJitCode : JitCode {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

template <class T>
T check(llvm::Expected<T> v, const char* what) {
  if (!v) PB_ASSERT(false, fmt::format("{}: {}", what, llvm::toString(v.takeError())));
  return std::move(*v);
}
void check(llvm::Error e, const char* what) {
  if (e) PB_ASSERT(false, fmt::format("{}: {}", what, llvm::toString(std::move(e))));
}

}  // namespace

std::unique_ptr<JitCode> jit_compile(codegen::llvmgen::EmittedModule&& m, const HostCallbacks& callbacks) {
  codegen::llvmgen::initialize_native_target();
  auto code = std::make_unique<LlJitCode>();
  code->jit = check(llvm::orc::LLJITBuilder().create(), "cannot create the LLJIT");
  llvm::orc::JITDylib& lib = code->jit->getMainJITDylib();
  const char prefix = code->jit->getDataLayout().getGlobalPrefix();
  lib.addGenerator(check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix), "libm lookup"));
  llvm::orc::SymbolMap host;
  namespace gen = codegen::llvmgen;
  for (auto [name, address] :
       {std::pair{gen::kPrintCallback, callbacks.print}, std::pair{gen::kAccessCallback, callbacks.access},
        std::pair{gen::kSparseReach, callbacks.sparse_reach}, std::pair{gen::kSparseLookup, callbacks.sparse_lookup},
        std::pair{gen::kSparseOp, callbacks.snode_op}, std::pair{gen::kSparseCells, callbacks.cell_list},
        std::pair{gen::kSparseFreeCells, callbacks.free_cell_list}})
    host[code->jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                              llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  check(lib.define(llvm::orc::absoluteSymbols(std::move(host))), "cannot define the host callbacks");
  std::vector<codegen::llvmgen::TaskInfo> tasks = m.info.tasks;
  check(code->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m.module->module), std::move(m.module->context))),
        "cannot add the module to the JIT");
  for (const auto& t : tasks) {
    code->tasks.push_back(check(code->jit->lookup(t.name), "task lookup").toPtr<TaskFn>());
    code->counts.push_back(t.kind == codegen::llvmgen::TaskKind::serial
                               ? nullptr
                               : check(code->jit->lookup(t.name + "_count"), "count lookup").toPtr<CountFn>());
  }
  return code;
}

}  // namespace pb::runtime::cpu::detail
