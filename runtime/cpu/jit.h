// Internal to runtime/cpu: a module JIT-compiled with ORC LLJIT (the only LLVM-including file
// of runtime/cpu is jit.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "codegen/llvm/emit.h"

namespace pb::runtime::cpu::detail {

using TaskFn = void (*)(void* ctx, int64_t begin, int64_t end, void* slice);
using CountFn = int64_t (*)(void* ctx);

struct JitCode {
  virtual ~JitCode() = default;
  std::vector<TaskFn> tasks;    // by task index
  std::vector<CountFn> counts;  // by task index; null for serial tasks
};

// Addresses of the host callbacks the module may call (codegen/llvm/emit.h names them).
struct HostCallbacks {
  void* print = nullptr;
  void* access = nullptr;
  void* sparse_reach = nullptr;  // the sparse-SNode host's (runtime/cpu/sparse_host.h)
  void* sparse_lookup = nullptr;
  void* snode_op = nullptr;
  void* cell_list = nullptr;
  void* free_cell_list = nullptr;
};

// Takes the module.
std::unique_ptr<JitCode> jit_compile(codegen::llvmgen::EmittedModule&& m, const HostCallbacks& host);

}  // namespace pb::runtime::cpu::detail
