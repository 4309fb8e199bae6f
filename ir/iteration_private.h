// Root locals that are private to each iteration of the parallel loops that use them.
//
// A local allocated at the kernel root and used inside a top-level range for or struct for is
// one variable shared by all iterations. Iterations run in order on the interpreter, so a load
// sees the store of the same iteration when a store precedes it there; run in parallel on a
// device, the iterations would race on the shared variable. When every read of the local
// (load or atomic) is preceded, in the same iteration, by a store (an earlier statement of the
// read's own block or of an enclosing block inside the loop body), no iteration observes
// another's value nor the value before the loop, so each invocation may keep its own copy.
// Taichi 0.5 dumps write their loop index to such a local (`for $3 in range(...)`).
#pragma once

#include "ir/stmt.h"

namespace pb::ir {

// True when `alloca` is an `alloca` at the kernel root whose every use is a local load, a local
// store's destination or an atomic's destination, and every load or atomic lies inside a root
// statement (a loop's iteration, an if's branch) after a store to it there, in its own block or
// an enclosing one. No value then flows into a root statement through the local, so each
// parallel loop may give every invocation its own copy, uninitialised.
bool iteration_private(const Stmt& alloca);

}  // namespace pb::ir
