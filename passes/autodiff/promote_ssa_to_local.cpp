#include "passes/autodiff/promote_ssa_to_local.h"

#include <unordered_set>
#include <vector>

#include "ir/builder.h"
#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"
#include "passes/autodiff/independent_blocks.h"

namespace pb::passes {

using namespace ir;

namespace {

bool promotable(const Stmt* s) {
  return isa<UnaryOpStmt>(s) || isa<BinaryOpStmt>(s) || isa<TernaryOpStmt>(s) || isa<GlobalLoadStmt>(s) ||
         isa<LoopIndexStmt>(s);
}

void promote_block(Kernel& k, Block& ib, PromoteResult& r) {
  Builder b(k);
  // Allocas made here go before every statement of the IB, in creation order.
  Stmt* ib_front = ib.front();
  auto new_alloca_at_top = [&](ScalarKind kind) {
    if (ib_front)
      b.set_insertion_point_before(*ib_front);
    else
      b.set_insertion_point_end(ib);
    return b.alloca(kind);
  };

  ad::IbLoops loops(ib);
  auto depth_of = [&](const Stmt* s) { return loops.inside(*s) ? loops.depth(*s) : -1; };  // -1: outside the IB
  std::vector<Stmt*> statements = collect_preorder(ib);

  std::unordered_set<const Stmt*> promoted;
  for (Stmt* s : statements) {
    if (auto* a = dyn_cast<AllocaStmt>(s); a && a->parent() != &ib) {
      b.set_insertion_point_before(*s);
      b.local_store(s, b.constant(Value::zero(a->type.scalar)));
      auto owned = s->parent()->detach(s);
      if (ib_front)
        ib.insert_before(ib_front, std::move(owned));
      else
        ib.push_back(std::move(owned));
      ++r.allocas_hoisted;
      continue;
    }
    if (depth_of(s) <= 0) continue;
    for (size_t slot : ad::required_operand_slots(*s)) {
      Stmt* def = s->operand(slot);
      if (!promotable(def) || promoted.count(def) || depth_of(def) <= 0) continue;
      promoted.insert(def);
      Stmt* var = new_alloca_at_top(def->type.scalar);
      b.set_insertion_point_after(*def);
      Stmt* store = b.local_store(var, def);
      Stmt* load = b.local_load(var);
      for (Stmt* user : def->users())
        if (user != store)
          for (size_t i = 0; i < user->num_operands(); ++i)
            if (user->operand(i) == def) user->set_operand(i, load);
      ++r.values_promoted;
    }
  }
}

}  // namespace

PromoteResult promote_ssa_to_local(Kernel& k) {
  PromoteResult r;
  for (Block* ib : find_independent_blocks(k)) promote_block(k, *ib, r);
  return r;
}

PassInfo PromoteSsaToLocalPass::info() {
  return declare_pass<PromoteSsaToLocalPass>(
      {.name = "promote_ssa_to_local",
       .summary = "Gives each per-iteration value the reverse code reads a local variable (made a stack next)",
       .options = {},
       .statistics = {"values_promoted", "allocas_hoisted"},
       .create = {}});
}

PassResult PromoteSsaToLocalPass::run(Kernel& k, const PassOptions&) {
  PromoteResult r = promote_ssa_to_local(k);
  return {r.values_promoted + r.allocas_hoisted > 0,
          {{"values_promoted", r.values_promoted}, {"allocas_hoisted", r.allocas_hoisted}}};
}

}  // namespace pb::passes
