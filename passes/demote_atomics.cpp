#include "passes/demote_atomics.h"

#include <map>
#include <vector>

#include "ir/builder.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

BinaryOp binary_of(AtomicOp op) {
  switch (op) {
    case AtomicOp::add:
      return BinaryOp::add;
    case AtomicOp::sub:
      return BinaryOp::sub;
    case AtomicOp::mul:
      return BinaryOp::mul;
    case AtomicOp::min:
      return BinaryOp::min;
    case AtomicOp::max:
      return BinaryOp::max;
    case AtomicOp::bit_and:
      return BinaryOp::bit_and;
    case AtomicOp::bit_or:
      return BinaryOp::bit_or;
    case AtomicOp::bit_xor:
      return BinaryOp::bit_xor;
  }
  return BinaryOp::add;
}

bool is_parallel(const Stmt& s) {
  if (const auto* o = dyn_cast<OffloadedStmt>(&s))
    return o->task == TaskType::range_for || o->task == TaskType::struct_for || o->task == TaskType::mesh_for;
  return (isa<RangeForStmt>(&s) || isa<StructForStmt>(&s) || isa<MeshForStmt>(&s)) && s.parent() &&
         !s.parent()->owner();
}

// The parallel loop or task whose iterations `s` runs in; null outside every one.
const Stmt* parallel_scope(const Stmt& s) {
  for (const Stmt* p = s.parent_stmt(); p; p = p->parent_stmt())
    if (is_parallel(*p)) return p;
  return nullptr;
}

// The offloaded task `s` is in, and whether it is in the task's body (not a prologue/epilogue).
const OffloadedStmt* task_of(const Stmt& s, bool* in_body) {
  const Block* b = s.parent();
  for (const Stmt* p = s.parent_stmt(); p; b = p->parent(), p = p->parent_stmt())
    if (const auto* o = dyn_cast<OffloadedStmt>(p)) {
      *in_body = b == o->body.get();
      return o;
    }
  return nullptr;
}

// What a pointer addresses, for the loop-unique rule: a field or an ndarray argument, and the
// indices it is addressed with.
struct Target {
  int key = 0;  // field id + 1, or -(argument index + 1) for an ndarray; 0 = neither
  std::span<Stmt* const> indices;
};

Target target_of(const Stmt& ptr) {
  if (const auto* g = dyn_cast<GlobalPtrStmt>(&ptr)) return {g->field + 1, g->indices()};
  if (const auto* e = dyn_cast<ExternalPtrStmt>(&ptr))
    if (const auto* a = dyn_cast<ArgLoadStmt>(e->base())) return {-(a->arg_index + 1), e->indices()};
  return {};
}

// The fields and ndarrays of a parallel task whose every pointer addresses the iteration's own
// element: indices i0, i1, ... are `loop task index 0`, `index 1`, ... (at least one).
std::map<int, bool> loop_unique_targets(const OffloadedStmt& task) {
  std::map<int, bool> unique;
  walk(*task.body, [&](Stmt& s) {
    Target t = target_of(s);
    if (!t.key) return;
    bool own = !t.indices.empty();
    for (size_t axis = 0; axis < t.indices.size() && own; ++axis) {
      const auto* li = dyn_cast<LoopIndexStmt>(t.indices[axis]);
      own = li && li->loop() == &task && li->axis == static_cast<int>(axis);
    }
    auto [it, fresh] = unique.emplace(t.key, own);
    if (!fresh) it->second = it->second && own;
  });
  return unique;
}

}  // namespace

DemoteAtomicsResult demote_atomics(Kernel& k, const DemoteAtomicsOptions& options) {
  DemoteAtomicsResult r;
  std::map<const OffloadedStmt*, std::map<int, bool>> unique_by_task;
  std::vector<AtomicOpStmt*> atomics;
  walk(k.root(), [&](Stmt& s) {
    if (auto* a = dyn_cast<AtomicOpStmt>(&s)) atomics.push_back(a);
  });
  Builder b(k);
  for (AtomicOpStmt* a : atomics) {
    Stmt* dest = a->dest();
    bool in_body = false;
    const OffloadedStmt* task = task_of(*a, &in_body);
    int64_t* counter = nullptr;
    const bool local = isa<AllocaStmt>(dest);
    if (local) {
      if (parallel_scope(*dest) == parallel_scope(*a)) counter = &r.local;
    } else if (task && in_body && !options.locals_only) {
      if (isa<ThreadLocalPtrStmt>(dest)) {
        counter = &r.thread_local_;
      } else if (task->task == TaskType::serial) {
        if (options.serial_globals) counter = &r.serial;
      } else if (task->task == TaskType::range_for || task->task == TaskType::struct_for) {
        Target t = target_of(*dest);
        if (t.key) {
          auto it = unique_by_task.find(task);
          if (it == unique_by_task.end()) it = unique_by_task.emplace(task, loop_unique_targets(*task)).first;
          if (it->second.at(t.key)) counter = &r.loop_unique;
        }
      }
    }
    if (!counter) continue;
    b.set_insertion_point_before(*a);
    Stmt* old = local ? static_cast<Stmt*>(b.local_load(dest)) : b.global_load(dest);
    Stmt* updated = b.binary(binary_of(a->op), old, a->val());
    if (local)
      b.local_store(dest, updated);
    else
      b.global_store(dest, updated);
    a->replace_all_uses_with(old);
    a->parent()->erase(a);
    ++*counter;
  }
  return r;
}

PassInfo DemoteAtomicsPass::info() {
  return declare_pass<DemoteAtomicsPass>(
      {.name = "demote_atomics",
       .summary = "Turns atomics no other thread can race with into load, op, store",
       .options = {{.name = "serial_globals",
                    .type = OptionType::Bool,
                    .default_value = "true",
                    .help = "also demote atomics on global pointers in offloaded serial tasks (the reference keeps "
                            "them atomic on SPIR-V backends)",
                    .choices = {}},
                   {.name = "locals_only",
                    .type = OptionType::Bool,
                    .default_value = "false",
                    .help = "demote only atomics whose destination is a local of the same iteration (reverse_ad's "
                            "first rewrite)",
                    .choices = {}}},
       .statistics = {"local", "thread_local", "serial", "loop_unique"},
       .create = {}});
}

PassResult DemoteAtomicsPass::run(Kernel& k, const PassOptions& options) {
  DemoteAtomicsResult r = demote_atomics(
      k, {.serial_globals = options.get_bool("serial_globals"), .locals_only = options.get_bool("locals_only")});
  return {
      r.local + r.thread_local_ + r.serial + r.loop_unique > 0,
      {{"local", r.local}, {"thread_local", r.thread_local_}, {"serial", r.serial}, {"loop_unique", r.loop_unique}}};
}

}  // namespace pb::passes
