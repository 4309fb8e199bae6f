// The reference interpreter: runs a kernel on host memory with exact, deterministic semantics.
//
// Top-level statements run once, in order. A top-level range for or struct for is the parallel
// dimension: each iteration is a thread, and threads run one after another (in order, or in a
// seeded pseudo-random permutation with `shuffle`). Nested loops are serial. Arithmetic is
// documented in ir/eval.h. Any run-time problem (integer division by zero, out-of-bounds
// index, autodiff stack overflow/underflow, failed assert, ...) is a pb::UserError naming the
// kernel, the statement and a remedy; `state` then holds whatever was written before it.
//
// With `f64`, every f32 value (fields, ndarrays, scalar args, constants, arithmetic, casts) is
// computed as f64, for finite-difference checks. f32 buffers are widened on entry and stay f64
// afterwards (their dtype says so) so results keep double precision; a later run without `f64`
// narrows them back to f32.
//
// With `trace_decisions`, the run also hashes every branch decision it takes (comparison
// results, select and if conditions, min/max sides, abs/sgn signs, floor/ceil/round and
// float-to-int results, float floordiv/mod quotients, loop trip counts): runs with equal
// hashes took the same path through every kink, which is what finite differences need.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "runtime/interp/state.h"

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
  // ndarray that was read earlier in the launch (runtime/interp/access_check.h). Scalar kernels
  // only: a tensor kernel is refused (scalarize it first).
  bool check_global_access = false;
};

struct RunResult {
  std::string printed;         // the text of print statements, in execution order
  uint64_t decision_hash = 0;  // with trace_decisions: hash of the decisions, in execution order
  uint64_t decisions = 0;      // with trace_decisions: how many were taken
  // Per stack alloc id, for every stack whose alloc ran: the deepest it got, and the largest
  // capacity its alloc gave it (0: unlimited). A size expression is evaluated each time the
  // alloc executes, against the argument and field values of that moment.
  std::map<int, int64_t> max_stack_depth;
  std::map<int, int64_t> stack_capacity;
  std::vector<ir::Value> returned;  // the values of the last `return` executed
};

// Verifies `k` (a kernel that does not verify is a UserError) and runs it against `state`.
RunResult run_kernel(const ir::Kernel& k, State& state, const RunOptions& options = {});

}  // namespace pb::runtime
