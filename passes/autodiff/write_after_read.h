// The write-after-read rule of reverse mode, checked statically (part of check_global_access).
//
// The reverse kernel runs after the forward kernel, on the memory the forward kernel left, and it
// reads global memory again wherever it needs a forward value it did not save. A global load
// whose value the reverse kernel needs therefore must not be followed, in the same launch, by a
// store or atomic that may write the element it read: the reverse kernel would read the new value
// (a silently wrong gradient; the reference checks this only at run time, in debug mode, and only
// for float fields). "Needs": the loaded value reaches, through linear ops (add, sub, neg, float
// casts, scaling by a constant) and select values, anything but the value operand of a global store or atomic: a
// nonlinear op, an op without a gradient (a comparison, an integer op), an index, a loop bound,
// a condition, a local, or a store into an array that has a needed load (the reverse kernel replays
// the store and the load reads it back). That covers integer fields too: a trip count read from a field that is
// written afterwards makes the reversed loop run the new count.
//
// A read that a plain store to the same element precedes on every path of the same iteration is
// fine: the reverse kernel replays the forward statements in order, so the store puts the value
// back before the read runs again.
//
// "Followed": later in program order (not in the other branch of an if), or anywhere in a serial
// loop (a while, or a loop nested in another) that holds both, whose next iteration runs it
// after the read. Iterations of a top-level (parallel) loop are checked by the cross-iteration
// rule of check_global_access. "May write the element": same field or ndarray argument, and no axis
// whose index ranges are provably disjoint; conservative otherwise, and the error says so.
#pragma once

#include <functional>
#include <unordered_map>

#include "ir/kernel.h"

namespace pb::passes {

// Throws UserError naming the read, the write and the fix for the first violation. `disjoint`
// says whether two index expressions provably never take the same value.
// Whether `write` can execute after `read` in one launch, in the same iteration of a top-level loop:
// later in pre-order `order` (and not in the other branch of an if), or in a serial loop holding both.
bool may_run_after(const ir::Stmt* read, const ir::Stmt* write,
                   const std::unordered_map<const ir::Stmt*, size_t>& order);

void check_write_after_read(const ir::Kernel& k, const std::function<bool(const ir::Stmt*, const ir::Stmt*)>& disjoint);

}  // namespace pb::passes
