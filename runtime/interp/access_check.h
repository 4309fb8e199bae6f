// The global data access rule at run time (`passbench run --check-global-access`): within one
// launch, an element of a differentiable field (one with a gradient field) or float ndarray that
// has been read must not be written afterwards. The interpreter reports each read element here and
// asks before each write; the first violating write is reported with both statements, their
// iterations of the top-level loop and the element. Exact where the static check
// (check_global_access) can only say "maybe".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/kernel.h"
#include "ir/value.h"
#include "runtime/interp/state.h"

namespace pb::runtime::detail {

class GlobalAccessTracker {
 public:
  // Whether accesses through `ptr` (a global ptr or external ptr) are tracked.
  static bool tracked(const ir::Kernel& k, const ir::Stmt& ptr);

  void read(const ir::Value* cell, const ir::Stmt* load, int64_t iteration) {
    reads_.try_emplace(cell, Read{load, iteration});
  }
  // The violation message when `cell` was read earlier in the launch, else nullopt.
  std::optional<std::string> write(const ir::Kernel& k, const State& state, const ir::Value* cell,
                                   const ir::Stmt* store, int64_t iteration) const;

 private:
  struct Read {
    const ir::Stmt* load;
    int64_t iteration;  // of the top-level loop; -1 outside every loop
  };
  std::unordered_map<const ir::Value*, Read> reads_;
};

}  // namespace pb::runtime::detail
