#include "passes/autodiff/independent_blocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

bool is_differentiable_field(const Kernel& k, FieldId f) {
  const Field& field = k.field(f);
  return field.grad.has_value() && is_float(field.dtype);
}

namespace {

bool touches_outer_alloca(const Block& b) {
  bool found = false;
  walk(b, [&](Stmt& s) {
    const Stmt* a = nullptr;
    switch (s.kind()) {  // by kind first: reading operands of every statement costs a cache miss each
      case StmtKind::LocalLoad:
        a = static_cast<LocalLoadStmt&>(s).src();
        break;
      case StmtKind::LocalStore:
        a = static_cast<LocalStoreStmt&>(s).dest();
        break;
      case StmtKind::AtomicOp:
        if (isa<AllocaStmt>(static_cast<AtomicOpStmt&>(s).dest())) a = static_cast<AtomicOpStmt&>(s).dest();
        break;
      // Autodiff stacks are locals too: a body that uses an outer stack stays dependent, so the
      // blocks found do not change once replace_locals_with_stacks has run.
      case StmtKind::AdStackPush:
      case StmtKind::AdStackPop:
      case StmtKind::AdStackLoadTop:
      case StmtKind::AdStackLoadTopAdj:
      case StmtKind::AdStackAccAdjoint:
        a = s.operand(0);
        break;
      default:
        return;
    }
    if (a && a->parent() != &b && block_encloses(a->parent(), &b)) found = true;
  });
  return found;
}

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
    if (auto* e = dyn_cast<ExternalPtrStmt>(ptr); e && !e->is_grad) return true;
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

// The loops directly reachable from `b` without entering another loop (ifs are entered).
void child_loops(const Block& b, std::vector<Stmt*>& out) {
  for (Stmt* s : b) {
    if (isa<RangeForStmt>(s) || isa<StructForStmt>(s) || isa<WhileStmt>(s)) {
      out.push_back(s);
      continue;
    }
    for (const Block* child : s->blocks())
      if (child) child_loops(*child, out);
  }
}

struct Finder {
  const Kernel& k;
  std::vector<Block*> found;

  void visit(Stmt* loop, int depth) {
    Block* body = loop->blocks()[0];
    bool independent = !touches_outer_alloca(*body);
    bool smallest = independent && (has_global_ad_access(k, *body) || !contains_range_for(*body));
    if (smallest) {
      found.push_back(body);
    } else if (independent) {
      std::vector<Stmt*> loops;
      child_loops(*body, loops);
      for (Stmt* l : loops) visit(l, depth + 1);
    } else {
      found.push_back(depth == 1 ? body : loop->parent());
    }
  }
};

}  // namespace

std::vector<Block*> find_independent_blocks(Kernel& k) {
  std::vector<Stmt*> top;
  child_loops(k.root(), top);
  if (top.empty()) return {&k.root()};
  Finder f{k, {}};
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
