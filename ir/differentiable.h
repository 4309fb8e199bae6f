// Which global elements autodiff, the global-access rule and its run-time checks track: the one
// definition every layer uses.
#pragma once

#include "ir/kernel.h"

namespace pb::ir {

// A float field that has a gradient companion.
bool is_differentiable_field(const Kernel& k, FieldId f);
// `ptr` addresses an element of a differentiable field, or of a float ndarray argument (not its
// gradient or tangent array).
bool is_differentiable_ptr(const Kernel& k, const Stmt* ptr);

}  // namespace pb::ir
