// The global data access rule at run time (`passbench run --check-global-access`): within one
// launch, an element of a differentiable field or float ndarray (ir/differentiable.h) that has
// been read must not be written afterwards, and no two iterations of a top-level loop may write one
// element unless both writes are atomics. A backend reports each read element here and asks
// before each write (store or atomic); the first violating write is reported with both
// statements, their iterations of the top-level loop and the element. Exact where the static
// check (check_global_access) can only say "maybe". Elements are identified by address, so the
// interpreter and the CPU backend share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/kernel.h"
#include "ir/type.h"
#include "runtime/core/state.h"

namespace pb::runtime::detail {

inline constexpr const char* kGlobalAccessRemedy =
    "write the new values to a second field (or ndarray), or split the kernel in two at the write";

class GlobalAccessTracker {
 public:
  struct Read {
    const ir::Stmt* load = nullptr;
    int64_t iteration = -1;  // of the top-level loop; -1 outside every loop
  };
  // The first read of `cell` is kept.
  void read(const void* cell, const ir::Stmt* load, int64_t iteration) {
    reads_.try_emplace(cell, Read{load, iteration});
  }
  // The read a write to `cell` would follow, or nullopt.
  std::optional<Read> earlier_read(const void* cell) const {
    auto it = reads_.find(cell);
    if (it == reads_.end()) return std::nullopt;
    return it->second;
  }
  // Records a write (`store`: a plain store, else an atomic) to `cell` in `iteration` of the
  // running top-level loop; returns an earlier write of another iteration when one of the two is
  // a store (atomics commute; a store does not).
  std::optional<Read> overwrite(const void* cell, const ir::Stmt* write, int64_t iteration, bool store) {
    if (iteration < 0) return std::nullopt;
    auto [it, fresh] = writes_.try_emplace(cell, Writes{{write, iteration, store}, {}});
    if (fresh) return std::nullopt;
    Writes& w = it->second;
    for (const Write* e : {&w.first, &w.other})
      if (e->stmt && e->iteration != iteration && (store || e->store)) return Read{e->stmt, e->iteration};
    if (w.first.iteration != iteration && (!w.other.stmt || store)) w.other = {write, iteration, store};
    return std::nullopt;
  }
  // The running top-level loop ended: its iterations are ordered against the next one.
  void end_loop() { writes_.clear(); }

 private:
  struct Write {
    const ir::Stmt* stmt = nullptr;
    int64_t iteration = -1;
    bool store = false;
  };
  // The first write of each cell, and one of another iteration (a store where there was one).
  struct Writes {
    Write first, other;
  };
  std::unordered_map<const void*, Read> reads_;
  std::unordered_map<const void*, Writes> writes_;
};

// "field 'x', element [1, 2]," for the element at row-major position `flat` of an array of
// `shape` named `array` (`field 'x'`, `ndarray argument 0`); a 0-d array is just `array`.
std::string element_name(const std::string& array, const ir::Shape& shape, int64_t flat);

// element_name for the interpreter's `cell` in a buffer of `state` ("an element" if none holds it).
std::string state_element_name(const State& state, const ir::Value* cell);

// The violation message for writing `element` with `second` in `iteration` after `first` wrote it
// in another iteration of the same top-level loop.
std::string overwrite_violation(const ir::Kernel& k, const std::string& element, const GlobalAccessTracker::Read& first,
                                const ir::Stmt* second, int64_t iteration);

inline constexpr const char* kOverwriteRemedy =
    "write the element once (guard the store with an if on the loop index, or move it out of the loop), or "
    "accumulate into it with atomic add";

// The violation message for writing `element` with `store` in `iteration` after `read`.
std::string global_access_violation(const ir::Kernel& k, const std::string& element,
                                    const GlobalAccessTracker::Read& read, const ir::Stmt* store, int64_t iteration);

}  // namespace pb::runtime::detail
