// Internal to codegen/llvm: splits a kernel into tasks and decides how values cross them.
// A value used by a task other than its own is recomputed at the user's entry when it is pure
// (constants, arguments, arithmetic, addresses) and stored to ctx.temps where it is defined
// otherwise; a root local used by several tasks lives in ctx.temps, unless a parallel task only
// reads it after storing it in the same iteration: that task's calls each have their own.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/llvm/emit.h"

namespace pb::codegen::llvmgen::detail {

struct TaskPlan {
  TaskKind kind = TaskKind::serial;
  const ir::Stmt* loop = nullptr;        // parallel: RangeFor, StructFor or Offloaded
  std::vector<const ir::Stmt*> roots;    // serial: the statements run once, in order
  std::vector<const ir::Stmt*> imports;  // operands first: what the task's entry brings in
  // Root allocas each call of a parallel task keeps for itself (ir/iteration_private.h).
  std::vector<const ir::Stmt*> private_allocas;
};

struct KernelPlan {
  std::vector<TaskPlan> tasks;
  std::unordered_map<const ir::Stmt*, uint32_t> temp_word;  // spilled value or shared alloca -> word
  std::unordered_set<const ir::Stmt*> spilled;              // stored to temps where defined
  std::unordered_set<const ir::Stmt*> shared_allocas;
  uint32_t temps_words = 0;
};

// True for statements a task may recompute from its operands at its entry.
bool recomputable(const ir::Stmt& s);

// Throws UserError for what cannot be split (a stack used by a task other than its own).
KernelPlan plan_tasks(const ir::Kernel& k);

}  // namespace pb::codegen::llvmgen::detail
