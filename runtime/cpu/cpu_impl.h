// Internal to runtime/cpu: what CpuKernel holds, and helpers shared by its files.
#pragma once

#include <map>
#include <memory>

#include "runtime/cpu/cpu.h"
#include "runtime/cpu/jit.h"

namespace pb::runtime::cpu {

struct CpuKernel::Impl {
  codegen::llvmgen::KernelInfo info;
  codegen::llvmgen::EmitShapes shapes;
  std::unique_ptr<detail::JitCode> code;
};

namespace detail {
int64_t element_bytes(ir::ScalarKind k);
void store_value(void* p, const ir::Value& v, ir::ScalarKind k);
ir::Value load_value(const void* p, ir::ScalarKind k);
codegen::llvmgen::EmitShapes shapes_of(const ir::Kernel& k, const State& st);
}  // namespace detail

}  // namespace pb::runtime::cpu
