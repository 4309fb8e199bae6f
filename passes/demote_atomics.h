// demote_atomics: an atomic that no other thread can race with becomes load, op, store.
//
// Demoted (the reference's demote_atomics, after offloading):
// - an atomic on a local (alloca) declared in the same parallel scope as the atomic: the same
//   iteration of a top-level parallel loop or parallel task, or both outside every parallel one.
//   A local declared outside the parallel loop that updates it is shared by its iterations and
//   stays atomic;
// - inside an offloaded task's body: an atomic on a thread-local pointer (`thread local ptr`);
// - inside an offloaded serial task: an atomic on any global pointer (a field element, an ndarray
//   element, a global temporary, an SNode cell), unless `serial_globals=false` (the reference
//   keeps them atomic on its SPIR-V backends);
// - inside an offloaded range_for or struct_for task: an atomic on a field or ndarray element
//   when every pointer to that field (or ndarray) in the task addresses the iteration's own
//   element (its indices are the task's loop indices, axis by axis), so no two iterations touch
//   one element.
// The atomic's result (the old value) becomes the load; the new value is the binary op of the
// same name (add sub mul min max bit_and bit_or bit_xor). TLS and BLS prologues and epilogues
// are left alone, as the reference leaves them.
// With `locals_only`, only the first rule applies (reverse_ad runs it first, so that an atomic on
// a thread-private local is differentiated as the load, op and store it means).
// Pre: a verified kernel. Post: verified; behaviour unchanged (no demoted atomic had a
// concurrent writer).
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct DemoteAtomicsResult {
  int64_t local = 0;          // atomics on locals
  int64_t thread_local_ = 0;  // on thread-local pointers
  int64_t serial = 0;         // on global pointers in serial tasks
  int64_t loop_unique = 0;    // on elements only the iteration addresses
};

struct DemoteAtomicsOptions {
  bool serial_globals = true;
  bool locals_only = false;
};

DemoteAtomicsResult demote_atomics(ir::Kernel& k, const DemoteAtomicsOptions& options = {});

class DemoteAtomicsPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
