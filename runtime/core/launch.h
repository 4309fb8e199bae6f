// One launch of one kernel on any backend: what it is asked to do besides computing (RunOptions)
// and what it reports (RunResult). Every backend takes and returns these types, so results compare
// element by element across backends.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/value.h"

namespace pb::runtime {

// The default step budget: seconds of interpretation, far beyond any test or fixture,
// so that `while true` or a trip count of 2e9 ends with an error instead of a hang.
inline constexpr uint64_t kDefaultMaxSteps = 1'000'000'000;

struct RunOptions {
  bool shuffle = false;  // run the threads of each parallel loop in a permuted order
  uint64_t seed = 0;     // the permutation's seed, and the one rand statements draw from
  bool f64 = false;      // compute f32 as f64
  // Executed statements and loop iterations before the run fails (0: no limit).
  uint64_t max_steps = kDefaultMaxSteps;
  bool trace_decisions = false;  // fill RunResult::decision_hash
  // Run stacks that have neither max_size nor a size without a capacity limit (instead of
  // failing), to measure how deep they get.
  bool unsized_stacks_unlimited = false;
  // Refuse writing an element of a differentiable field (one with a gradient field) or float
  // ndarray that was read earlier in the launch (runtime/core/access_check.h).
  bool check_global_access = false;
  // The LLVM CPU backend's code generation (other backends ignore it): blocks of more statements
  // than this are emitted as functions of about this many (codegen/llvm/emit_part.cpp); 0 never
  // splits, -1 takes the backend's default.
  int64_t cpu_part_statements = -1;
};

// Where a launch's time went. Stages a backend does not have stay 0; `kernel_timed` says whether
// kernel_ms comes from device timestamps (otherwise it is host wall time around the launch).
struct LaunchTimes {
  double compile_ms = 0;   // code generation and the backend's compiler (LLVM, spirv-opt, driver pipelines)
  double transfer_ms = 0;  // packing, uploads and downloads
  double kernel_ms = 0;    // the kernel itself
  double total_ms = 0;     // the whole launch as the caller saw it
  bool kernel_timed = false;
  bool compile_cached = false;  // the compiled code came from the backend's cache
};

struct RunResult {
  std::string printed;         // the text of print statements, in execution order
  uint64_t decision_hash = 0;  // with trace_decisions: hash of the decisions, in execution order
  uint64_t decisions = 0;      // with trace_decisions: how many were taken
  // Per stack alloc id, for every stack whose alloc ran: the deepest it got, and the largest
  // capacity its alloc gave it (0: unlimited). Filled by backends whose capabilities say
  // stack_usage.
  std::map<int, int64_t> max_stack_depth;
  std::map<int, int64_t> stack_capacity;
  std::vector<ir::Value> returned;  // the values of the last `return` executed
  LaunchTimes times;
  std::string device;  // the device the launch ran on ("" for the host)
};

}  // namespace pb::runtime
