// make_dual: forward-mode autodiff. The kernel becomes its Jacobian-vector-product kernel: it
// still computes every primal value, and each real value also gets its tangent, computed right
// after the statement that makes it.
//
// Differentiable data: a float field with a `dual` companion (declared, or inferred as `NAME.dual`
// for a float field that has a `grad` companion), and every float ndarray argument (its dual
// array, `external_ptr ... is_dual=true`). A global load reads the element's dual, a store writes
// it, an atomic add or sub adds the tangent to it. A real local gets a dual local right after it
// (zero-initialised like it), so loop-carried values through any loop need no stacks. Tangent
// formulas: one per op declared to pass a gradient (ir/ops.h); the switches list every op and the
// visitor every statement kind, so a new op or kind without a tangent rule does not compile.
// Non-differentiable ops (comparisons, integer ops, floor, sgn, casts to integers) give tangent 0.
// Precondition: a forward kernel before offloading. Postcondition: verifies; the primal
// computation is unchanged.
// Rejected with a UserError naming the statement: atomic min/max/mul/bit ops on differentiable
// global data, the old value of an atomic on differentiable global data used, autodiff stack
// statements (an already differentiated kernel) and the offloaded stage.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct MakeDualResult {
  int64_t tangent_statements = 0;
  int64_t duals_inferred = 0;  // dual fields created for fields with only a grad companion
};

MakeDualResult make_dual(ir::Kernel& k);

// Whether `ptr` (a global ptr or external ptr) addresses data make_dual differentiates.
bool is_dual_differentiable_ptr(const ir::Kernel& k, const ir::Stmt* ptr);

class MakeDualPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
