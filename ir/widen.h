// A copy of a kernel with every f32 and f16 made f64: fields, arguments, values, pointers, constants
// (converted exactly) and stacks. Gradient checks use it so that both the finite differences and
// the reverse pipeline (whose simplify folds constants in the kernel's own precision) work in
// double precision.
#pragma once

#include <memory>

#include "ir/kernel.h"

namespace pb::ir {

// Nullptr when the kernel reinterprets bits of an f32 or f16 value or into one (`cast_bits`), whose
// meaning depends on the width.
std::unique_ptr<Kernel> widen_f32_to_f64(const Kernel& k);

}  // namespace pb::ir
