// Internal to runtime/cpu: what CpuKernel holds, and helpers shared by its files.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "runtime/cpu/cpu.h"
#include "runtime/cpu/jit.h"

namespace pb::runtime::cpu {

struct CpuKernel::Impl {
  codegen::llvmgen::KernelInfo info;
  codegen::llvmgen::EmitShapes shapes;
  std::unique_ptr<detail::JitCode> code;
  bool one_thread = false;  // CpuOptions::check_global_access: every task on the calling thread
  // Per stack alloc id: the fingerprint of what its size expression read at the last launch and
  // the capacity it gave (a size over a loop reads one element per iteration of its range).
  std::mutex capacities_mutex;
  std::map<int, std::pair<uint64_t, int64_t>> capacities;
};

namespace detail {
int64_t element_bytes(ir::ScalarKind k);
void store_value(void* p, const ir::Value& v, ir::ScalarKind k);
ir::Value load_value(const void* p, ir::ScalarKind k);
codegen::llvmgen::EmitShapes shapes_of(const ir::Kernel& k, const State& st);
}  // namespace detail

}  // namespace pb::runtime::cpu
