// determine_ad_stack_size: gives every adaptive autodiff stack (max_size=0, no size) a capacity.
//
// Per stack, walks the region from its alloc to the end of the alloc's block (the alloc empties
// the stack each time it runs) and takes the longest path of net pushes minus pops. A loop whose
// body never raises the depth on any path contributes the peak of one iteration; a loop whose
// body does (forward pushes popped in a separate reversed loop) is repeated its trip count times,
// symbolically when the bounds are arguments, fields or enclosing loop indices. A constant result
// becomes max_size (at least 1); a symbolic one becomes `size` with max_size=0, evaluated by the
// runtime when the alloc executes. docs/passes.md has the rules and the size grammar.
// Pre: a verified kernel. Post: verified; every stack sized; stacks already sized are untouched.
// A stack pushed on every iteration of a while loop, a struct for, or a loop whose bound is
// outside the size grammar is a pb::UserError naming the stack and the loop.
#pragma once

#include <string>
#include <vector>

#include "passes/pass.h"

namespace pb::passes {

struct StackBound {
  int stack_id = 0;   // the stack alloc's `$N`
  std::string bound;  // `max_size=4` or `size=2 + n[]`
};

struct AdStackSizeResult {
  int64_t stacks_sized = 0;
  int64_t constant = 0;            // sized with a constant max_size
  int64_t symbolic = 0;            // sized with a size expression
  std::vector<StackBound> bounds;  // one per stack, in program order (already sized ones marked `(given)`)
};

AdStackSizeResult determine_ad_stack_sizes(ir::Kernel& k);

class DetermineAdStackSizePass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
