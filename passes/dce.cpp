#include "passes/dce.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/numbering.h"
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

// A write into a local variable: a store, or an atomic whose destination is the alloca.
bool writes_local(const Stmt& s) {
  if (isa<LocalStoreStmt>(&s)) return true;
  auto* a = dyn_cast<AtomicOpStmt>(&s);
  return a && isa<AllocaStmt>(a->dest());
}

// Statements kept for what they do, not for a value: everything that is neither pure, nor a
// write into a local, nor an if/for (which live when something inside them does).
bool is_effect(const Stmt& s) {
  if (is_pure(s) || writes_local(s)) return false;
  return !isa<IfStmt>(&s) && !isa<RangeForStmt>(&s) && !isa<StructForStmt>(&s);
}

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
        loaded_and_stored_ = loaded_and_stored_ || (n > 0 && static_cast<int64_t>(s.num_uses()) > n);
      } else if (!s.has_users() && (is_pure(s) || is_removable_container(s))) {
        work_.push_back(&s);
      }
    });
    drain();
    // What is dead only as a whole (variables that feed nothing but their own writes) next,
    // then what that leaves unused.
    if (loaded_and_stored_) {
      remove_dead_variables();
      drain();
    }
    return result_;
  }

 private:
  // Pop from the back: the last statements first, so chains die in one sweep.
  void drain() {
    while (!work_.empty()) {
      Stmt* s = work_.back();
      work_.pop_back();
      if (s->parent()) visit_candidate(s);
    }
  }

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

  // A local variable is live when a value read from it reaches an effect (through values, other
  // live variables, or the condition or bounds of an if/for holding an effect). The rest are
  // dead however often they are read: `acc = acc + sin(x)` in a loop whose `acc` nothing else
  // reads. Their writes go here; the worklist then removes what only they used, and the
  // if/for left empty.
  void remove_dead_variables() {
    // Statements are numbered so that the live marks are a vector, not a hash set.
    std::vector<Stmt*> effects, allocas;
    Numbering num;
    num.reserve(k_.root().total_size());
    walk(k_.root(), [&](Stmt& s) {
      num.add(s);
      if (is_effect(s)) effects.push_back(&s);
      if (isa<AllocaStmt>(&s)) allocas.push_back(&s);
    });
    std::vector<uint8_t> live(num.size(), 0);
    std::vector<const Stmt*> stack;
    auto mark = [&](const Stmt* s) {
      if (!s) return;
      if (uint8_t& seen = live[num[*s]]; !seen) {
        seen = 1;
        stack.push_back(s);
      }
    };
    for (Stmt* s : effects) mark(s);
    while (!stack.empty()) {
      const Stmt* s = stack.back();
      stack.pop_back();
      for (const Stmt* op : s->operands()) mark(op);
      mark(s->parent_stmt());
      if (isa<AllocaStmt>(s))
        for (const auto& u : s->uses())
          if (u.slot() == 0 && writes_local(*u.user())) mark(u.user());
    }
    for (Stmt* a : allocas) {
      if (live[num[*a]] || !a->parent()) continue;
      std::vector<Stmt*> writes;
      for (const auto& u : a->uses())
        if (u.slot() == 0 && writes_local(*u.user())) writes.push_back(u.user());
      for (Stmt* w : writes)
        if (w->parent() && !w->has_users()) erase(w);
      ++result_.dead_variables;
      work_.push_back(a);
    }
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
  bool loaded_and_stored_ = false;  // some alloca is both read and written
};

}  // namespace

DceResult eliminate_dead_code(Kernel& k) { return Dce(k).run(); }

PassInfo DcePass::info() {
  return declare_pass<DcePass>(
      {.name = "dce",
       .summary = "Removes unused side-effect-free statements, dead local variables and empty if/for",
       .options = {},
       .statistics = {"removed", "allocas_removed", "dead_variables"},
       .create = {}});
}

PassResult DcePass::run(Kernel& k, const PassOptions&) {
  DceResult r = eliminate_dead_code(k);
  return {r.removed > 0,
          {{"removed", r.removed}, {"allocas_removed", r.allocas_removed}, {"dead_variables", r.dead_variables}}};
}

}  // namespace pb::passes
