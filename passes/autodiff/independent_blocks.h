// identify_independent_blocks: finds the blocks where reverse-mode autodiff places forward and
// reverse code together (docs/autodiff.md, "The stages").
//
// A loop body B is independent when no local load or store inside it touches an alloca defined
// in a strict ancestor block of B. It is a smallest independent block when it is independent and
// either, outside its nested range-fors, it reads or atomically updates a field with a gradient
// (or an ndarray through a gradient pointer), or it contains no nested range-for. A kernel with
// no loops is one independent block (the root). Otherwise loops are walked from the top: a
// smallest IB is recorded; an independent non-smallest body is entered; a dependent body
// records its parent block (or itself at depth 1). Blocks inside recorded blocks are dropped.
// The pass changes nothing; its result shows in --stats and in `replay --annotate-ib`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/differentiable.h"
#include "passes/pass.h"

namespace pb::passes {

// The independent blocks of `k`, in pre-order.
std::vector<ir::Block*> find_independent_blocks(ir::Kernel& k);
// Annotations for ir::PrintOptions::annotate that mark where each IB starts: the loop owning an
// IB body (`# IB 1: this loop's body`) or, for the root, its first statement.
std::function<std::string(const ir::Stmt&)> independent_block_annotations(const ir::Kernel& k);

class IdentifyIndependentBlocksPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
