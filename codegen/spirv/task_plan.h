// Internal to codegen/spirv: splits a kernel into tasks and decides how values cross them.
//
// Each top-level range for or struct for is a parallel task; each maximal run of other root
// statements is a serial task (one invocation). A task may use root values defined by another
// task: pure ones (constants, arguments, arithmetic, addresses, and global loads whose memory
// nothing writes in between) are recomputed at the task's entry; everything else is stored to
// the `temps` buffer where it is defined and loaded at the entry of the tasks that use it.
// Root allocas used by more than one task live in `temps` too, except in a parallel task that
// only reads them after storing them in the same iteration: there each invocation has its own.
//
// A kernel in the offloaded stage (its root holds `offloaded` statements) keeps its tasks: each
// serial, range_for or struct_for task is one planned task; listgen, gc and clear_list get none
// (a struct_for over a sparse space gets its cell list from a listing task, sparse_layout.h). Its global temporaries
// are the first words of `temps` (word = byte offset / 4); a value one task defines and a later one uses is stored to
// `temps` after them (values and addresses that read no memory are recomputed). A 64-bit value takes an aligned pair of
// words.
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
  const ir::OffloadedStmt* offloaded = nullptr;      // the offloaded stage: the task statement
  std::vector<const ir::Stmt*> roots;                // root statements executed (parallel tasks: the loop)
  std::vector<Import> imports;                       // in root order, so operands come before their users
  std::vector<const ir::Stmt*> shared_allocas;       // root allocas of other tasks used here (in temps)
  std::vector<const ir::Stmt*> private_allocas;      // root allocas each invocation keeps (ir/iteration_private.h)
  std::vector<const ir::AdStackAllocaStmt*> stacks;  // stack allocs inside the task, pre-order
};

// The body a parallel task's loop runs per iteration (a range for's, a struct for's, an
// offloaded range_for or struct_for task's).
const ir::Block& loop_body(const Task& t);

struct KernelPlan {
  std::vector<Task> tasks;
  std::unordered_map<const ir::Stmt*, uint32_t> temp_slot;  // spilled value or shared alloca -> word
  std::unordered_set<const ir::Stmt*> spilled;              // stored to temps where defined
  std::unordered_set<const ir::Stmt*> shared_allocas;
  std::unordered_map<const ir::Stmt*, int> stack_id;  // kernel-wide, pre-order
  uint32_t temps_words = 0;
  uint32_t global_temporary_words = 0;  // the offloaded stage: temps words [0, this) are global temporaries
};

// Throws UserError for what cannot be split (a stack used by a task other than its own, an
// offloaded kernel with other root statements, list maintenance of a sparse SNode).
KernelPlan plan_kernel(const ir::Kernel& k);

}  // namespace pb::codegen::spirv::detail
