// offload: the kernel's top level becomes offloaded tasks, as the reference's offload pass does.
//
// - Each top-level `range for` becomes a range_for task (constant bounds as `range_for(b, e)`,
//   any other bound as the global temporary its value is stored to, `tmp(offset=NB)`); each
//   top-level `struct for` a struct_for task over the same index space (every space is dense,
//   so no listgen or clear_list task is needed). Loop indices then refer to the task.
// - Each run of other top-level statements becomes one serial task.
// - A value a later task uses goes through a global temporary: stored right after it is computed,
//   loaded before each use in the other task. A local (alloca) another task uses becomes a global
//   temporary, zeroed where the alloca was, with its loads and stores turned global; but a root
//   local every read of which follows a store in the same iteration (ir/iteration_private.h)
//   becomes a local of each task that uses it, as if declared in the loop. Constants
//   and pointers (field, ndarray and SNode addresses) are copied into the task that uses them
//   instead (what they are computed from is carried); a copied field pointer no longer
//   activates. Offsets are assigned in task order, each
//   aligned to its size (at least 4 bytes).
// Pre: a verified scalar kernel (run scalarize first) before offloading (no task at the top level). A kernel that is
// all tasks is left unchanged; a mix, or an autodiff stack used by another task, is a UserError. Post: verified; runs
// as before (tasks run in order; values cross tasks only through memory).
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct OffloadOptions {
  int block_dim = 128;  // of a loop task whose loop says adaptive (the reference's GPU default)
  int grid_dim = 0;
};

struct OffloadResult {
  int64_t serial = 0, range_for = 0, struct_for = 0;  // tasks made
  int64_t temporaries = 0;                            // values and locals carried between tasks in global temporaries
  int64_t temporary_bytes = 0;                        // the global temporaries buffer those take
  int64_t cloned = 0;                                 // constants and pointers copied into the task that uses them
  int64_t localized = 0;  // locals given to a task of their own instead of a temporary (iteration-private)
};

OffloadResult offload(ir::Kernel& k, const OffloadOptions& options = {});

class OffloadPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
