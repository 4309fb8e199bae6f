#include "codegen/spirv/task_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/diagnostic.h"
#include "ir/printer.h"
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

// Root statements that may be recomputed in another task when their operands can be.
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
      return true;
    default:
      return false;
  }
}

class Planner {
 public:
  explicit Planner(const ir::Kernel& k) : k_(k) {}

  KernelPlan run() {
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
      if (!operand || operand->parent() != &k_.root()) return;
      if (task_of_root_.at(operand) == static_cast<int>(t)) return;
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
              [&](const Import& a, const Import& b) { return root_index_.at(a.stmt) < root_index_.at(b.stmt); });
  }

  uint32_t slot_for(const Stmt* s) {
    auto [it, fresh] = plan_.temp_slot.emplace(s, plan_.temps_words);
    if (fresh) plan_.temps_words += 1;
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

  void import(const Stmt* s, size_t t, std::set<const Stmt*>& done) {
    if (!done.insert(s).second) return;
    Task& task = plan_.tasks[t];
    if (ir::isa<ir::AllocaStmt>(s)) {
      plan_.shared_allocas.insert(s);
      task.shared_allocas.push_back(s);
      slot_for(s);
      return;
    }
    bool recompute = recomputable_kind(s) && (!ir::isa<ir::GlobalLoadStmt>(s) || reload_is_exact(s, task));
    if (!recompute) {
      plan_.spilled.insert(s);
      slot_for(s);
      task.imports.push_back({s, true});
      return;
    }
    for (const Stmt* o : s->operands())
      if (o && task_of_root_.at(o) != static_cast<int>(t)) import(o, t, done);
    task.imports.push_back({s, false});
  }

  const ir::Kernel& k_;
  KernelPlan plan_;
  std::unordered_map<const Stmt*, int> root_index_;
  std::unordered_map<const Stmt*, int> task_of_root_;
  std::unordered_map<const Stmt*, std::set<std::string>> writes_;  // root statement -> memory written inside
};

}  // namespace

KernelPlan plan_kernel(const ir::Kernel& k) { return Planner(k).run(); }

}  // namespace pb::codegen::spirv::detail
