// Internal to codegen/spirv: splits a kernel into tasks and decides how values cross them.
//
// Each top-level range for or struct for is a parallel task; each maximal run of other root
// statements is a serial task (one invocation). A task may use root values defined by another
// task: pure ones (constants, arguments, arithmetic, addresses, and global loads whose memory
// nothing writes in between) are recomputed at the task's entry; everything else is stored to
// the `temps` buffer where it is defined and loaded at the entry of the tasks that use it.
// Root allocas used by more than one task live in `temps` too.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/spirv/compiled_kernel.h"
#include "ir/kernel.h"

namespace pb::codegen::spirv::detail {

struct Import {
  const ir::Stmt* stmt = nullptr;
  bool from_temps = false;  // false: recompute the statement at the task's entry
};

struct Task {
  TaskKind kind = TaskKind::serial;
  std::string name;
  std::vector<const ir::Stmt*> roots;                // root statements executed (parallel tasks: the loop)
  std::vector<Import> imports;                       // in root order, so operands come before their users
  std::vector<const ir::Stmt*> shared_allocas;       // root allocas of other tasks used here (in temps)
  std::vector<const ir::AdStackAllocaStmt*> stacks;  // stack allocs inside the task, pre-order
};

struct KernelPlan {
  std::vector<Task> tasks;
  std::unordered_map<const ir::Stmt*, uint32_t> temp_slot;  // spilled value or shared alloca -> word
  std::unordered_set<const ir::Stmt*> spilled;              // stored to temps where defined
  std::unordered_set<const ir::Stmt*> shared_allocas;
  std::unordered_map<const ir::Stmt*, int> stack_id;  // kernel-wide, pre-order
  uint32_t temps_words = 0;
};

// Throws UserError for what cannot be split (a stack used by a task other than its own).
KernelPlan plan_kernel(const ir::Kernel& k);

}  // namespace pb::codegen::spirv::detail
