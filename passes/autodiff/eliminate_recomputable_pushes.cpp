#include "passes/autodiff/eliminate_recomputable_pushes.h"

#include <unordered_set>

#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"

namespace pb::passes {

using namespace ir;

namespace {

// One walk: pre-order positions, the stacks in order, and the fields the kernel writes.
struct KernelScan {
  std::vector<AdStackAllocaStmt*> stacks;
  std::unordered_set<FieldId> written;

  explicit KernelScan(Kernel& k) {
    uint32_t position = 0;
    walk(k.root(), [&](Stmt& s) {
      s.position = position++;
      if (auto* a = dyn_cast<AdStackAllocaStmt>(&s)) stacks.push_back(a);
      const Stmt* ptr = nullptr;
      if (auto* gs = dyn_cast<GlobalStoreStmt>(&s)) ptr = gs->dest();
      if (auto* at = dyn_cast<AtomicOpStmt>(&s)) ptr = at->dest();
      if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) written.insert(g->field);
    });
  }
};

bool recomputable(const Stmt* s, const std::unordered_set<FieldId>& written, int depth = 0) {
  if (!s || depth > 64) return false;
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
        if (!recomputable(o, written, depth + 1)) return false;
      return true;
    case StmtKind::GlobalLoad: {
      auto* g = dyn_cast<GlobalPtrStmt>(static_cast<const GlobalLoadStmt*>(s)->src());
      if (!g || written.count(g->field)) return false;
      for (Stmt* o : g->operands())
        if (!recomputable(o, written, depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

// The block `s` lies in, or under, `b`: true when `b` encloses `s`'s block.
bool under(const Stmt* s, const Block* b) { return block_encloses(b, s->parent()); }

bool try_eliminate(AdStackAllocaStmt& stack, const std::unordered_set<FieldId>& written) {
  // The bootstrap push: the first push after the alloc in its own block.
  AdStackPushStmt* bootstrap = nullptr;
  for (const Stmt::Use& use : stack.uses())
    if (auto* p = dyn_cast<AdStackPushStmt>(use.user()); p && p->parent() == stack.parent() &&
                                                         p->position > stack.position &&
                                                         (!bootstrap || p->position < bootstrap->position))
      bootstrap = p;
  AdStackPushStmt* push = nullptr;
  std::vector<Stmt*> loads;
  for (const Stmt::Use& use : stack.uses()) {
    Stmt* user = use.user();
    if (auto* p = dyn_cast<AdStackPushStmt>(user)) {
      if (p == bootstrap) continue;
      if (push) return false;
      push = p;
    } else if (isa<AdStackLoadTopStmt>(user)) {
      loads.push_back(user);
    } else {
      return false;  // pop, adjoint access: already differentiated
    }
  }
  if (!push || !recomputable(push->val(), written)) return false;
  for (Stmt* ld : loads)
    if (!under(ld, push->parent()) || ld->position < push->position) return false;
  for (Stmt* ld : loads) {
    ld->replace_all_uses_with(push->val());
    ld->parent()->erase(ld);
  }
  push->parent()->erase(push);
  if (bootstrap) bootstrap->parent()->erase(bootstrap);
  stack.parent()->erase(&stack);
  return true;
}

}  // namespace

int64_t eliminate_recomputable_pushes(Kernel& k) {
  // Dropping a stack turns its loads into the pushed value, which can make another stack's
  // pushed value recomputable: repeat over the survivors. Positions stay valid (only erasures).
  KernelScan scan(k);
  std::vector<AdStackAllocaStmt*> stacks = std::move(scan.stacks);
  int64_t dropped = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::erase_if(stacks, [&](AdStackAllocaStmt* s) {
      bool gone = try_eliminate(*s, scan.written);
      changed = changed || gone;
      dropped += gone;
      return gone;
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
