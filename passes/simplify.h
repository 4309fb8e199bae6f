// simplify: local algebraic simplification, to a fixed point.
//
// - Constant folding of every unary, binary and select statement whose operands are constants,
//   with the interpreter's exact semantics (ir/eval.h): f32 in f32, f64 in f64, C integers.
//   Integer division by zero is left in place (it is a run-time error).
// - Identities that are exact in IEEE arithmetic (docs/passes.md lists them): x*1, x/1,
//   x+(-0.0), x-0.0, min/max(x, x), neg(neg(x)), casts to the same type, select(c, a, a);
//   x+0, x*0, x-x, bitwise identities only for integers.
// - Common-subexpression elimination of pure statements (constants, arithmetic, select, pointers,
//   loop indices, argloads) within a block and from dominating (enclosing) blocks.
// - `if` with a constant condition is replaced by the taken branch; select likewise.
// - Store-to-load forwarding for locals within a block (a load after a store, or right after the
//   alloca, which reads zero).
// One round is a single pre-order walk that applies all of these (a statement's operands are
// final when it is visited); another round runs only when this one folded an `if` nested in a
// container (a store it removed may have stopped forwarding around that container).
// Pre: a verified kernel. Post: verified, same behaviour; dead statements are left for dce.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct SimplifyResult {
  int64_t folded = 0;
  int64_t identities = 0;
  int64_t cse = 0;
  int64_t branches_folded = 0;
  int64_t loads_forwarded = 0;
  int64_t rounds = 0;
  bool changed() const { return folded + identities + cse + branches_folded + loads_forwarded > 0; }
};

SimplifyResult simplify(ir::Kernel& k, int64_t max_rounds = 16);

class SimplifyPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
