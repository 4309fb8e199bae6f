// dce: dead code elimination.
//
// Removes statements whose results are unused and that have no side effects (constants,
// arithmetic, loads, pointers, loop indices, stack loads, unused allocas and stack allocs);
// removes allocas that are only ever stored to, together with those stores; removes local
// variables whose values reach no effect (read only to compute writes into dead variables, such
// as an accumulator nothing reads afterwards) with their writes; removes if/for statements whose
// blocks are all empty. Kept: global stores, atomics, stack push/pop/acc adj,
// print, assert, while loops and their control, continue, and any container with such a
// statement inside. Iterates to a fixed point with a worklist over use-lists: linear in the
// number of statements and uses.
// Pre: a verified kernel. Post: verified; behaviour unchanged (global ptrs are treated as pure:
// passbench fields are dense, so `activate` has no effect to keep).
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct DceResult {
  int64_t removed = 0;          // statements erased
  int64_t allocas_removed = 0;  // store-only allocas erased (with their stores)
  int64_t dead_variables = 0;   // allocas read only on the way to their own (or other dead) writes
};

DceResult eliminate_dead_code(ir::Kernel& k);

class DcePass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
