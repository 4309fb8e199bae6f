#include "passes/offload.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "ir/assert.h"
#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/iteration_private.h"
#include "ir/printer.h"
#include "ir/type_uses.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

// The top-level statement (a task once the top level is split) that holds `s`.
Stmt* task_of(Stmt* s) {
  while (s->parent_stmt()) s = s->parent_stmt();
  return s;
}

// Copied into each task that uses it rather than carried in memory: constants, and addresses
// (a pointer is recomputed from its own operands; the reference stores no pointer either).
bool copied_not_carried(const Stmt& s) { return isa<ConstStmt>(&s) || (s.type.pointer && !isa<AllocaStmt>(&s)); }

bool is_stack_stmt(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::AdStackAlloca:
    case StmtKind::AdStackPush:
    case StmtKind::AdStackPop:
    case StmtKind::AdStackLoadTop:
    case StmtKind::AdStackLoadTopAdj:
    case StmtKind::AdStackAccAdjoint:
      return true;
    default:
      return false;
  }
}

// Bytes a carried value takes: its (pointee's) size, at least 4, as the reference aligns them.
int64_t carried_bytes(DataType t) { return std::max<int64_t>(4, bit_width(t.scalar) / 8); }

std::unique_ptr<OffloadedStmt> make_task(Kernel& k, TaskType type, int id) {
  auto t = std::make_unique<OffloadedStmt>(type);
  t->id = id < 0 ? k.fresh_id() : id;
  return t;
}

void move_body(Block& from, Block& to) {
  for (Stmt* s : from.statements()) to.push_back(from.detach(s));
}

class Offloader {
 public:
  Offloader(Kernel& k, const OffloadOptions& o) : k_(k), o_(o), b_(k) {}

  OffloadResult run() {
    std::vector<Stmt*> private_locals;  // found before the split: the test needs them at the root
    for (Stmt* s : k_.root())
      if (iteration_private(*s)) private_locals.push_back(s);
    if (!split_top_level()) return r_;
    for (Stmt* alloca : private_locals) localize(alloca);
    assign_offsets();
    store_carried_values();
    for (auto& [alloca, offset] : carried_locals_) rewrite_local(alloca, offset);
    for (Stmt* task : k_.root().statements()) {
      for (Stmt* s : collect_preorder(*static_cast<OffloadedStmt*>(task)->body)) fix_operands(s, task);
      set_bounds(*static_cast<OffloadedStmt*>(task));
    }
    return r_;
  }

 private:
  // Replaces the top level by tasks. Returns false when the kernel is already offloaded.
  bool split_top_level() {
    std::vector<Stmt*> top = k_.root().statements();
    const Stmt* first_task = nullptr;
    const Stmt* first_other = nullptr;
    for (Stmt* s : top) {
      if (isa<OffloadedStmt>(s) && !first_task) first_task = s;
      if (!isa<OffloadedStmt>(s) && !first_other) first_other = s;
    }
    if (first_task && first_other)
      throw UserError(
          fmt::format("offload: the kernel mixes offloaded tasks with top-level statements (`{}`)",
                      print_stmt(*first_other, k_)),
          "offload takes the lowered stage (no task at the top level); a kernel that is all tasks needs no offload");
    if (first_task || top.empty()) return false;
    for (const Stmt* s : top)
      if (isa<MeshForStmt>(s))
        throw UserError(fmt::format("offload: `{}` is a mesh for, and its mesh_for task needs the mesh's patches, "
                                    "which passbench does not model",
                                    print_stmt(*s, k_)),
                        "take the offloaded stage of a mesh kernel from the reference's dump (print_ir)");

    std::unique_ptr<OffloadedStmt> serial;
    auto flush = [&] {
      if (!serial) return;
      k_.root().push_back(std::move(serial));
      ++r_.serial;
    };
    for (Stmt* s : top) {
      std::unique_ptr<Stmt> owned = k_.root().detach(s);
      if (auto* rf = dyn_cast<RangeForStmt>(s)) {
        flush();
        k_.root().push_back(range_task(*rf));
      } else if (auto* sf = dyn_cast<StructForStmt>(s)) {
        flush();
        k_.root().push_back(struct_task(*sf));
      } else {
        if (!serial) serial = make_task(k_, TaskType::serial, -1);
        serial->body->push_back(std::move(owned));
      }
    }
    flush();
    return true;
  }

  std::unique_ptr<OffloadedStmt> range_task(RangeForStmt& loop) {
    auto t = make_task(k_, TaskType::range_for, loop.id);
    auto bound = [&](Stmt* s, TaskBound& b) {
      if (const auto* c = dyn_cast<ConstStmt>(s))
        b = {TaskBound::Kind::constant, c->value.as_i64()};
      else
        bound_values_[t.get()].push_back({&b, s});
    };
    bound(loop.begin(), t->begin);
    bound(loop.end(), t->end);
    t->block_dim = loop.block_dim ? loop.block_dim : o_.block_dim;
    t->grid_dim = o_.grid_dim;
    t->loop_name = loop.loop_name;
    loop.replace_all_uses_with(t.get());
    move_body(*loop.body, *t->body);
    ++r_.range_for;
    return t;
  }

  std::unique_ptr<OffloadedStmt> struct_task(StructForStmt& loop) {
    auto t = make_task(k_, TaskType::struct_for, loop.id);
    t->snode = loop.space;
    t->grid_dim = o_.grid_dim;
    // As the reference: adaptive takes the default, and no block is larger than the space.
    t->block_dim = loop.block_dim ? loop.block_dim : o_.block_dim;
    if (auto cells = space_cells(loop.space)) t->block_dim = static_cast<int>(std::min<int64_t>(t->block_dim, *cells));
    loop.replace_all_uses_with(t.get());
    move_body(*loop.body, *t->body);
    ++r_.struct_for;
    return t;
  }

  std::optional<int64_t> space_cells(const std::string& name) const {
    std::optional<Shape> shape;
    if (const IndexSpace* sp = k_.find_space(name)) shape = sp->shape;
    if (auto f = k_.find_field(name)) shape = k_.field(*f).shape;
    if (!shape) return std::nullopt;
    int64_t n = 1;
    for (int64_t d : *shape) n *= d;
    return n;
  }

  // Which statements other tasks use and must be carried, and at which offset: task by task,
  // range bounds first, then the body's operands in pre-order (the reference's order).
  void assign_offsets() {
    for (Stmt* task : k_.root().statements()) {
      if (auto it = bound_values_.find(task); it != bound_values_.end())
        for (auto& [bound, value] : it->second) carry(*value, task);
      for (Stmt* s : collect_preorder(*static_cast<OffloadedStmt*>(task)->body))
        for (Stmt* op : s->operands())
          if (!isa<LoopIndexStmt>(s) && !isa<LoopLinearIndexStmt>(s) && task_of(op) != task) carry(*op, task);
    }
  }

  void carry(Stmt& value, Stmt* user_task) {
    if (is_stack_stmt(value))
      throw UserError(fmt::format("offload: the autodiff stack of `{}` is used by another task (`{}`)",
                                  print_stmt(value, k_), print_stmt(*user_task, k_)),
                      "offload the kernel before reverse_ad, or keep each stack inside one top-level loop");
    if (offsets_.count(&value)) return;
    if (copied_not_carried(value)) {
      // The copy is computed again in the user's task: what it reads from other tasks is carried.
      for (Stmt* op : value.operands())
        if (task_of(op) != user_task) carry(*op, user_task);
      return;
    }
    DataType t = isa<AllocaStmt>(&value) ? value.type.pointee() : value.type;
    int64_t size = carried_bytes(t);
    next_offset_ = (next_offset_ + size - 1) / size * size;
    offsets_[&value] = next_offset_;
    carried_.push_back(&value);
    if (isa<AllocaStmt>(&value)) carried_locals_.emplace_back(&value, next_offset_);
    next_offset_ += size;
    r_.temporary_bytes = next_offset_;
    ++r_.temporaries;
  }

  GlobalTemporaryStmt* temporary(DataType value_type, int64_t offset) {
    return b_.create<GlobalTemporaryStmt>(DataType::pointer_to(value_type.scalar), offset);
  }

  // A carried value is stored to its temporary right after it is computed.
  void store_carried_values() {
    for (Stmt* value : carried_) {
      if (isa<AllocaStmt>(value)) continue;
      b_.set_insertion_point_after(*value);
      b_.global_store(temporary(value->type, offsets_.at(value)), value);
    }
  }

  // A root local that is read only after a store in the same iteration (ir/iteration_private.h)
  // gets a local of its own at the start of each other task that uses it: a global temporary
  // would be one variable for all the invocations of a parallel task.
  void localize(Stmt* alloca) {
    std::unordered_map<Stmt*, Stmt*> local_of_task;
    const Stmt* home = task_of(alloca);
    for (Stmt* user : alloca->users()) {
      Stmt* task = task_of(user);
      if (task == home) continue;
      auto [it, fresh] = local_of_task.try_emplace(task, nullptr);
      if (fresh) {
        Block& body = *static_cast<OffloadedStmt*>(task)->body;
        b_.set_insertion_point_before(*body.front());
        it->second = b_.alloca(alloca->type.scalar);
        ++r_.localized;
      }
      user->replace_operand(alloca, it->second);
    }
  }

  // A carried local becomes its temporary, zeroed where the alloca ran; every access to it, in
  // any task, goes through a temporary of its own made just before it.
  void rewrite_local(Stmt* alloca, int64_t offset) {
    DataType value_type = alloca->type.pointee();
    b_.set_insertion_point_before(*alloca);
    GlobalTemporaryStmt* zeroed = temporary(value_type, offset);
    b_.global_store(zeroed, b_.constant(Value::zero(value_type.scalar)));
    for (Stmt* user : alloca->users()) {
      b_.set_insertion_point_before(*user);
      GlobalTemporaryStmt* ptr = temporary(value_type, offset);
      if (auto* load = dyn_cast<LocalLoadStmt>(user)) {
        load->replace_all_uses_with(b_.global_load(ptr));
        user->parent()->erase(user);
      } else if (auto* store = dyn_cast<LocalStoreStmt>(user)) {
        b_.global_store(ptr, store->val());
        user->parent()->erase(user);
      } else if (isa<AtomicOpStmt>(user) && static_cast<AtomicOpStmt*>(user)->dest() == alloca) {
        user->replace_operand(alloca, ptr);
      } else {
        throw UserError(fmt::format("offload: the local `{}` is used by another task, and `{}` cannot use it "
                                    "through memory",
                                    print_stmt(*alloca, k_), print_stmt(*user, k_)),
                        "keep the local and its uses inside one top-level loop or one run of top-level statements");
      }
    }
    alloca->parent()->erase(alloca);
  }

  // Operands from another task: a carried value is loaded from its temporary, anything else is
  // copied in (with its own operands fixed the same way).
  void fix_operands(Stmt* s, Stmt* task) {
    if (isa<LoopIndexStmt>(s) || isa<LoopLinearIndexStmt>(s)) return;
    for (size_t i = 0; i < s->num_operands(); ++i) {
      Stmt* op = s->operand(i);
      if (task_of(op) == task) continue;
      b_.set_insertion_point_before(*s);
      if (auto it = offsets_.find(op); it != offsets_.end()) {
        s->set_operand(i, b_.global_load(temporary(op->type, it->second)));
        continue;
      }
      std::unique_ptr<Stmt> copy = op->clone_shallow();
      copy->id = k_.fresh_id();
      if (auto* ptr = dyn_cast<GlobalPtrStmt>(copy.get())) ptr->activate = false;
      Stmt* placed = b_.insert(std::move(copy));
      ++r_.cloned;
      s->set_operand(i, placed);
      fix_operands(placed, task);
    }
  }

  void set_bounds(OffloadedStmt& task) {
    auto it = bound_values_.find(&task);
    if (it == bound_values_.end()) return;
    for (auto& [bound, value] : it->second) *bound = {TaskBound::Kind::temporary, offsets_.at(value)};
  }

  Kernel& k_;
  OffloadOptions o_;
  Builder b_;
  OffloadResult r_;
  std::map<const Stmt*, std::vector<std::pair<TaskBound*, Stmt*>>> bound_values_;  // range task -> bounds
  std::map<Stmt*, int64_t> offsets_;                                               // carried statement -> byte offset
  std::vector<Stmt*> carried_;  // the same, in the order offsets were given (new ids follow it)
  std::vector<std::pair<Stmt*, int64_t>> carried_locals_;
  int64_t next_offset_ = 0;
};

}  // namespace

OffloadResult offload(Kernel& k, const OffloadOptions& options) {
  PB_ASSERT(!first_type_use_outside(k, [](DataType t) { return !t.is_tensor(); }),
            "offload takes scalar kernels: run scalarize first");
  return Offloader(k, options).run();
}

PassInfo OffloadPass::info() {
  return declare_pass<OffloadPass>(
      {.name = "offload",
       .summary = "Splits the top level into offloaded tasks; values cross tasks through global temporaries",
       .options = {{.name = "block_dim",
                    .type = OptionType::Int,
                    .default_value = "128",
                    .help = "block_dim of a task whose loop says adaptive (the reference: 128 on GPUs, 32 on CPUs)",
                    .choices = {},
                    .min_int = 1,
                    .max_int = 1 << 20},
                   {.name = "grid_dim",
                    .type = OptionType::Int,
                    .default_value = "0",
                    .help = "grid_dim of every loop task (the reference's saturating grid dim; 0 on CPUs)",
                    .choices = {},
                    .min_int = 0,
                    .max_int = 1 << 30}},
       .statistics = {"serial", "range_for", "struct_for", "temporaries", "temporary_bytes", "cloned", "localized"},
       .create = {}});
}

PassResult OffloadPass::run(Kernel& k, const PassOptions& options) {
  OffloadOptions o;
  o.block_dim = static_cast<int>(options.get_int("block_dim"));
  o.grid_dim = static_cast<int>(options.get_int("grid_dim"));
  OffloadResult r = offload(k, o);
  return {r.serial + r.range_for + r.struct_for > 0,
          {{"serial", r.serial},
           {"range_for", r.range_for},
           {"struct_for", r.struct_for},
           {"temporaries", r.temporaries},
           {"temporary_bytes", r.temporary_bytes},
           {"cloned", r.cloned},
           {"localized", r.localized}}};
}

}  // namespace pb::passes
