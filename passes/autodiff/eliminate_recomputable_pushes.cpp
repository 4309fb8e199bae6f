#include "passes/autodiff/eliminate_recomputable_pushes.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/numbering.h"
#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"

namespace pb::passes {

using namespace ir;

namespace {

// One walk: pre-order numbers, the stacks in order, and the fields the kernel writes.
struct KernelScan {
  std::vector<AdStackAllocaStmt*> stacks;
  std::unordered_set<FieldId> written;
  Numbering preorder;

  explicit KernelScan(Kernel& k) {
    preorder.reserve(k.root().total_size());
    walk(k.root(), [&](Stmt& s) {
      preorder.add(s);
      if (auto* a = dyn_cast<AdStackAllocaStmt>(&s)) stacks.push_back(a);
      const Stmt* ptr = nullptr;
      if (auto* gs = dyn_cast<GlobalStoreStmt>(&s)) ptr = gs->dest();
      if (auto* at = dyn_cast<AtomicOpStmt>(&s)) ptr = at->dest();
      if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) written.insert(g->field);
    });
  }
};

bool recomputable_uncached(const Stmt* s, const std::unordered_set<FieldId>& written,
                           std::unordered_map<const Stmt*, bool>& memo, int depth);

// Memoized: a value shared by several later values (a DAG) is looked at once, not once per path.
bool recomputable(const Stmt* s, const std::unordered_set<FieldId>& written,
                  std::unordered_map<const Stmt*, bool>& memo, int depth = 0) {
  if (!s || depth > 64) return false;
  // Only a value with several users can be reached twice; the others are not worth a lookup.
  bool shared = s->num_uses() > 1;
  if (shared)
    if (auto it = memo.find(s); it != memo.end()) return it->second;
  bool r = recomputable_uncached(s, written, memo, depth);
  if (shared) memo[s] = r;
  return r;
}

bool recomputable_uncached(const Stmt* s, const std::unordered_set<FieldId>& written,
                           std::unordered_map<const Stmt*, bool>& memo, int depth) {
  switch (s->kind()) {
    case StmtKind::Const:
    case StmtKind::ArgLoad:
      return true;
    case StmtKind::LoopIndex:
      return isa<RangeForStmt>(static_cast<const LoopIndexStmt*>(s)->loop()) ||
             isa<StructForStmt>(static_cast<const LoopIndexStmt*>(s)->loop());
    case StmtKind::UnaryOp:
    case StmtKind::BinaryOp:
    case StmtKind::TernaryOp:
      for (Stmt* o : s->operands())
        if (!recomputable(o, written, memo, depth + 1)) return false;
      return true;
    case StmtKind::GlobalLoad: {
      auto* g = dyn_cast<GlobalPtrStmt>(static_cast<const GlobalLoadStmt*>(s)->src());
      if (!g || written.count(g->field)) return false;
      for (Stmt* o : g->operands())
        if (!recomputable(o, written, memo, depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

// The block `s` lies in, or under, `b`: true when `b` encloses `s`'s block.
bool under(const Stmt* s, const Block* b) { return block_encloses(b, s->parent()); }

// A stack whose shape allows dropping it: one push besides the bootstrap, read only by loads
// at or under the push. Whether its pushed value is recomputable is checked separately, since
// only that can change when another stack is dropped (its loads become the value it pushed; no
// stack's uses change).
struct Candidate {
  AdStackAllocaStmt* stack;
  AdStackPushStmt* push;
  AdStackPushStmt* bootstrap;  // null when there is none
};

std::optional<Candidate> candidate(AdStackAllocaStmt& stack, const Numbering& order) {
  // The bootstrap push: the first push after the alloc in its own block.
  AdStackPushStmt* bootstrap = nullptr;
  for (const Stmt::Use& use : stack.uses())
    if (auto* p = dyn_cast<AdStackPushStmt>(use.user());
        p && p->parent() == stack.parent() && order[*p] > order[stack] && (!bootstrap || order[*p] < order[*bootstrap]))
      bootstrap = p;
  AdStackPushStmt* push = nullptr;
  for (const Stmt::Use& use : stack.uses()) {
    Stmt* user = use.user();
    if (auto* p = dyn_cast<AdStackPushStmt>(user)) {
      if (p == bootstrap) continue;
      if (push) return std::nullopt;
      push = p;
    } else if (!isa<AdStackLoadTopStmt>(user)) {
      return std::nullopt;  // pop, adjoint access: already differentiated
    }
  }
  if (!push) return std::nullopt;
  for (const Stmt::Use& use : stack.uses())
    if (isa<AdStackLoadTopStmt>(use.user()) &&
        (!under(use.user(), push->parent()) || order[*use.user()] < order[*push]))
      return std::nullopt;
  return Candidate{&stack, push, bootstrap};
}

void eliminate(const Candidate& c) {
  std::vector<Stmt*> loads;
  for (const Stmt::Use& use : c.stack->uses())
    if (isa<AdStackLoadTopStmt>(use.user())) loads.push_back(use.user());
  for (Stmt* ld : loads) {
    ld->replace_all_uses_with(c.push->val());
    ld->parent()->erase(ld);
  }
  c.push->parent()->erase(c.push);
  if (c.bootstrap) c.bootstrap->parent()->erase(c.bootstrap);
  c.stack->parent()->erase(c.stack);
}

}  // namespace

int64_t eliminate_recomputable_pushes(Kernel& k) {
  // Dropping a stack turns its loads into the pushed value, which can make another stack's
  // pushed value recomputable: repeat over the candidates left (candidates are found before any
  // erasure, while the numbering is whole).
  KernelScan scan(k);
  std::vector<Candidate> left;
  for (AdStackAllocaStmt* stack : scan.stacks)
    if (auto c = candidate(*stack, scan.preorder)) left.push_back(*c);
  int64_t dropped = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::unordered_map<const Stmt*, bool> memo;  // per round: dropping a stack can make more recomputable
    std::erase_if(left, [&](const Candidate& c) {
      if (!recomputable(c.push->val(), scan.written, memo)) return false;
      eliminate(c);
      changed = true;
      ++dropped;
      return true;
    });
  }
  return dropped;
}

PassInfo EliminateRecomputablePushesPass::info() {
  return declare_pass<EliminateRecomputablePushesPass>(
      {.name = "eliminate_recomputable_pushes",
       .summary = "Drops stacks whose pushed value the reverse code can recompute (constants, args, loop indices, "
                  "unwritten fields)",
       .options = {},
       .statistics = {"stacks_dropped"},
       .create = {}});
}

PassResult EliminateRecomputablePushesPass::run(Kernel& k, const PassOptions&) {
  int64_t n = eliminate_recomputable_pushes(k);
  return {n > 0, {{"stacks_dropped", n}}};
}

}  // namespace pb::passes
