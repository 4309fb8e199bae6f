#include "passes/autodiff/replace_locals_with_stacks.h"

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"
#include "passes/autodiff/independent_blocks.h"

namespace pb::passes {

using namespace ir;

namespace {

bool is_write(const Stmt* user, const Stmt* var) {
  if (auto* st = dyn_cast<LocalStoreStmt>(user)) return st->dest() == var;
  if (auto* at = dyn_cast<AtomicOpStmt>(user)) return at->dest() == var;
  return false;
}

bool read_by_reverse_code(const Stmt& load, ad::IbLoops& loops) {
  if (loops.depth(load) == 0) return false;
  for (const Stmt::Use& use : load.uses())
    for (size_t slot : ad::required_operand_slots(*use.user()))
      if (slot == use.slot()) return true;
  return false;
}

bool stack_needed(const AllocaStmt& var, ad::IbLoops& loops) {
  bool written = false, read = false;
  for (const Stmt::Use& use : var.uses()) {
    Stmt* user = use.user();
    written = written || is_write(user, &var);
    if (auto* ld = dyn_cast<LocalLoadStmt>(user); ld && ld->src() == &var)
      read = read || read_by_reverse_code(*ld, loops);
  }
  return written && read;
}

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

void replace(Kernel& k, AllocaStmt& var, int64_t size, ReplaceLocalsResult& r) {
  Builder b(k);
  b.set_insertion_point_before(var);
  ScalarKind kind = var.type.scalar;
  Stmt* stack = b.stack_alloc(kind, size);
  b.stack_push(stack, b.constant(Value::zero(kind)));
  ++r.stacks;
  for (Stmt* user : var.users()) {
    b.set_insertion_point_before(*user);
    if (isa<LocalLoadStmt>(user)) {
      user->replace_all_uses_with(b.stack_load_top(stack));
      ++r.loads;
    } else if (auto* st = dyn_cast<LocalStoreStmt>(user)) {
      b.stack_push(stack, st->val());
      ++r.pushes;
    } else if (auto* at = dyn_cast<AtomicOpStmt>(user)) {
      Stmt* old = b.stack_load_top(stack);
      b.stack_push(stack, b.binary(binary_of(at->op), old, at->val()));
      user->replace_all_uses_with(old);
      ++r.pushes;
    } else {
      throw UserError(fmt::format("local variable ${} is used by a statement that cannot read a stack", var.id),
                      "report this kernel: replace_locals_with_stacks handles loads, stores and atomics");
    }
    user->parent()->erase(user);
  }
  var.parent()->erase(&var);
}

}  // namespace

ReplaceLocalsResult replace_locals_with_stacks(Kernel& k, int64_t ad_stack_size) {
  ReplaceLocalsResult r;
  for (Block* ib : find_independent_blocks(k)) {
    std::vector<AllocaStmt*> vars;
    ad::IbLoops loops(*ib);
    walk(*ib, [&](Stmt& s) {
      if (auto* a = dyn_cast<AllocaStmt>(&s); a && stack_needed(*a, loops)) vars.push_back(a);
    });
    for (AllocaStmt* a : vars) replace(k, *a, ad_stack_size, r);
  }
  return r;
}

PassInfo ReplaceLocalsWithStacksPass::info() {
  return declare_pass<ReplaceLocalsWithStacksPass>(
      {.name = "replace_locals_with_stacks",
       .summary = "Backs each local whose per-iteration values the reverse code reads with an autodiff stack",
       .options = {{.name = "ad_stack_size",
                    .type = OptionType::Int,
                    .default_value = "0",
                    .help = "capacity of every new stack; 0 = adaptive (sized by determine_ad_stack_size)",
                    .choices = {},
                    .min_int = 0}},
       .statistics = {"stacks", "pushes", "loads"},
       .create = {}});
}

PassResult ReplaceLocalsWithStacksPass::run(Kernel& k, const PassOptions& options) {
  int64_t size = options.get_int("ad_stack_size");
  if (size < 0)
    throw UserError(fmt::format("ad_stack_size={} is negative", size), "use 0 (adaptive) or a capacity of at least 1");
  ReplaceLocalsResult r = replace_locals_with_stacks(k, size);
  return {r.stacks > 0, {{"stacks", r.stacks}, {"pushes", r.pushes}, {"loads", r.loads}}};
}

}  // namespace pb::passes
