// Internal to runtime/interp: the capacity an autodiff stack gets when its alloc executes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime::detail {

// The error for running a stack alloc that has no size (max_size=0 and no size expression).
UserError unsized_stack_error(const ir::AdStackAllocaStmt& a, const ir::Kernel& k, const std::string& label);

// max_size when it is fixed; else the size expression evaluated against the arguments and field
// values of this moment, at least 1; 0 for an unsized stack (no max_size, no size). Evaluation
// errors (an index out of bounds, a missing argument) are UserErrors naming `stack_text`.
// `field_bufs` is indexed by field id (null: no buffer).
int64_t stack_capacity(const ir::AdStackAllocaStmt& s, const ir::Kernel& k, const State& st,
                       std::span<Buffer* const> field_bufs, const std::string& stack_text);

// The interpreter's stack capacities over one run: each sized alloc's expression is evaluated at
// its first execution and reused until a store or atomic writes an element of a buffer that some
// size expression of the kernel reads (a field by name, an ndarray argument). The values are
// exactly those of evaluating at every alloc; a stack alloc inside a loop no longer re-evaluates a
// maximum over the whole field at every iteration.
class StackCapacities {
 public:
  // `field_bufs` and the state's ndarrays must keep their storage for the run.
  void bind(const ir::Kernel& k, const State& st, std::span<Buffer* const> field_bufs);
  // Called before every global store and atomic with the cell it writes.
  void note_write(const ir::Value* cell) {
    for (const auto& [begin, end] : read_ranges_)
      if (cell >= begin && cell < end) {
        ++generation_;
        return;
      }
  }
  int64_t capacity(const ir::AdStackAllocaStmt& s, const ir::Kernel& k, const State& st,
                   std::span<Buffer* const> field_bufs, const std::function<std::string()>& stack_text);
  uint64_t evaluations() const { return evaluations_; }  // size expressions evaluated so far

 private:
  std::vector<std::pair<const ir::Value*, const ir::Value*>> read_ranges_;
  uint64_t generation_ = 0;
  uint64_t evaluations_ = 0;
  std::unordered_map<int, std::pair<uint64_t, int64_t>> cached_;  // alloc id -> (generation, capacity)
};

}  // namespace pb::runtime::detail
