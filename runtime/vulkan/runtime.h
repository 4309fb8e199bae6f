// Launches compiled SPIR-V kernels (codegen/spirv/compiled_kernel.h) on a Vulkan device against
// the interpreter's host memory (runtime/core/state.h), so that results compare directly.
//
// One launch: every field, gradient field and ndarray the bindings name is uploaded through a
// staging buffer into a device-local storage buffer (both from the runtime's BufferPool), with the temps and a zeroed
// flags buffer; scalar arguments and extents go into push constants at the metadata's offsets; the tasks run in order,
// one compute pipeline each, separated by memory barriers; the buffers come back through the staging buffer into the
// state. Timestamps around each dispatch give kernel time.
//
// Dispatch size: a task's iteration count (constant, or its range evaluated on the host from
// the arguments and the field values at launch; fallback_invocations when the bound is not an
// expression of those), capped at max_workgroups (streaming tasks: streaming_workgroups). Every parallel task loops
// over its range with a grid stride, so any count computes the same result; the count only sizes the heap. Flags: the
// launch result carries the raw flag words; flag_error() turns them into the error.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/spirv/compiled_kernel.h"
#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "runtime/core/launch.h"
#include "runtime/core/state.h"
#include "runtime/vulkan/adstack_heap.h"
#include "runtime/vulkan/buffer_pool.h"
#include "runtime/vulkan/device.h"

namespace pb::runtime::vulkan {

struct LaunchOptions {
  bool optimize = false;            // run spirv-opt (codegen/spirv/optimizer.h) on each module first
  uint32_t max_workgroups = 65535;  // per dispatch (also capped by the device's limit)
  // A streaming task (TaskInfo::streaming) gets at most this many: 32 per SM of a 132-SM GPU, so
  // each invocation keeps loads in flight over several grid-stride steps (docs/performance.md).
  uint32_t streaming_workgroups = 4224;
  uint64_t fallback_invocations = 1024;  // a dynamic range the host cannot evaluate
  // run_kernel: `while` iterations one invocation may run (0: none; above 2^32 - 1 it is capped
  // there), compiled in as LoweringOptions::while_budget.
  uint64_t max_steps = kDefaultMaxSteps;
  // Benchmarks only: each dispatch is recorded this many times back to back (with the barrier
  // between), each repeat timed alone, and its time is their median (LaunchResult::kernel_span_ms
  // keeps the mean with the barriers). Only for kernels whose result does not depend on it.
  uint32_t dispatch_repeat = 1;
};

struct TaskRun {
  std::string task;
  uint64_t invocations = 0;  // dispatched (workgroups x workgroup size)
  uint64_t heap_bytes = 0;   // the heap slice bytes the dispatch uses (stride x invocations)
  double ms = 0;             // from timestamps (0 when the device has none)
};

struct LaunchResult {
  uint32_t stack_overflow = 0;      // flag word 0: max over overflowing pushes of stack id + 1
  uint32_t assert_code = 0;         // flag word 1: max over failed asserts of their code
  uint32_t step_budget = 0;         // flag word 2: max over `while` loops past the budget of their id + 1
  uint32_t loop_cut = 0;            // flag word 3: max over loops the driver left early of their id + 1
  uint32_t problem = 0;             // flag word 4: the first sparse-SNode problem's code
  std::vector<ir::Value> returned;  // the values of the last `return` that ran (none: empty)
  std::vector<TaskRun> tasks;
  // First dispatch start to last dispatch end, from timestamps; with dispatch_repeat, the sum of
  // the tasks' median repeat times.
  double kernel_ms = 0;
  double kernel_span_ms = 0;  // first dispatch start to last dispatch end / dispatch_repeat
  double launch_ms = 0;       // host wall time of the whole launch (uploads, dispatches, downloads)
  bool timed = false;         // kernel_ms and the tasks' ms come from timestamps
};

// The error the flags of `r` mean, or nullopt: an adstack overflow names the kernel, the task,
// the stack ($N), its capacity and the remedy; a failed assert names its message; a `while` past
// the step budget names the loop and the budget.
std::optional<Diagnostic> flag_error(const codegen::spirv::CompiledKernel& ck, const LaunchResult& r);

class Runtime {
 public:
  // Opens the device (see Device). Throws UserError when there is none.
  explicit Runtime(const std::string& device_filter = "");
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const DeviceInfo& device() const { return device_.info(); }
  HeapStats heap_stats() const { return heap_.stats(); }
  PoolStats pool_stats() const { return pool_.stats(); }
  AdStackHeap& heap() { return heap_; }

  // Runs `ck` (compiled from `k`) against `state` and writes every buffer back into it. Throws
  // UserError for what the device cannot run (f64 without shaderFloat64, too many push-constant
  // bytes) and for Vulkan failures; never for the flags (see flag_error).
  LaunchResult launch(const ir::Kernel& k, const codegen::spirv::CompiledKernel& ck, State& state,
                      const LaunchOptions& options = {});

 private:
  struct Layout;
  struct Pipeline;
  Layout& layout_for(uint32_t bindings, uint32_t push_bytes);
  VkPipeline pipeline_for(const Layout& layout, const std::vector<uint32_t>& words, const std::string& entry);
  void clear_pipelines();

  Device device_;
  AdStackHeap heap_;
  BufferPool pool_;      // after device_: released before it
  uint64_t serial_ = 0;  // submissions so far; each launch waits for its own
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_count_ = 0;
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Layout>> layouts_;
  using PipelineKey = std::tuple<const Layout*, std::string, std::vector<uint32_t>>;  // layout, entry, module
  std::map<PipelineKey, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace pb::runtime::vulkan
