// scalarize: tensor values and pointers to tensors become scalars, element by element (the
// reference's scalarize, before its code generators).
//
// - A tensor field `x : [Tensor (2, 3) f32][N]` becomes the scalar field `x : f32[N, 2, 3]` (the
//   same data in the same order; its grad and dual companions follow), and an ndarray of tensors
//   `ndarray<[Tensor (3) f32], 1>` becomes `ndarray<f32, 2>`: a pointer to a cell becomes one
//   pointer per element, with the element's indices appended as constants.
// - A tensor alloca becomes one alloca per element; `[$a, $b]` stands for its elements (each cast to
//   the element type when it differs); loads, stores, atomics, unary/binary ops and selects act
//   element by element (a scalar select condition serves every element); `get_element` and a
//   `shift ptr` with a constant offset name one element; a `shift ptr` with a variable offset into
//   a field or ndarray cell computes the element's indices from the offset (div/mod by the cell's
//   extents); `matrix of global ptr` / `matrix of matrix ptr` are their element pointers; a tensor
//   global temporary becomes one temporary per element (consecutive offsets). A struct for over a
//   tensor field keeps walking its cells: it walks a new space of their shape (`dense v.cells : [N]`).
// - A tensor argument passed by value (`arg 2 : [Tensor (2) f32]`) becomes one scalar argument per
//   element at fresh indices after every index the kernel names (`arg 3 : f32 element 0 of arg 2`,
//   ir/kernel.h ArgDecl::element_of); the runtime binds them from the caller's tensor.
// Refused with a located error (the kernel is left unchanged): a variable offset into a local tensor,
// a bit cast of a tensor, a tensor argument with more elements than free argument indices, a tensor
// through the SNode access chain,
// a struct for over the cells of a tensor field of undeclared shape, and any other statement with a
// tensor operand (print, stack, return...).
// Pre: a verified kernel. Post: verified; no statement, field or argument has a tensor type; the
// kernel computes the same values.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

struct ScalarizeResult {
  int64_t tensor_statements = 0;  // removed tensor-typed statements
  int64_t scalar_statements = 0;  // statements created for their elements
  int64_t fields = 0;             // fields, ndarray arguments and tensor arguments made scalar
};

ScalarizeResult scalarize(ir::Kernel& k);

class ScalarizePass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
