#include "codegen/spirv/task_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/iteration_private.h"
#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv::detail {
namespace {

using ir::Stmt;

// The memory a global pointer addresses: "f<field>" or "a<arg>" / "a<arg>g" (gradient) / "a<arg>d" (dual).
std::string memory_of(const Stmt* ptr) {
  if (const auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(ptr)) return fmt::format("f{}", g->field);
  if (const auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(ptr)) {
    const auto* arg = ir::dyn_cast<ir::ArgLoadStmt>(e->base());
    return fmt::format("a{}{}", arg ? arg->arg_index : -1, e->is_grad ? "g" : e->is_dual ? "d" : "");
  }
  return {};
}

// Calls f on `s` and every statement nested in it, pre-order.
template <class F>
void walk_stmt(const Stmt& s, F&& f) {
  f(s);
  for (const ir::Block* b : s.blocks())
    if (b)
      for (const Stmt* c : *b) walk_stmt(*c, f);
}

bool is_parallel_loop(const Stmt* s) { return ir::isa<ir::RangeForStmt>(s) || ir::isa<ir::StructForStmt>(s); }

// Statements that may be recomputed in another task when their operands can be: values and
// addresses (the access chain included) that read no memory, and global loads.
bool recomputable_kind(const Stmt* s) {
  switch (s->kind()) {
    case ir::StmtKind::Const:
    case ir::StmtKind::ArgLoad:
    case ir::StmtKind::UnaryOp:
    case ir::StmtKind::BinaryOp:
    case ir::StmtKind::TernaryOp:
    case ir::StmtKind::GlobalPtr:
    case ir::StmtKind::ExternalPtr:
    case ir::StmtKind::GlobalLoad:
    case ir::StmtKind::GlobalTemporary:
    case ir::StmtKind::GetRoot:
    case ir::StmtKind::SNodeLookup:
    case ir::StmtKind::GetCh:
    case ir::StmtKind::Linearize:
    case ir::StmtKind::IntegerOffset:
    case ir::StmtKind::BitExtract:
      return true;
    default:
      return false;
  }
}

class Planner {
 public:
  explicit Planner(const ir::Kernel& k) : k_(k) {}

  KernelPlan run() {
    int order = 0;
    for (const Stmt* r : k_.root()) {
      offloaded_ = offloaded_ || ir::isa<ir::OffloadedStmt>(r);
      walk_stmt(*r, [&](const Stmt& s) { order_[&s] = order++; });
    }
    if (offloaded_)
      split_offloaded();
    else
      split();
    number_stacks();
    for (size_t t = 0; t < plan_.tasks.size(); ++t) resolve_uses(t);
    drop_pure_serial_tasks();
    name_tasks();
    return std::move(plan_);
  }

 private:
  void split() {
    int index = 0;
    for (Stmt* s : k_.root()) {
      root_index_[s] = index++;
      walk_stmt(*s, [&](const Stmt& inner) {
        if (ir::isa<ir::GlobalStoreStmt>(&inner) || ir::isa<ir::AtomicOpStmt>(&inner))
          writes_[s].insert(memory_of(inner.operand(0)));
      });
      if (is_parallel_loop(s)) {
        Task t;
        t.kind = ir::isa<ir::RangeForStmt>(s) ? TaskKind::range_for : TaskKind::struct_for;
        plan_.tasks.push_back(std::move(t));
      } else if (plan_.tasks.empty() || plan_.tasks.back().kind != TaskKind::serial) {
        plan_.tasks.push_back(Task{});
      }
      plan_.tasks.back().roots.push_back(s);
    }
    for (size_t i = 0; i < plan_.tasks.size(); ++i)
      for (const Stmt* s : plan_.tasks[i].roots) task_of_root_[s] = static_cast<int>(i);
  }

  // One task per serial / range_for / struct_for statement; global temporaries first in temps.
  void split_offloaded() {
    int index = 0;
    int64_t temporary_bytes = 0;
    auto temporary = [&](const Stmt& at, int64_t offset, ir::ScalarKind kind) {
      const int64_t bytes = ir::bit_width(kind) == 64 ? 8 : 4;
      if (offset < 0 || offset % bytes != 0)
        throw UserError(fmt::format("cannot lower `{}` to SPIR-V: a global temporary of {} bytes must lie at an "
                                    "offset that is a multiple of {}",
                                    ir::print_stmt(at, k_), bytes, bytes),
                        "align the temporary's offset to its size, or run the kernel on the interpreter");
      temporary_bytes = std::max(temporary_bytes, offset + bytes);
    };
    for (Stmt* s : k_.root()) {
      root_index_[s] = index++;
      const auto* o = ir::dyn_cast<ir::OffloadedStmt>(s);
      if (!o)
        throw UserError(fmt::format("cannot lower `{}` to SPIR-V: a kernel in the offloaded stage holds only "
                                    "offloaded tasks at its root",
                                    ir::print_stmt(*s, k_)),
                        "run the offload pass on the whole kernel, or compile the kernel before offload");
      walk_stmt(*s, [&](const Stmt& inner) {
        if (const auto* g = ir::dyn_cast<ir::GlobalTemporaryStmt>(&inner)) temporary(inner, g->offset, g->type.scalar);
      });
      for (const ir::TaskBound* b : {&o->begin, &o->end})
        if (o->task == ir::TaskType::range_for && b->kind == ir::TaskBound::Kind::temporary)
          temporary(*s, b->value, ir::ScalarKind::i32);
      if (o->task == ir::TaskType::mesh_for)
        throw UserError(fmt::format("cannot lower `{}` to SPIR-V: mesh kernels are not compiled (passbench has no "
                                    "mesh model)",
                                    ir::print_stmt(*s, k_)),
                        "compare the mesh kernel's IR; compile kernels without a mesh");
      if (!o->has_body()) continue;
      Task t;
      t.kind = o->task == ir::TaskType::serial      ? TaskKind::serial
               : o->task == ir::TaskType::range_for ? TaskKind::range_for
                                                    : TaskKind::struct_for;
      t.offloaded = o;
      t.roots.push_back(s);
      plan_.tasks.push_back(std::move(t));
    }
    for (size_t i = 0; i < plan_.tasks.size(); ++i) task_of_root_[plan_.tasks[i].roots.front()] = static_cast<int>(i);
    plan_.global_temporary_words = plan_.temps_words = static_cast<uint32_t>(temporary_bytes / 4);
  }

  // A serial task of constants, argument loads, arithmetic and global reads that no other task
  // needs stored has no effect: its users recompute what they need.
  void drop_pure_serial_tasks() {
    std::erase_if(plan_.tasks, [&](const Task& t) {
      if (t.kind != TaskKind::serial) return false;
      for (const Stmt* s : t.roots)
        if (!recomputable_kind(s) || plan_.spilled.count(s)) return false;
      return true;
    });
  }

  void name_tasks() {
    std::string base = k_.name.empty() ? "kernel" : k_.name;
    for (char& c : base)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    for (size_t i = 0; i < plan_.tasks.size(); ++i) {
      Task& t = plan_.tasks[i];
      t.name = fmt::format("{}_t{}_{}", base, i, task_kind_name(t.kind));
      if (t.kind != TaskKind::serial) t.name += fmt::format("_{}", t.roots.front()->id);
    }
  }

  void number_stacks() {
    int next = 0;
    for (size_t t = 0; t < plan_.tasks.size(); ++t)
      for (const Stmt* r : plan_.tasks[t].roots)
        walk_stmt(*r, [&](const Stmt& s) {
          if (const auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&s)) {
            plan_.stack_id[a] = next++;
            plan_.tasks[t].stacks.push_back(a);
          }
        });
  }

  // The root statement that holds `s` (itself when it is at the root).
  const Stmt* root_of(const Stmt* s) const {
    while (s->parent() != &k_.root()) s = s->parent_stmt();
    return s;
  }

  void resolve_uses(size_t t) {
    Task& task = plan_.tasks[t];
    std::set<const Stmt*> done;
    auto use = [&](const Stmt* user, const Stmt* operand) {
      if (!operand || (!offloaded_ && operand->parent() != &k_.root())) return;
      if (task_of(operand) == static_cast<int>(t)) return;
      if (ir::isa<ir::AdStackAllocaStmt>(operand))
        throw UserError(fmt::format("cannot lower `{}` to SPIR-V: it uses stack ${}, which is allocated at the kernel "
                                    "root outside this task; stacks are per invocation",
                                    ir::print_stmt(*user, k_), operand->id),
                        "allocate the stack inside the loop that uses it (as reverse_ad does)");
      import(operand, t, done);
    };
    for (const Stmt* r : task.roots)
      walk_stmt(*r, [&](const Stmt& s) {
        for (const Stmt* o : s.operands()) use(&s, o);
      });
    std::sort(task.imports.begin(), task.imports.end(),
              [&](const Import& a, const Import& b) { return order_.at(a.stmt) < order_.at(b.stmt); });
  }

  // A word of temps, or an aligned pair of words for a 64-bit value.
  uint32_t slot_for(const Stmt* s) {
    auto [it, fresh] = plan_.temp_slot.emplace(s, 0);
    if (fresh) {
      const bool wide = ir::bit_width(s->type.scalar) == 64;
      if (wide) plan_.temps_words += plan_.temps_words % 2;
      it->second = plan_.temps_words;
      plan_.temps_words += wide ? 2 : 1;
    }
    return it->second;
  }

  // True when a global load at the root may be read again at the entry of `task`: nothing from
  // the load up to the end of the task writes its memory.
  bool reload_is_exact(const Stmt* load, const Task& task) const {
    std::string mem = memory_of(load->operand(0));
    int from = root_index_.at(load), to = root_index_.at(task.roots.back());
    for (const auto& [s, mems] : writes_)
      if (int i = root_index_.at(s); i > from && i <= to && mems.count(mem)) return false;
    return true;
  }

  // The task of a statement: that of the root statement holding it.
  int task_of(const Stmt* s) const {
    auto it = task_of_root_.find(root_of(s));
    return it == task_of_root_.end() ? -1 : it->second;
  }

  void import(const Stmt* s, size_t t, std::set<const Stmt*>& done) {
    if (!done.insert(s).second) return;
    Task& task = plan_.tasks[t];
    if (ir::isa<ir::AllocaStmt>(s)) {
      if (task.kind != TaskKind::serial && ir::iteration_private(*s)) {
        task.private_allocas.push_back(s);
        return;
      }
      plan_.shared_allocas.insert(s);
      task.shared_allocas.push_back(s);
      slot_for(s);
      return;
    }
    // A global load is read again only before offloading (where its task's roots tell what is
    // written in between); in the offloaded stage a value crossing tasks is stored.
    bool recompute =
        recomputable_kind(s) && (!ir::isa<ir::GlobalLoadStmt>(s) || (!offloaded_ && reload_is_exact(s, task)));
    if (!recompute && s->type.pointer)
      throw UserError(fmt::format("cannot lower `{}` to SPIR-V: the address it defines is used by another task, and "
                                  "only computed addresses can cross tasks",
                                  ir::print_stmt(*s, k_)),
                      "define the pointer in the task that uses it");
    if (!recompute) {
      plan_.spilled.insert(s);
      slot_for(s);
      task.imports.push_back({s, true});
      return;
    }
    for (const Stmt* o : s->operands())
      if (o && task_of(o) != static_cast<int>(t)) import(o, t, done);
    task.imports.push_back({s, false});
  }

  const ir::Kernel& k_;
  KernelPlan plan_;
  std::unordered_map<const Stmt*, int> root_index_;
  std::unordered_map<const Stmt*, int> task_of_root_;
  std::unordered_map<const Stmt*, int> order_;                     // every statement, pre-order
  bool offloaded_ = false;                                         // the root holds offloaded tasks
  std::unordered_map<const Stmt*, std::set<std::string>> writes_;  // root statement -> memory written inside
};

}  // namespace

KernelPlan plan_kernel(const ir::Kernel& k) { return Planner(k).run(); }

const ir::Block& loop_body(const Task& t) {
  PB_ASSERT(t.kind != TaskKind::serial, "loop_body of a serial task");
  if (t.offloaded) return *t.offloaded->body;
  if (const auto* rf = ir::dyn_cast<ir::RangeForStmt>(t.roots.front())) return *rf->body;
  return *ir::dyn_cast<ir::StructForStmt>(t.roots.front())->body;
}

}  // namespace pb::codegen::spirv::detail
