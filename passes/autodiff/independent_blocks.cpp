#include "passes/autodiff/independent_blocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

bool is_gradient_field(const Kernel& k, FieldId f) { return k.field(f).primal.has_value(); }

// Reads, writes or atomics on differentiable globals, not counting those inside nested
// range-fors. A write counts because its reverse (zeroing the gradient it overwrote) must come
// after the reverse of the loops that follow it in the same body (`y[i] = 0` before an inner
// loop accumulating into y[i]). Any access to a gradient field counts too: make_adjoint turns
// each such access into one on the gradient field at the same level, so the blocks found after
// it are the blocks it used.
bool has_global_ad_access(const Kernel& k, const Block& b) {
  for (const Stmt* s : b) {
    const Stmt* ptr = nullptr;
    if (auto* ld = dyn_cast<GlobalLoadStmt>(s)) ptr = ld->src();
    if (auto* at = dyn_cast<AtomicOpStmt>(s)) ptr = at->dest();
    if (auto* gs = dyn_cast<GlobalStoreStmt>(s)) ptr = gs->dest();
    if (auto* g = dyn_cast<GlobalPtrStmt>(ptr);
        g && (is_differentiable_field(k, g->field) || is_gradient_field(k, g->field)))
      return true;
    if (isa<ExternalPtrStmt>(ptr)) return true;  // an ndarray or its gradient array, like a field or its gradient
    if (isa<RangeForStmt>(s)) continue;
    for (const Block* child : s->blocks())
      if (child && has_global_ad_access(k, *child)) return true;
  }
  return false;
}

bool contains_range_for(const Block& b) {
  bool found = false;
  walk(b, [&](Stmt& s) { found = found || isa<RangeForStmt>(&s); });
  return found;
}

// The local (alloca or stack) a statement reads or writes as a variable, or nullptr.
const Stmt* local_accessed(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::LocalLoad:
      return static_cast<const LocalLoadStmt&>(s).src();
    case StmtKind::LocalStore:
      return static_cast<const LocalStoreStmt&>(s).dest();
    case StmtKind::AtomicOp: {
      const Stmt* d = static_cast<const AtomicOpStmt&>(s).dest();
      return isa<AllocaStmt>(d) ? d : nullptr;
    }
    // Autodiff stacks are locals too: a body that uses an outer stack stays dependent, so the
    // blocks found do not change once replace_locals_with_stacks has run.
    case StmtKind::AdStackPush:
    case StmtKind::AdStackPop:
    case StmtKind::AdStackLoadTop:
    case StmtKind::AdStackLoadTopAdj:
    case StmtKind::AdStackAccAdjoint:
      return s.operand(0);
    default:
      return nullptr;
  }
}

// Finds the blocks top-down. A loop body is dependent when it accesses a local made in a block
// that strictly encloses it. Rather than walking every body for such accesses, the finder looks
// at the locals made in the blocks it scans for loops (the only blocks that can enclose a body it
// will ask about) and marks, from each access, the loop bodies between the access and the local's
// block: the cost is the accesses of those locals, not the size of the bodies.
struct Finder {
  const Kernel& k;
  std::vector<Block*> found;
  std::unordered_set<const Block*> dependent;  // loop bodies accessing a local of an enclosing block

  void note_local(const Stmt& local) {
    std::vector<const Block*> bodies;
    for (const Stmt::Use& u : local.uses()) {
      if (local_accessed(*u.user()) != &local || u.slot() != 0) continue;
      bodies.clear();
      const Block* x = u.user()->parent();
      for (; x && x != local.parent(); x = x->owner() ? x->owner()->parent() : nullptr)
        if (x->owner() && is_loop(x->owner())) bodies.push_back(x);
      if (x) dependent.insert(bodies.begin(), bodies.end());  // only where the local's block encloses the access
    }
  }

  // The loops directly reachable from `b` without entering another loop (ifs are entered); notes
  // the locals made on the way.
  void scan(const Block& b, std::vector<Stmt*>& loops) {
    for (Stmt* s : b) {
      if (is_loop(s)) {
        loops.push_back(s);
        continue;
      }
      if (isa<AllocaStmt>(s) || isa<AdStackAllocaStmt>(s)) note_local(*s);
      if (s->is_container())
        for (const Block* child : s->blocks())
          if (child) scan(*child, loops);
    }
  }

  void visit(Stmt* loop, int depth) {
    Block* body = loop->blocks()[0];
    bool independent = !dependent.count(body);
    bool smallest = independent && (has_global_ad_access(k, *body) || !contains_range_for(*body));
    if (smallest) {
      found.push_back(body);
    } else if (independent) {
      std::vector<Stmt*> loops;
      scan(*body, loops);
      for (Stmt* l : loops) visit(l, depth + 1);
    } else {
      found.push_back(depth == 1 ? body : loop->parent());
    }
  }
};

}  // namespace

std::vector<Block*> find_independent_blocks(Kernel& k) {
  Finder f{k, {}, {}};
  std::vector<Stmt*> top;
  f.scan(k.root(), top);
  if (top.empty()) return {&k.root()};
  for (Stmt* l : top) f.visit(l, 1);
  // Keep each block once, and only the outermost of nested ones.
  std::unordered_set<const Block*> found(f.found.begin(), f.found.end()), kept;
  std::vector<Block*> out;
  for (Block* b : f.found) {
    bool nested = false;
    for (const Stmt* o = b->owner(); o && !nested; o = o->parent() ? o->parent()->owner() : nullptr)
      nested = found.count(o->parent()) > 0;
    if (!nested && kept.insert(b).second) out.push_back(b);
  }
  return out;
}

std::function<std::string(const Stmt&)> independent_block_annotations(const Kernel& k) {
  // find_independent_blocks only reads the kernel.
  auto blocks = find_independent_blocks(const_cast<Kernel&>(k));
  std::unordered_map<const Stmt*, std::string> notes;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block* b = blocks[i];
    if (b->owner())
      notes[b->owner()] = fmt::format("IB {}: this loop's body", i + 1);
    else if (b->front())
      notes[b->front()] = fmt::format("IB {}: the kernel root", i + 1);
  }
  return [notes = std::move(notes)](const Stmt& s) {
    auto it = notes.find(&s);
    return it == notes.end() ? std::string() : it->second;
  };
}

PassInfo IdentifyIndependentBlocksPass::info() {
  return declare_pass<IdentifyIndependentBlocksPass>(
      {.name = "identify_independent_blocks",
       .summary = "Analysis: the independent blocks that hold forward and reverse code (see replay --annotate-ib)",
       .options = {},
       .statistics = {"independent_blocks", "root_is_block"},
       .create = {}});
}

PassResult IdentifyIndependentBlocksPass::run(Kernel& k, const PassOptions&) {
  auto blocks = find_independent_blocks(k);
  bool root = blocks.size() == 1 && blocks[0] == &k.root();
  std::vector<std::string> notes;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Stmt* owner = blocks[i]->owner();
    std::string line = owner ? print_stmt(*owner, k) : "";
    if (line.ends_with(" {")) line.resize(line.size() - 2);
    notes.push_back(owner ? fmt::format("IB {}: body of `{}`", i + 1, line)
                          : fmt::format("IB {}: the kernel root", i + 1));
  }
  return {false,
          {{"independent_blocks", static_cast<int64_t>(blocks.size())}, {"root_is_block", root ? 1 : 0}},
          std::move(notes)};
}

}  // namespace pb::passes
