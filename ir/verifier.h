// Structural and type checks on a kernel. Every pass's output must pass them.
// Checks: operands defined earlier in a dominating position (same block or an enclosing one);
// no reference to an erased statement; types agree with the typing rules; loop index refers to
// an enclosing loop; stack ops refer to a stack alloc; local load/store to an alloca; parent
// links; unique ids; continue/while control inside a loop; struct fors at the top level; a stack
// size expression names existing integer fields (with their rank) and arguments, and binds its
// variables.
#pragma once

#include <string>
#include <vector>

#include "ir/kernel.h"

namespace pb::ir {

struct VerifyError {
  const Stmt* stmt = nullptr;  // the offending statement (nullptr for kernel-level problems)
  std::string statement;       // its printed line
  std::string message;
  std::string format() const;  // "in `<f32> $5 = add $3 $4`: message"
};

struct VerifyOptions {
  // Off only between make_adjoint and backup_ssa, whose contract is to restore dominance.
  bool dominance = true;
};

std::vector<VerifyError> verify(const Kernel& k, const VerifyOptions& opts = {});

}  // namespace pb::ir
