#include "codegen/llvm/task_split.h"

#include <fmt/format.h>

#include <functional>

#include "ir/diagnostic.h"
#include "ir/iteration_private.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen::detail {

bool recomputable(const ir::Stmt& s) {
  switch (s.kind()) {
    case ir::StmtKind::Const:
    case ir::StmtKind::ArgLoad:
    case ir::StmtKind::UnaryOp:
    case ir::StmtKind::BinaryOp:
    case ir::StmtKind::TernaryOp:
    case ir::StmtKind::GlobalPtr:
    case ir::StmtKind::ExternalPtr:
    case ir::StmtKind::GetRoot:
    case ir::StmtKind::SNodeLookup:
    case ir::StmtKind::GetCh:
    case ir::StmtKind::Linearize:
    case ir::StmtKind::IntegerOffset:
    case ir::StmtKind::BitExtract:
    case ir::StmtKind::GlobalTemporary:
      return true;
    default:
      return false;
  }
}

namespace {

bool is_parallel_root(const ir::Stmt& s) {
  if (ir::isa<ir::RangeForStmt>(&s) || ir::isa<ir::StructForStmt>(&s)) return true;
  const auto* o = ir::dyn_cast<ir::OffloadedStmt>(&s);
  return o && o->is_loop_task();
}

}  // namespace

KernelPlan plan_tasks(const ir::Kernel& k) {
  KernelPlan plan;
  std::unordered_map<const ir::Stmt*, int> task_of;
  auto mark = [&](const ir::Stmt& root, int t) {
    task_of[&root] = t;
    for (const ir::Block* b : root.blocks())
      if (b) ir::walk(*b, [&](ir::Stmt& s) { task_of[&s] = t; });
  };
  bool open_serial = false;
  for (const ir::Stmt* s : k.root()) {
    const auto* off = ir::dyn_cast<ir::OffloadedStmt>(s);
    if (off && off->task == ir::TaskType::mesh_for)
      throw UserError(fmt::format("`{}` is a mesh_for task: mesh kernels are not compiled (passbench has no mesh "
                                  "model)",
                                  ir::print_stmt(*s, k)),
                      "compare the mesh kernel's IR; compile kernels without a mesh");
    if (off && !off->has_body()) {  // listgen / gc / clear_list: struct fors list their own cells
      open_serial = false;
      continue;
    }
    if (is_parallel_root(*s)) {
      TaskPlan t;
      t.kind = ir::isa<ir::StructForStmt>(s) || (off && off->task == ir::TaskType::struct_for) ? TaskKind::struct_for
                                                                                               : TaskKind::range_for;
      t.loop = s;
      plan.tasks.push_back(t);
      mark(*s, static_cast<int>(plan.tasks.size() - 1));
      open_serial = false;
      continue;
    }
    if (off || !open_serial) {
      plan.tasks.emplace_back();
      open_serial = !off;
    }
    plan.tasks.back().roots.push_back(s);
    mark(*s, static_cast<int>(plan.tasks.size() - 1));
  }

  for (size_t t = 0; t < plan.tasks.size(); ++t) {
    std::unordered_set<const ir::Stmt*> seen;
    std::function<void(const ir::Stmt*, const ir::Stmt*)> bring = [&](const ir::Stmt* v, const ir::Stmt* user) {
      if (!v || seen.count(v)) return;
      auto it = task_of.find(v);
      if (it == task_of.end() || it->second == static_cast<int>(t)) return;
      if (ir::isa<ir::AdStackAllocaStmt>(v))
        throw UserError(fmt::format("stack ${} is allocated in another task than `{}` (allocated at the kernel root "
                                    "outside this task); stacks are per thread, so one stack cannot serve another task",
                                    v->id, ir::print_stmt(*user, k)),
                        "allocate the stack inside the loop that uses it (reverse_ad does)");
      seen.insert(v);
      if (recomputable(*v)) {
        for (const ir::Stmt* o : v->operands()) bring(o, v);
      } else if (ir::isa<ir::AllocaStmt>(v) && plan.tasks[t].loop && ir::iteration_private(*v)) {
        plan.tasks[t].private_allocas.push_back(v);
      } else if (ir::isa<ir::AllocaStmt>(v)) {
        plan.shared_allocas.insert(v);
        plan.temp_word.try_emplace(v, plan.temps_words++);
      } else if (has_value(v->kind())) {
        plan.spilled.insert(v);
        plan.temp_word.try_emplace(v, plan.temps_words++);
      } else {
        throw UserError(fmt::format("`{}` uses `{}` of another task", ir::print_stmt(*user, k), ir::print_stmt(*v, k)),
                        "this IR shape is not supported by the cpu backend");
      }
      plan.tasks[t].imports.push_back(v);
    };
    auto visit_uses = [&](const ir::Stmt& s) {
      for (const ir::Stmt* o : s.operands()) bring(o, &s);
    };
    const TaskPlan& tp = plan.tasks[t];
    std::vector<const ir::Stmt*> roots = tp.loop ? std::vector<const ir::Stmt*>{tp.loop} : tp.roots;
    for (const ir::Stmt* r : roots) {
      visit_uses(*r);
      for (const ir::Block* b : r->blocks())
        if (b) ir::walk(*b, [&](ir::Stmt& s) { visit_uses(s); });
    }
  }
  return plan;
}

}  // namespace pb::codegen::llvmgen::detail
