// make_adjoint: appends the reverse code of every independent block (IB) after its forward code.
//
// Each IB's statements are visited last-to-first; the reverse code accumulates adjoints in
// allocas created at the IB's top and, for global loads, atomically into the gradient fields.
// Forward writes to differentiable fields are removed (their reverse code reads and clears the
// gradient instead); writes to other fields stay and re-execute. An `if` gets a reverse `if` on
// the same condition; a range-for inside an IB gets a clone iterating the other way, whose body
// holds the reverse of the forward body. A `stack load top` passes its adjoint to the stack's top
// (`stack acc adj`); a `stack push` passes the top's adjoint to the pushed value and pops. A
// stack read whose stack changes before the statement that reads it has finished (an if whose
// branch pushes to its condition's stack) is first snapshotted onto a stack of its own. Adjoint formulas recompute from
// the operands, never from the forward result. Forward values the reverse code uses may not dominate it yet: backup_ssa
// fixes that. Non-differentiable operations (comparisons, integer and bit operations, floor,
// ceil, round, sgn, casts to integers) stop gradients.
// Rejected with a UserError naming the statement: atomic min/max/mul/bit ops on a differentiable
// field, atomic min/max/mul/bit ops on a local and the old value of an atomic on a local (a
// local of the iteration is demoted first: demote_atomics{locals_only=true}), while loops,
// continue, using the old value of an atomic on a differentiable field, a differentiable write
// outside every IB, and stack pops or adjoint accesses in the input.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct MakeAdjointResult {
  int64_t blocks = 0;
  int64_t adjoint_statements = 0;
  int64_t forward_writes_removed = 0;
  int64_t snapshots = 0;  // stack reads copied to a snapshot stack
};

MakeAdjointResult make_adjoint(ir::Kernel& k);

class MakeAdjointPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
