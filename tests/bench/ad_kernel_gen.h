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
  // DAG-shaped chains: each op reads the value before it twice, or the chain's first value again
  // (values used by several later values), instead of a constant or a neighbour.
  bool dag = false;
};

// The DAG shape: chains of 64 ops over 2 carried values, one loop deep.
inline AdWorkload dag_workload() { return {.carried = 2, .depth = 1, .chain = 64, .dag = true}; }

// IR text of a kernel of about `statements` forward statements: as many bodies as it takes
// (`one_body` = false), or a single body whose K grows instead (`one_body` = true).
std::string generate_ad_kernel(size_t statements, const AdWorkload& shape, bool one_body);

// A reverse-shaped kernel whose only variable part is `pushes`: one f32 stack pushed `pushes`
// times per iteration of a dynamic loop (same_stack), or `pushes` stacks pushed once each and
// read back with load top (one stack per push: also adds an alloc and a load top per push).
std::string push_family_kernel(size_t pushes, bool same_stack);

}  // namespace pb::bench
