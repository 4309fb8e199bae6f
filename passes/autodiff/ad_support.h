// Facts the reverse-mode stages share: which forward values the reverse code reads, where a
// statement sits relative to its independent block (IB), and what can be recomputed in reverse.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/kernel.h"
#include "ir/numbering.h"
#include "ir/statements.h"

namespace pb::passes::ad {

// reverse_ad differentiates the kernel before offloading: tasks, global temporaries and the SNode
// access chain are refused (check_global_access, its first pass, names the statement).
inline constexpr const char* kOffloadedStageMessage =
    "reverse_ad differentiates a kernel before offloading; this statement belongs to the offloaded stage";
inline constexpr const char* kOffloadedStageRemedy =
    "differentiate the kernel before offloading: dump it at print_ir's \"Lowered\" or \"Simplified II\" stage "
    "(with global ptr statements), or run reverse_ad before `offload` and `lower_access` in the pipeline";
// The first statement of the offloaded stage in `k` (pre-order), or nullptr.
const ir::Stmt* first_offloaded_stage_stmt(const ir::Kernel& k);
// Statements passbench reads and runs but no backend compiles (ir::has_no_backend): refused by
// reverse_ad (check_global_access names the first) and make_dual.
inline constexpr const char* kNoBackendMessage =
    "autodiff does not differentiate this statement (passbench reads it; no backend compiles it yet)";
inline constexpr const char* kNoBackendRemedy =
    "differentiate a dump taken before the passes that add it (print_ir's \"Lowered\" stage), or remove the "
    "statement (loop_unique, assume_in_range and decorate are hints: their uses can take the input instead)";
// The first statement of `k` (pre-order) that no backend compiles, or nullptr.
const ir::Stmt* first_no_backend_stmt(const ir::Kernel& k);

// A float value, or a pointer to one (an alloca holding a float).
bool is_real(const ir::Stmt* s);

// Unary and binary ops whose adjoint formula reads an operand (abs, sin, ..., mul, div, pow,
// atan2, min, max); add, sub, neg and casts are linear and read nothing.
bool is_nonlinear(ir::UnaryOp op);
bool is_nonlinear(ir::BinaryOp op);

// The operand slots of `s` whose forward values the reverse code reads: operands of non-linear
// real ops (but not x in x * c or x / c for a constant c), a select's condition, pointer
// indices, if conditions and range-for bounds.
// A set of operand slots (0..63) as a bit mask, iterable in increasing order without allocating.
class SlotSet {
 public:
  SlotSet() = default;
  void add(size_t slot) { bits_ |= uint64_t{1} << slot; }
  bool empty() const { return bits_ == 0; }

  class iterator {
   public:
    explicit iterator(uint64_t bits) : bits_(bits) {}
    size_t operator*() const { return static_cast<size_t>(__builtin_ctzll(bits_)); }
    iterator& operator++() {
      bits_ &= bits_ - 1;
      return *this;
    }
    bool operator!=(const iterator& o) const { return bits_ != o.bits_; }

   private:
    uint64_t bits_;
  };
  iterator begin() const { return iterator(bits_); }
  iterator end() const { return iterator(0); }

 private:
  uint64_t bits_ = 0;
};

SlotSet required_operand_slots(const ir::Stmt& s);

// Range-for, struct-for and while loops strictly between `s` and `ib` (0: `s` runs once per
// execution of the IB).
int loop_depth_in(const ir::Stmt& s, const ir::Block& ib);

// The loop (range-for, struct-for or while) nearest to `s` that lies inside `ib`, or nullptr.
const ir::Stmt* enclosing_loop_in(const ir::Stmt& s, const ir::Block& ib);

// loop_depth_in and enclosing_loop_in for many statements of one IB: each block's answer is
// computed once, from its parent block's, so a query costs O(1) amortized instead of the
// nesting depth. Valid while no container moves to another block (new blocks are fine).
class IbLoops {
 public:
  explicit IbLoops(const ir::Block& ib) : ib_(ib) {}
  int depth(const ir::Stmt& s) { return s.parent() ? of(s.parent()).depth : 0; }
  const ir::Stmt* nearest(const ir::Stmt& s) { return s.parent() ? of(s.parent()).nearest : nullptr; }
  bool inside(const ir::Stmt& s) { return s.parent() && of(s.parent()).inside; }

 private:
  struct Facts {
    int depth = 0;                      // loops around the block inside the IB
    const ir::Stmt* nearest = nullptr;  // the innermost of them
    bool inside = false;                // the block is the IB or nested in it
  };
  Facts of(const ir::Block* b);

  const ir::Block& ib_;
  std::unordered_map<const ir::Block*, Facts> memo_;
};

// A stack's push or pop between `def` and the point where `user` has finished executing, in
// any iteration: pre-order between them, inside `user`, or inside a loop that encloses `user`
// but not `def`. Reading `def`'s stack again at the reverse of `user` would then see another
// top. `preorder` numbers them all in pre-order (the block holding them).
bool stack_clobbered_between(const ir::Numbering& preorder, const ir::AdStackLoadTopStmt& def, const ir::Stmt& user,
                             const std::vector<const ir::Stmt*>& stack_writes);

}  // namespace pb::passes::ad
