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

#include "ir/kernel.h"
#include "runtime/core/launch.h"
#include "runtime/core/state.h"

namespace pb::runtime {

// Verifies `k` (a kernel that does not verify is a UserError) and runs it against `state`.
RunResult run_kernel(const ir::Kernel& k, State& state, const RunOptions& options = {});

}  // namespace pb::runtime
