// Re-lays a kernel's statements out in memory in pre-order.
// Passes that insert and erase statements leave tree order and memory order unrelated, so a
// later walk of a kernel larger than the cache touches a new cache line (often a new DRAM page)
// at every step. relayout moves each statement, in pre-order, to newly allocated pool memory
// (each size class filling its slabs front to back) and repoints everything that refers to it:
// its neighbours and block, its operands' use lists, its users' operand slots, the blocks it
// owns. Statements keep their identity in every observable way (ids, text, uses) but not their
// address: no Stmt* held outside the kernel survives the call.
// Kinds holding a std::string (range for, struct for, external pointer, assert) stay where they
// are: libstdc++'s short strings point into themselves, so their bytes cannot simply move.
#pragma once

#include <cstddef>

#include "ir/kernel.h"

namespace pb::ir {

// Returns the number of statements moved.
size_t relayout(Kernel& k);

}  // namespace pb::ir
