// renumber: numbers statements densely ($0, $1, ...) in pre-order, a container before its body.
// Pre: any kernel. Post: same kernel, ids 0..N-1; changed when any id moved.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

class RenumberPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
