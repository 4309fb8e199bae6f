// Re-lays a kernel's statements out in memory in pre-order.
// Passes that insert and erase statements leave tree order and memory order unrelated, so a
// later walk of a kernel larger than the cache touches a new cache line (often a new DRAM page)
// at every step. relayout moves each statement, in pre-order, to newly allocated pool memory
// (each size class filling its slabs front to back) and repoints everything that refers to it:
// its neighbours and block, its operands' use lists, its users' operand slots, the blocks it
// owns. Statements keep their identity in every observable way (ids, text, uses) but not their
// address: no Stmt* held outside the kernel survives the call.
// Every kind moves through its own move constructor (Stmt(Stmt&&) does the relinking), never
// bit for bit, so members such as std::string, whose bytes may point into the object, stay valid.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>

#include "ir/kernel.h"

namespace pb::ir {

// What relayout requires of every statement kind, checked per kind at compile time: its move
// constructor is the one a move selects, and it cannot throw. A kind that declares a copy
// constructor and no move constructor fails (its move would copy: new uses, stale links).
template <class T>
concept RelocatableStmt = std::derived_from<T, Stmt> && std::is_nothrow_move_constructible_v<T>;

// Returns the number of statements moved (all of them).
size_t relayout(Kernel& k);

}  // namespace pb::ir
