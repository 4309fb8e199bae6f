// Internal to runtime/interp: the interpreter's autodiff stacks. Each stack alloc of the program
// has a slot; executing the alloc empties it and sets its capacity. Overflow, underflow and an
// unsized stack are UserErrors naming the stack, the statement and the kernel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "ir/value.h"

namespace pb::runtime::detail {

class AdStacks {
 public:
  using Entry = std::pair<ir::Value, ir::Value>;  // (primal, adjoint)

  // `label` names the kernel in errors (`kernel "name"`); both must outlive the stacks.
  AdStacks(const ir::Kernel& k, const std::string& label) : k_(k), label_(label) {}

  void reset(size_t count) { stacks_.assign(count, Stack{}); }
  // Executes `a` in `slot`: empties the stack and gives it `capacity` (0: unsized, refused unless
  // `unsized_unlimited`).
  void alloc(size_t slot, const ir::AdStackAllocaStmt& a, int64_t capacity, bool unsized_unlimited);
  // `at` is the push, pop, ... statement, for errors.
  void push(size_t slot, const ir::AdStackAllocaStmt& a, const ir::Stmt& at, const ir::Value& primal,
            ir::ScalarKind kind);
  // The top entry; `what` names the operation for the underflow error.
  Entry& top(size_t slot, const ir::AdStackAllocaStmt& a, const ir::Stmt& at, const char* what);
  void pop(size_t slot, const ir::AdStackAllocaStmt& a, const ir::Stmt& at);
  // The deepest each executed alloc's stack became (alloc id -> entries).
  void report_depths(std::map<int, int64_t>& out) const;

 private:
  struct Stack {
    std::vector<Entry> entries;  // top at the back
    int64_t capacity = 0;        // 0: unlimited
    int alloc_id = -1;           // the alloc's statement id, once it has run
    int64_t max_depth = 0;
  };
  std::string stack_text(const ir::AdStackAllocaStmt& a) const;

  const ir::Kernel& k_;
  const std::string& label_;
  std::vector<Stack> stacks_;
};

}  // namespace pb::runtime::detail
