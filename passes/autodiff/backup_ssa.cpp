#include "passes/autodiff/backup_ssa.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/numbering.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"
#include "passes/autodiff/independent_blocks.h"

namespace pb::passes {

using namespace ir;

namespace {

// Computed once per kernel, before any rewrite, in one walk: pre-order numbers (statements made
// since have none), range-for bounds, and for each independent block its statements in pre-order
// and the fields it writes.
struct KernelFacts {
  struct BlockFacts {
    Block* ib = nullptr;
    std::vector<Stmt*> statements;
    std::unordered_set<FieldId> written;
  };
  std::unordered_map<const Stmt*, std::pair<const Stmt*, const Stmt*>> bounds;
  std::vector<BlockFacts> ibs;
  Numbering preorder;

  KernelFacts(Kernel& k, const std::vector<Block*>& blocks) {
    ibs.reserve(blocks.size());  // visit holds pointers into it
    preorder.reserve(k.root().total_size());
    for (Block* b : blocks) {
      index_.emplace(b, ibs.size());
      ibs.push_back({b, {}, {}});
      // Sized up front: growing by doubling would copy the list through fresh pages that the
      // kernel must zero first.
      ibs.back().statements.reserve(b->total_size());
    }
    visit(k.root(), nullptr);
  }

 private:
  void visit(Block& b, BlockFacts* in) {
    if (auto it = index_.find(&b); it != index_.end()) in = &ibs[it->second];
    for (Stmt* s : b) {
      preorder.add(*s);
      if (auto* f = dyn_cast<RangeForStmt>(s)) bounds[f] = {f->begin(), f->end()};
      if (in) {
        in->statements.push_back(s);
        const Stmt* ptr = nullptr;
        if (auto* gs = dyn_cast<GlobalStoreStmt>(s)) ptr = gs->dest();
        if (auto* at = dyn_cast<AtomicOpStmt>(s)) ptr = at->dest();
        if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) in->written.insert(g->field);
      }
      if (s->is_container())
        for (Block* child : s->blocks())
          if (child) visit(*child, in);
    }
    block_end[&b] = preorder.size();
  }

 public:
  // The pre-order number just past each block's statements and everything nested in them: a
  // block's subtree is the numbers [its first statement's, block_end).
  std::unordered_map<const Block*, uint32_t> block_end;

 private:
  std::unordered_map<const Block*, size_t> index_;
};

class Backup {
 public:
  Backup(Kernel& k, KernelFacts::BlockFacts& ib, const KernelFacts& facts, BackupSsaResult& r)
      : k_(k),
        b_(k),
        ib_(*ib.ib),
        r_(r),
        bounds_(facts.bounds),
        preorder_(facts.preorder),
        block_end_(facts.block_end),
        written_(std::move(ib.written)),
        users_(std::move(ib.statements)) {}

  void run() {
    for (Stmt* user : users_) {
      // clear() costs the bucket count even when empty: most users need no value made.
      if (!at_anchor_.empty()) at_anchor_.clear();
      if (!reads_stack_at_anchor_.empty()) reads_stack_at_anchor_.clear();
      for (size_t i = 0; i < user->num_operands(); ++i) {
        Stmt* op = user->operand(i);
        if (!op || dominates(op, user) || isa<LoopIndexStmt>(user)) continue;
        user->set_operand(i, materialize(op, user));
      }
    }
  }

 private:
  // O(1): `op` is earlier in pre-order and `anchor` lies in the subtree of op's block.
  bool dominates(const Stmt* op, const Stmt* anchor) const {
    int64_t at = preorder_.find(*op), anchor_at = preorder_.find(*anchor);
    if (at < 0 || anchor_at < 0) return false;  // made since
    auto end = block_end_.find(op->parent());
    return at < anchor_at && end != block_end_.end() && anchor_at < end->second;
  }

  bool recomputable(const Stmt* s) const {
    if (computed_from_operands(s->kind())) return true;
    switch (s->kind()) {
      case StmtKind::AdStackLoadTop:  // make_adjoint snapshots reads whose stack changes before their reverse
        return true;
      case StmtKind::GlobalLoad: {
        auto* g = dyn_cast<GlobalPtrStmt>(static_cast<const GlobalLoadStmt*>(s)->src());
        return g && !written_.count(g->field);
      }
      default:
        return false;
    }
  }

  // Whether recomputing `s` before `anchor` would read a stack top: `s` itself, or an operand
  // that would be recomputed too (one that does not dominate `anchor`).
  // Memoized per anchor, so a value shared by many later values is looked at once.
  bool reads_stack(const Stmt* s, const Stmt* anchor, int depth = 0) {
    if (isa<AdStackLoadTopStmt>(s) || depth > 64) return true;  // deep chains: spilling is always correct
    if (auto it = reads_stack_at_anchor_.find(s); it != reads_stack_at_anchor_.end()) return it->second;
    bool reads = false;
    for (const Stmt* o : s->operands())
      if (o && !dominates(o, anchor) && reads_stack(o, anchor, depth + 1)) {
        reads = true;
        break;
      }
    reads_stack_at_anchor_[s] = reads;
    return reads;
  }

  // The reversed clone of `loop` that encloses `anchor`: make_adjoint mirrors loop nesting, so it
  // is the range-for around `anchor` at `loop`'s depth in the IB; it must iterate the same
  // (original) bounds the other way.
  const RangeForStmt* reversed_clone_of(const Stmt* loop, const Stmt* anchor) const {
    const auto* f = dyn_cast<RangeForStmt>(loop);
    if (!f || !block_encloses(&ib_, f->parent())) return nullptr;
    int depth = ad::loop_depth_in(*f, ib_);
    // The loops around `anchor` inside the IB, nearest first: loops[j] has loops.size()-1-j
    // loops above it there.
    std::vector<const Stmt*> loops;
    const Block* b = anchor->parent();
    for (; b && b != &ib_; b = b->owner() ? b->owner()->parent() : nullptr)
      if (is_loop(b->owner())) loops.push_back(b->owner());
    if (!b) return nullptr;  // `anchor` is outside the IB
    for (size_t j = 0; j < loops.size(); ++j) {
      auto* r = dyn_cast<RangeForStmt>(loops[j]);
      if (!r || static_cast<int>(loops.size() - 1 - j) != depth) continue;
      auto fb = bounds_.find(f), rb = bounds_.find(r);
      if (r == f || r->reversed == f->reversed || fb == bounds_.end() || rb == bounds_.end() ||
          fb->second != rb->second)
        return nullptr;
      return r;
    }
    return nullptr;
  }

  // A value recomputed at most once per anchor, and once per anchor block when what it reads
  // cannot change within the block (no stack top): the clone made before an earlier anchor of
  // the same block dominates every later one. Without this a value shared by two later values
  // was cloned once per path: 2^n clones for n chained squarings.
  Stmt* materialize(Stmt* op, Stmt* anchor) {
    if (auto it = at_anchor_.find(op); it != at_anchor_.end()) {
      read_stack_ = read_stack_ || reads_stack_top_.count(it->second);
      return it->second;
    }
    if (auto it = in_block_.find({op, anchor->parent()}); it != in_block_.end()) return it->second;
    bool stack_before = read_stack_;
    read_stack_ = false;
    Stmt* value = materialize_once(op, anchor);
    at_anchor_[op] = value;
    if (read_stack_)
      reads_stack_top_.insert(value);
    else if (value->parent() == anchor->parent())
      in_block_[{op, anchor->parent()}] = value;
    read_stack_ = read_stack_ || stack_before;
    return value;
  }

  Stmt* materialize_once(Stmt* op, Stmt* anchor) {
    if (isa<AdStackLoadTopStmt>(op) || isa<AdStackAllocaStmt>(op)) read_stack_ = true;
    if (isa<AdStackAllocaStmt>(op))
      throw UserError(
          fmt::format("the reverse code uses the stack `{}`, which is declared in a loop or branch it is outside of",
                      print_stmt(*op, k_)),
          "declare stacks at the top of their independent block (promote_ssa_to_local hoists variables there)");
    // A value computed once per execution of the block is spilled rather than recomputed when
    // its recomputation would read a stack: later pushes may have changed the top by then.
    bool once = loops_.nearest(*op) == nullptr;
    if (recomputable(op) && !(once && reads_stack(op, anchor))) {
      if (auto* li = dyn_cast<LoopIndexStmt>(op)) {
        if (const RangeForStmt* r = reversed_clone_of(li->loop(), anchor)) {
          b_.set_insertion_point_before(*anchor);
          ++r_.cloned;
          return b_.loop_index(const_cast<RangeForStmt*>(r), li->axis);
        }
      } else {
        auto copy = clone_tree(*op, &k_);
        for (size_t i = 0; i < copy->num_operands(); ++i) {
          Stmt* o = copy->operand(i);
          if (o && !dominates(o, anchor)) copy->set_operand(i, materialize(o, anchor));
        }
        ++r_.cloned;
        return anchor->parent()->insert_before(anchor, std::move(copy));
      }
    }
    if (const Stmt* loop = loops_.nearest(*op))
      throw UserError(
          fmt::format(
              "the reverse code needs `{}` from every iteration of `{}`, which a single spilled value cannot hold",
              print_stmt(*op, k_), print_stmt(*loop, k_)),
          "this value needs an autodiff stack: use reverse_ad (use_stack=true, the default), or run "
          "promote_ssa_to_local and replace_locals_with_stacks before make_adjoint");
    auto [it, fresh] = spills_.emplace(op, nullptr);
    if (fresh) {
      b_.set_insertion_point_before(*ib_.front());
      it->second = b_.alloca(op->type.scalar);
      b_.set_insertion_point_after(*op);
      b_.local_store(it->second, op);
    }
    b_.set_insertion_point_before(*anchor);
    ++r_.spilled;
    return b_.local_load(it->second);
  }

  Kernel& k_;
  Builder b_;
  Block& ib_;
  BackupSsaResult& r_;
  const std::unordered_map<const Stmt*, std::pair<const Stmt*, const Stmt*>>& bounds_;
  const Numbering& preorder_;
  const std::unordered_map<const Block*, uint32_t>& block_end_;
  ad::IbLoops loops_{ib_};
  std::unordered_set<FieldId> written_;
  std::vector<Stmt*> users_;  // the IB in pre-order, before any rewrite
  std::unordered_map<const Stmt*, Stmt*> spills_;
  struct PairHash {
    size_t operator()(const std::pair<const Stmt*, const Block*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<const Stmt*, Stmt*> at_anchor_;  // values made for the current anchor
  std::unordered_map<std::pair<const Stmt*, const Block*>, Stmt*, PairHash> in_block_;  // stack-free clones
  std::unordered_map<const Stmt*, bool> reads_stack_at_anchor_;
  std::unordered_set<const Stmt*> reads_stack_top_;  // values made that read a stack top
  bool read_stack_ = false;                          // the value being made reads a stack top somewhere in its tree
};

}  // namespace

BackupSsaResult backup_ssa(Kernel& k) {
  BackupSsaResult r;
  KernelFacts facts(k, find_independent_blocks(k));
  for (KernelFacts::BlockFacts& ib : facts.ibs) Backup(k, ib, facts, r).run();
  return r;
}

PassInfo BackupSsaPass::info() {
  return declare_pass<BackupSsaPass>(
      {.name = "backup_ssa",
       .summary = "Makes forward values used by reverse code dominate it (recompute or spill)",
       .options = {},
       .statistics = {"cloned", "spilled"},
       .create = {}});
}

PassResult BackupSsaPass::run(Kernel& k, const PassOptions&) {
  BackupSsaResult r = backup_ssa(k);
  return {r.cloned + r.spilled > 0, {{"cloned", r.cloned}, {"spilled", r.spilled}}, {}};
}

}  // namespace pb::passes
