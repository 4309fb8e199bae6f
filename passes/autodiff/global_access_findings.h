// The global data access rule as the reference compiler states it, checked statically: within one
// launch, an element of a differentiable field or ndarray that has been read must not be written
// afterwards. Part of check_global_access.
//
// A finding is a (read, write) pair of one array where the write may run after the read on the
// same element: in the same iteration of the top-level loop (later in program order, not in the
// other branch of an if, or anywhere in a serial loop holding both), or in another iteration of it
// (its iterations run in any order), or in a later top-level statement. Elements are proven apart
// when, on some axis, the index ranges are disjoint; iterations are proven apart when the indices
// on some axis are the same statement, injective in the loop's index (the index itself, plus or
// minus a constant), for every axis of the loop. Everything else is reported as "maybe": the check
// is conservative, never "fine" where a run can break the rule (`passbench run
// --check-global-access` checks it exactly, per element).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/kernel.h"

namespace pb::passes {

struct GlobalAccessFinding {
  const ir::Stmt* read = nullptr;   // a global load
  const ir::Stmt* write = nullptr;  // a global store or atomic
  bool same_element = false;        // identical index statements, same iteration: proven
  bool same_iteration = true;       // else: another iteration of the top-level loop
};

std::vector<GlobalAccessFinding> find_global_access_conflicts(
    const ir::Kernel& k, const std::function<bool(const ir::Stmt*, const ir::Stmt*)>& disjoint);

// Line of each statement (by id) in the kernel's canonical text (passbench print), from 1.
std::unordered_map<int, int> statement_lines(const ir::Kernel& k);

// One finding, as the checker prints it: the array, the read and the write with their lines, the
// verdict and the fix.
std::string describe_finding(const ir::Kernel& k, const GlobalAccessFinding& f,
                             const std::unordered_map<int, int>& lines);

// Writes to one element from different iterations of a top-level (parallel) loop, one of them a
// plain store: the stored value then depends on the order the iterations run in, and a plain
// store's adjoint (read the gradient, then zero it) races, so every iteration takes the whole
// adjoint on a parallel backend. Proven when one unconditional store with loop-invariant indices
// runs in a loop of two or more iterations; "maybe" where the indices do not prove the iterations
// apart (the rule that pairs iterations for find_global_access_conflicts). The description has no
// fix: kOverwriteRemedy is it.
struct OverwriteFinding {
  const ir::Stmt* first = nullptr;   // a global store or atomic
  const ir::Stmt* second = nullptr;  // a global store or atomic; one of the two a store
  bool proven = false;
};

std::vector<OverwriteFinding> find_overwrites(const ir::Kernel& k,
                                              const std::function<bool(const ir::Stmt*, const ir::Stmt*)>& disjoint);

std::string describe_overwrite(const ir::Kernel& k, const OverwriteFinding& f,
                               const std::unordered_map<int, int>& lines);

inline constexpr const char* kOverwriteRemedy =
    "write the element once (guard the store with an if on the loop index, or move it out of the loop), or "
    "accumulate into it with atomic add";

inline constexpr const char* kGlobalAccessRemedy =
    "write the new values to a second field (or ndarray), or split the kernel in two at the write";

}  // namespace pb::passes
