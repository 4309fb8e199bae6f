#include "passes/dce.h"

#include <unordered_map>

#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

// Values of their operands alone (ir::computed_from_operands), and reads that change nothing.
bool is_pure(const Stmt& s) {
  if (computed_from_operands(s.kind())) return true;
  switch (s.kind()) {
    case StmtKind::Alloca:
    case StmtKind::LocalLoad:
    case StmtKind::GlobalLoad:
    case StmtKind::AdStackAlloca:
    case StmtKind::AdStackLoadTop:
    case StmtKind::AdStackLoadTopAdj:
      return true;
    default:
      return false;
  }
}

bool is_removable_container(const Stmt& s) {
  if (!isa<IfStmt>(&s) && !isa<RangeForStmt>(&s) && !isa<StructForStmt>(&s)) return false;
  for (const Block* b : s.blocks())
    if (b && !b->empty()) return false;
  return true;
}

bool is_store_to(const Stmt::Use& u) { return isa<LocalStoreStmt>(u.user()) && u.slot() == 0; }

// Erased statements are detached and kept until the end (a detached statement has no parent),
// so stale worklist entries stay safe to look at without a hash set of the dead.
class Dce {
 public:
  explicit Dce(Kernel& k) : k_(k) {}

  DceResult run() {
    // One walk gathers, in pre-order, the statements that are dead already (for an alloca: no use
    // but stores) and counts the allocas' non-store uses. Anything else can only die when a user
    // goes, and erase() queues it then; the result is the same fixed point whatever the order, so
    // the statements still live are not visited twice (at scale each visit is a cache miss).
    walk(k_.root(), [&](Stmt& s) {
      if (isa<AllocaStmt>(&s)) {
        int64_t& n = non_store_uses_[&s];
        for (const auto& u : s.uses())
          if (!is_store_to(u)) ++n;
        if (n == 0) work_.push_back(&s);
      } else if (!s.has_users() && (is_pure(s) || is_removable_container(s))) {
        work_.push_back(&s);
      }
    });
    // Pop from the back: the last statements first, so chains die in one sweep.
    while (!work_.empty()) {
      Stmt* s = work_.back();
      work_.pop_back();
      if (s->parent()) visit_candidate(s);
    }
    return result_;
  }

 private:
  void visit_candidate(Stmt* s) {
    if (isa<AllocaStmt>(s) && s->has_users() && non_store_uses_[s] == 0) {
      // Only stored to: the stores are dead too.
      std::vector<Stmt*> stores;
      for (const auto& u : s->uses()) stores.push_back(u.user());
      for (Stmt* st : stores)
        if (st->parent()) erase(st);
      ++result_.allocas_removed;
    }
    if (s->has_users()) return;
    if (is_pure(*s) || is_removable_container(*s)) erase(s);
  }

  void erase(Stmt* s) {
    Block* parent = s->parent();
    for (size_t i = 0; i < s->num_operands(); ++i) {
      Stmt* op = s->operand(i);
      if (!op) continue;
      if (isa<AllocaStmt>(op) && !(isa<LocalStoreStmt>(s) && i == 0)) --non_store_uses_[op];
      work_.push_back(op);
    }
    s->drop_operands();
    graveyard_.push_back(parent->detach(s));
    ++result_.removed;
    if (parent->empty() && parent->owner()) work_.push_back(parent->owner());
  }

  Kernel& k_;
  DceResult result_;
  std::vector<Stmt*> work_;
  std::vector<std::unique_ptr<Stmt>> graveyard_;
  std::unordered_map<const Stmt*, int64_t> non_store_uses_;
};

}  // namespace

DceResult eliminate_dead_code(Kernel& k) { return Dce(k).run(); }

PassInfo DcePass::info() {
  return declare_pass<DcePass>(
      {.name = "dce",
       .summary = "Removes unused side-effect-free statements, store-only allocas and empty if/for",
       .options = {},
       .statistics = {"removed", "allocas_removed"},
       .create = {}});
}

PassResult DcePass::run(Kernel& k, const PassOptions&) {
  DceResult r = eliminate_dead_code(k);
  return {r.removed > 0, {{"removed", r.removed}, {"allocas_removed", r.allocas_removed}}};
}

}  // namespace pb::passes
