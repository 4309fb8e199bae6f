// The CPU backend: kernels compiled to native code through LLVM (codegen/llvm) and ORC LLJIT,
// parallel tasks run over all cores with oneTBB, serial tasks once on the calling thread.
//
// Results come back in the interpreter's types (runtime/core/state.h, RunResult), so a run can
// be compared element by element with the reference interpreter.
//
// Autodiff stacks live on a heap owned by the CpuRuntime: per task, a stride from the task's stack
// allocs (count + primal + adjoint slots of each stack, 16-byte aligned; capacities from max_size
// or the size expression evaluated at launch against the current field and argument values), and
// one slice of that stride per worker thread, reused across the thread's iterations (each alloc
// re-initialises its stack). The heap grows on demand by doubling, or to exactly the bytes needed
// when the doubled allocation fails. An overflowing push sets a flag instead of writing; after the
// task the launch fails with a UserError naming the kernel, task, stack, capacity and remedy, and
// the next launch starts with clear flags. docs/backends.md describes the layout.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/llvm/emit.h"
#include "ir/kernel.h"
#include "runtime/core/launch.h"
#include "runtime/core/state.h"

namespace pb::runtime::cpu {

struct CpuOptions {
  int opt_level = 2;     // LLVM's O0..O3
  bool keep_ir = false;  // keep the LLVM IR text before and after optimization
  // The dynamic global-access check (runtime/core/access_check.h): the kernel reports its
  // accesses to differentiable elements, and every task runs on the calling thread in iteration
  // order, the interpreter's order, so both report the same first violation. The launch fails
  // with it after the task that made it.
  bool check_global_access = false;
  // Blocks of more statements than this are emitted in functions of their own (EmitOptions).
  size_t part_statements = codegen::llvmgen::EmitOptions::kDefaultPartStatements;
};

// A kernel compiled for the buffer shapes of one state. Launch it with memory of those shapes.
class CpuKernel {
 public:
  CpuKernel(const ir::Kernel& k, const State& shapes_from, const CpuOptions& options = {});
  CpuKernel(CpuKernel&&) noexcept;
  ~CpuKernel();
  const ir::Kernel& kernel() const { return *kernel_; }
  const codegen::llvmgen::KernelInfo& info() const;
  const codegen::llvmgen::EmitShapes& shapes() const;
  const std::string& ir_before() const { return ir_before_; }  // with keep_ir
  const std::string& ir_after() const { return ir_after_; }

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  const ir::Kernel* kernel_;
  std::unique_ptr<Impl> impl_;
  std::string ir_before_, ir_after_;
};

// The shapes a kernel compiles in for `state`: its field buffers, ndarrays and index spaces.
codegen::llvmgen::EmitShapes emit_shapes(const ir::Kernel& k, const State& state);

// A state's buffers packed as native arrays (the kernel's declared element types; u1 as bytes).
struct DeviceMemory {
  std::vector<std::vector<uint64_t>> fields;                                  // by field id; empty: no buffer
  std::vector<std::vector<uint64_t>> ndarrays, ndarray_grads, ndarray_duals;  // by argument index
  std::vector<uint64_t> args;                                                 // scalar arguments, one word each
  std::vector<ir::ScalarKind> arg_kinds;                                      // the type each scalar word holds
  std::vector<void*> field_ptrs, ndarray_ptrs, ndarray_grad_ptrs, ndarray_dual_ptrs;
  std::map<std::string, std::vector<int64_t>> activity;  // State::activity: sparse spaces' cells
  // Set by a launch of a kernel with sparse SNodes: the elements under inactive cells are zero, as
  // a launch leaves them, so the next launch need not zero them again. pack leaves it false.
  bool inactive_zeroed = false;
};

// Packs `state` for `kernel` (shapes must be the kernel's compiled ones). Throws UserError.
DeviceMemory pack(const CpuKernel& kernel, const State& state);
// Writes the packed buffers back into `state` (buffers get the declared element types).
void unpack(const CpuKernel& kernel, const DeviceMemory& memory, State& state);

struct TaskLaunch {
  std::string task;
  int64_t iterations = 0;
  int64_t heap_stride_bytes = 0;  // bytes per worker slice (0: no stacks)
};

struct LaunchReport {
  std::vector<TaskLaunch> tasks;
  std::string printed;
  std::vector<ir::Value> returned;
  std::map<int, int64_t> stack_capacity;  // stack alloc id -> capacity of its last launch
  std::map<int, int64_t> stack_deepest;   // stack alloc id -> the most entries it held in the launch
};

// Owns the worker threads' adstack heap (kept across launches) and the thread arena.
class CpuRuntime {
 public:
  // threads 0: all cores. max_heap_bytes (0: none): allocations above it fail, as when the system
  // refuses them (tests use it to exercise the exact-size retry).
  explicit CpuRuntime(int threads = 0, int64_t max_heap_bytes = 0);
  ~CpuRuntime();
  CpuRuntime(const CpuRuntime&) = delete;
  CpuRuntime& operator=(const CpuRuntime&) = delete;

  // Runs every task of `kernel` in order. Throws UserError for a run-time problem (adstack
  // overflow, index out of bounds, failed assert, ...) after the task that hit it. `max_steps`
  // (0: none) bounds the loop iterations of the whole launch: a parallel task's trip count, each
  // nested loop's trip count, each `while` iteration; past it a loop is left and the launch fails
  // naming the loop, so an endless loop ends instead of hanging.
  LaunchReport launch(CpuKernel& kernel, DeviceMemory& memory, uint64_t max_steps = kDefaultMaxSteps);

  int threads() const;                // worker slices
  int64_t heap_bytes() const;         // current heap allocation
  int64_t heap_allocations() const;   // how many times it was (re)allocated
  int64_t heap_needed_bytes() const;  // threads x the largest stride of the last launch

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Compiles, packs, launches and unpacks: the CPU counterpart of runtime::run_kernel, with
// options.max_steps as the launch's step budget. options.f64 runs the kernel widened to f64
// (ir::widen_f32_to_f64), leaving f64 buffers in `state` as the interpreter's f64 mode does.
// options.check_global_access compiles with CpuOptions::check_global_access. Options of the
// interpreter that have no meaning here are refused (shuffle, trace_decisions). Uses a runtime of
// its own unless one is given.
RunResult run_kernel(const ir::Kernel& k, State& state, const RunOptions& options = {}, const CpuOptions& cpu = {},
                     CpuRuntime* runtime = nullptr);

}  // namespace pb::runtime::cpu
