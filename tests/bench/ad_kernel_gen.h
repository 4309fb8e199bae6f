// Forward kernels shaped like articulated-body physics steps, for the reverse-mode benchmark:
// each "body" is a top-level loop over elements (an independent block) holding K loop-carried
// values updated through D nested dynamic loops (bounds read from the field `n`) by chains of L
// differentiable ops that couple neighbouring values, reading per-body parameter fields.
#pragma once

#include <cstddef>
#include <string>

namespace pb::bench {

struct AdWorkload {
  size_t carried = 8;  // K: loop-carried values per body
  size_t depth = 2;    // D: nested dynamic loops
  size_t chain = 6;    // L: ops per carried value per innermost iteration
};

// IR text of a kernel of about `statements` forward statements: as many bodies as it takes
// (`one_body` = false), or a single body whose K grows instead (`one_body` = true).
std::string generate_ad_kernel(size_t statements, const AdWorkload& shape, bool one_body);

// A reverse-shaped kernel whose only variable part is `pushes`: one f32 stack pushed `pushes`
// times per iteration of a dynamic loop (same_stack), or `pushes` stacks pushed once each and
// read back with load top (one stack per push: also adds an alloc and a load top per push).
std::string push_family_kernel(size_t pushes, bool same_stack);

}  // namespace pb::bench
