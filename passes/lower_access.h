// lower_access: field pointers become the SNode access chain, as the reference's lower_access does.
//
// Each field lives in a dense SNode under the root: its declared index space (`field x ... in S`),
// else a dense SNode named `S<n>dense` after the reference's numbering (one per field, a name no
// field or space has); its place is the field itself. Every global load, global store and (with
// `lower_atomics`) atomic through `global ptr [x], index [i, j]` gets a chain of its own just
// before it:
//   get root [S0root][root]; linearized(ind {}, stride {}); [S0root][root]::lookup;
//   get child [S0root->S]; per axis `bit_shr i, 0` (the reference's division by the cells below,
//   1 here); linearized(ind {i', j'}, stride {a, b}); [S][dense]::lookup; get child [S->x]
// Lookups of dense SNodes never activate. A global ptr left without users is erased. Fields of
// unknown shape (an undeclared field indexed by the dump, its shape given by the run's inputs)
// and fields of tensor cells (run scalarize first) keep their global ptrs (statistic `skipped`);
// an undeclared field without indices is 0-d.
// Pre: a verified kernel, lowered or offloaded. Post: verified; runs as before (the chain
// addresses the row-major element the global ptr did; indices are not bounds-checked per axis).
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct LowerAccessResult {
  int64_t lowered = 0;  // pointer uses given a chain
  int64_t skipped = 0;  // uses of fields whose shape is unknown or whose cells are tensors
};

LowerAccessResult lower_access(ir::Kernel& k, bool lower_atomics = true);

class LowerAccessPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
