#include "passes/simplify.h"

#include <fmt/format.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/huge_pages.h"
#include "ir/stmt_map.h"
#include "ir/visitor.h"
#include "passes/simplify_rules.h"

namespace pb::passes {

using namespace ir;

namespace {

// The identity of a pure statement: kind, type, attributes, up to four operands.
struct CseKey {
  StmtKind kind{};
  DataType type;
  uint8_t num_operands = 0;
  int64_t attr = 0;
  uint64_t bits = 0;
  const Stmt* operands[4] = {};
  bool operator==(const CseKey& o) const {
    if (kind != o.kind || !(type == o.type) || num_operands != o.num_operands || attr != o.attr || bits != o.bits)
      return false;
    for (int i = 0; i < num_operands; ++i)
      if (operands[i] != o.operands[i]) return false;
    return true;
  }
};

struct CseKeyHash {
  size_t operator()(const CseKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.kind) | static_cast<uint64_t>(k.type.scalar) << 8 |
                 static_cast<uint64_t>(k.type.pointer) << 16;
    auto mix = [&](uint64_t v) {
      h = (h ^ v) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    };
    mix(static_cast<uint64_t>(k.attr));
    mix(k.bits);
    for (int i = 0; i < k.num_operands; ++i) mix(reinterpret_cast<uintptr_t>(k.operands[i]));
    return static_cast<size_t>(h);
  }
};

std::optional<CseKey> key_of(const Stmt& s) {
  if (!computed_from_operands(s.kind()) || s.num_operands() > 4) return std::nullopt;  // before touching operands
  CseKey key;
  key.kind = s.kind();
  key.type = s.type;
  key.num_operands = static_cast<uint8_t>(s.num_operands());
  for (size_t i = 0; i < s.num_operands(); ++i) key.operands[i] = s.operand(i);
  switch (s.kind()) {
    case StmtKind::Const:
      key.bits = static_cast<const ConstStmt&>(s).value.bits();
      return key;
    case StmtKind::ArgLoad:
      key.attr = static_cast<const ArgLoadStmt&>(s).arg_index;
      return key;
    case StmtKind::UnaryOp:
      key.attr = static_cast<int64_t>(static_cast<const UnaryOpStmt&>(s).op);
      return key;
    case StmtKind::BinaryOp:
      key.attr = static_cast<int64_t>(static_cast<const BinaryOpStmt&>(s).op);
      return key;
    case StmtKind::TernaryOp:
      return key;
    case StmtKind::GlobalPtr: {
      const auto& g = static_cast<const GlobalPtrStmt&>(s);
      key.attr = g.field;
      key.bits = g.activate;
      return key;
    }
    case StmtKind::ExternalPtr: {
      const auto& e = static_cast<const ExternalPtrStmt&>(s);
      if (!e.element_shape.empty()) return std::nullopt;
      key.attr = static_cast<int>(e.is_grad) | static_cast<int>(e.is_dual) << 1;
      key.bits = e.layout == "AOS";
      return key;
    }
    case StmtKind::LoopIndex:
      key.attr = static_cast<const LoopIndexStmt&>(s).axis;
      return key;
    default:
      return std::nullopt;
  }
}

// Available expressions for CSE. The entries (statement, hash, slot) are kept in insertion
// order; a hash table with linear probing maps keys to them: a byte array of tags (empty, or
// 8 bits of the key's hash) beside an array of 32-bit entry numbers. A lookup of a key that is
// not there (most lookups) reads only tags; a tag match reads the entry number and the entry.
// Scopes nest like blocks, and closing one empties the slots its entries filled. Every insertion
// filled an empty slot and growing re-inserts in insertion order, so what remains is exactly the
// table the older entries alone would make: no tombstones, and the table holds only what is
// available now. Its size follows that count (the statements of the open blocks), which in a
// kernel made of loop bodies is a small fraction of the kernel, so the table stays in cache where
// one sized by the kernel would not (figures: docs/performance.md, "simplify's CSE table").
class AvailableTable {
 public:
  // Empties the table, sized so that `expected` insertions keep it at most half full; more grow it.
  void reset(size_t expected) {
    size_t n = 1024;
    while (n < 2 * expected) n *= 2;
    tags_.assign(n, kEmpty);
    if (slots_.size() < n) slots_.resize(n);  // kept across rounds and calls: see thread_table()
    entries_.clear();
    entries_.reserve(expected);
    scope_starts_.clear();
  }

  int open_scope() {
    scope_starts_.push_back(entries_.size());
    return static_cast<int>(scope_starts_.size()) - 1;
  }
  void close_scope(int scope) {
    PB_ASSERT(static_cast<size_t>(scope) + 1 == scope_starts_.size(), "CSE scopes close innermost first");
    size_t start = scope_starts_.back();
    scope_starts_.pop_back();
    for (size_t i = entries_.size(); i > start; --i) tags_[entries_[i - 1].slot] = kEmpty;
    entries_.resize(start);
  }

  Stmt* find(const CseKey& key, size_t hash) const {
    uint8_t tag = tag_of(hash);
    for (size_t i = hash & mask(); tags_[i] != kEmpty; i = (i + 1) & mask())
      if (tags_[i] == tag) {
        // The stored hash bits first: a statement made long ago is likely a cache miss.
        const Entry& e = entries_[slots_[i]];
        if (e.hash == static_cast<uint32_t>(hash) && key_of(*e.stmt) == key) return e.stmt;
      }
    return nullptr;
  }

  void insert(size_t hash, Stmt* s) {
    PB_ASSERT(entries_.size() < UINT32_MAX, "CSE table full");
    if ((entries_.size() + 1) * 2 > tags_.size()) grow();
    entries_.push_back({s, static_cast<uint32_t>(hash), 0});
    entries_.back().slot = place(hash, static_cast<uint32_t>(entries_.size() - 1));
  }

 private:
  // 16 bytes. The low 32 bits of the hash are enough to place an entry again when the table
  // grows (it never has 2^32 slots); the tag is taken from the same bits.
  struct Entry {
    Stmt* stmt;
    uint32_t hash;
    uint32_t slot;
  };
  static constexpr uint8_t kEmpty = 0;
  // The top 8 of the 32 stored bits, which index the table only beyond 2^24 slots.
  static uint8_t tag_of(size_t hash) { return static_cast<uint8_t>(1 + ((hash >> 24) & 0xff) % 255); }
  size_t mask() const { return tags_.size() - 1; }  // slots_ may be longer than tags_

  uint32_t place(size_t hash, uint32_t entry) {
    size_t i = hash & mask();
    while (tags_[i] != kEmpty) i = (i + 1) & mask();
    tags_[i] = tag_of(hash);
    slots_[i] = entry;
    return static_cast<uint32_t>(i);
  }

  // Doubles the table and re-inserts every entry in order, from its stored hash.
  void grow() {
    tags_.assign(tags_.size() * 2, kEmpty);
    if (slots_.size() < tags_.size()) slots_.resize(tags_.size());
    for (size_t j = 0; j < entries_.size(); ++j) entries_[j].slot = place(entries_[j].hash, static_cast<uint32_t>(j));
  }

  std::vector<uint8_t, HugePageAllocator<uint8_t>> tags_;     // probed at random: huge pages spare the TLB
  std::vector<uint32_t, HugePageAllocator<uint32_t>> slots_;  // entry numbers, valid where the tag is not empty
  std::vector<Entry> entries_;                                // open scopes' insertions, oldest first
  std::vector<size_t> scope_starts_;                          // per open scope: its first entry
};

// One table per thread, kept between calls: on a large kernel it would otherwise be fresh memory
// every time, which the kernel zeroes page by page on first touch.
AvailableTable& thread_table() {
  thread_local AvailableTable table;
  return table;
}

class Simplifier {
 public:
  Simplifier(Kernel& k, SimplifyResult& r) : k_(k), r_(r), available_(thread_table()) {}

  // One round; returns whether anything changed.
  bool round() {
    nested_fold_ = false;
    int64_t before = r_.folded + r_.identities + r_.cse + r_.branches_folded + r_.loads_forwarded;
    available_.reset(k_.root().size());  // the root's statements stay available to the end
    writes_.clear();
    block(k_.root());
    return r_.folded + r_.identities + r_.cse + r_.branches_folded + r_.loads_forwarded != before;
  }

  // Whether another round can find more. Within a round every statement is visited with its
  // operands final, and a container's local writes are taken after its body is visited (so an
  // `if` folded inside it has already dropped its stores); a round that folded an `if` inside a
  // container is still followed by another, as a guard.
  bool may_change_again() const { return nested_fold_; }

 private:
  // Replaces `s` by `by` everywhere and erases it.
  static void replace(Stmt* s, Stmt* by) {
    s->replace_all_uses_with(by);
    s->parent()->erase(s);
  }

  // A constant equal to `v` visible at `at`: an existing one, or a new one inserted before it.
  Stmt* constant_before(Stmt* at, const Value& v) {
    CseKey key;
    key.kind = StmtKind::Const;
    key.type = DataType::of(v.kind());
    key.bits = v.bits();
    size_t h = CseKeyHash()(key);
    if (Stmt* existing = available_.find(key, h)) return existing;
    Stmt* raw = at->parent()->insert_before(at, k_.make<ConstStmt>(v));
    available_.insert(h, raw);
    return raw;
  }

  void block(Block& b) {
    int scope = available_.open_scope();           // what this block makes available ends with it
    std::unordered_map<const Stmt*, Stmt*> known;  // alloca -> value it holds (nullptr: zero)
    Stmt* s = b.front();
    while (s) {
      Stmt* next = s->next();
      if (isa<UnaryOpStmt>(s) || isa<BinaryOpStmt>(s) || isa<TernaryOpStmt>(s)) {
        if (auto* t = dyn_cast<TernaryOpStmt>(s); t && isa<ConstStmt>(t->cond())) {
          replace(t, static_cast<ConstStmt*>(t->cond())->value.as_bool() ? t->a() : t->b());
          ++r_.folded;
          s = next;
          continue;
        }
        if (auto v = simplify_rules::fold(*s)) {
          replace(s, constant_before(s, *v));
          ++r_.folded;
          s = next;
          continue;
        }
        if (Stmt* same = simplify_rules::identity(s)) {
          replace(s, same);
          ++r_.identities;
          s = next;
          continue;
        }
      }
      if (auto key = key_of(*s)) {
        size_t h = CseKeyHash()(*key);
        if (Stmt* existing = available_.find(*key, h)) {
          replace(s, existing);
          ++r_.cse;
        } else {
          available_.insert(h, s);
        }
        s = next;
        continue;
      }
      ++clock_;
      if (isa<AllocaStmt>(s)) {
        known[s] = nullptr;
      } else if (auto* st = dyn_cast<LocalStoreStmt>(s)) {
        known[st->dest()] = st->val();
        wrote(st->dest());
      } else if (auto* ld = dyn_cast<LocalLoadStmt>(s)) {
        if (auto it = known.find(ld->src()); it != known.end()) {
          Stmt* v = it->second ? it->second : constant_before(ld, Value::zero(ld->type.scalar));
          replace(ld, v);
          ++r_.loads_forwarded;
        }
      } else if (auto* i = dyn_cast<IfStmt>(s); i && isa<ConstStmt>(i->cond())) {
        // Splice the taken branch in place of the if and continue the walk at its first statement.
        Block* taken = static_cast<ConstStmt*>(i->cond())->value.as_bool() ? i->true_block.get() : i->false_block.get();
        Stmt* first = nullptr;
        if (taken)
          while (!taken->empty()) {
            Stmt* moved = b.insert_before(i, taken->detach(taken->front()));
            if (!first) first = moved;
          }
        b.erase(i);
        ++r_.branches_folded;
        nested_fold_ = nested_fold_ || depth_ > 0;
        s = first ? first : next;
        continue;
      } else if (isa<FuncCallStmt>(s)) {
        known.clear();  // a `ref($a)` argument lets the callee write any variable whose address escaped
        call_at_ = clock_;
      } else if (auto* at = dyn_cast<AtomicOpStmt>(s); at && isa<AllocaStmt>(at->dest())) {
        known.erase(at->dest());
        wrote(at->dest());
      } else if (auto* w = dyn_cast<WhileControlStmt>(s); w && w->has_mask()) {
        known.erase(w->mask());
        wrote(w->mask());
      } else if (s->is_container()) {
        uint64_t entered = clock_;
        size_t logged = writes_.size();
        for (Block* child : s->blocks())
          if (child) {
            ++depth_;
            block(*child);
            --depth_;
          }
        forget_written_since(entered, logged, known);
      }
      s = next;
    }
    available_.close_scope(scope);
  }

  void wrote(const Stmt* var) {
    written_at_[var] = clock_;
    writes_.push_back(var);
  }

  // After a container's body was visited: the variables written in it (stamped later than
  // `entered`, logged after `logged`) no longer hold what `known` says. Looks from the smaller
  // side, the writes or the variables known: the body's size would cost a nest of ifs its depth
  // per statement, and the variables known would cost a block of many adjoints and many ifs
  // their product.
  void forget_written_since(uint64_t entered, size_t logged, std::unordered_map<const Stmt*, Stmt*>& known) {
    if (call_at_ > entered) {
      known.clear();
      return;
    }
    if (known.empty()) return;
    if (writes_.size() - logged < known.size()) {
      for (size_t i = logged; i < writes_.size(); ++i) known.erase(writes_[i]);
      return;
    }
    for (auto it = known.begin(); it != known.end();) {
      const uint64_t* w = written_at_.find(it->first);
      it = w && *w > entered ? known.erase(it) : std::next(it);
    }
  }

  Kernel& k_;
  SimplifyResult& r_;
  AvailableTable& available_;
  uint64_t clock_ = 0;               // statements visited this round, in walk order
  StmtMap<uint64_t> written_at_;     // variable -> clock_ at the last write visited (store, atomic, mask)
  std::vector<const Stmt*> writes_;  // the variables written, in walk order (this round)
  uint64_t call_at_ = 0;             // clock_ at the last function call visited (it may write any)
  int depth_ = 0;                    // containers around the block being visited
  bool nested_fold_ = false;         // this round folded an `if` inside a container
};

}  // namespace

SimplifyResult simplify(Kernel& k, int64_t max_rounds) {
  SimplifyResult r;
  Simplifier s(k, r);
  while (r.rounds < max_rounds) {
    ++r.rounds;
    if (!s.round() || !s.may_change_again()) break;
  }
  return r;
}

PassInfo SimplifyPass::info() {
  return declare_pass<SimplifyPass>(
      {.name = "simplify",
       .summary = "Constant folding, exact identities, CSE, constant if/select folding, local store-to-load forwarding",
       .options = {{.name = "max_rounds",
                    .type = OptionType::Int,
                    .default_value = "16",
                    .help = "fixed-point round limit",
                    .choices = {},
                    .min_int = 1}},
       .statistics = {"folded", "identities", "cse", "branches_folded", "loads_forwarded", "rounds"},
       .create = {}});
}

PassResult SimplifyPass::run(Kernel& k, const PassOptions& options) {
  int64_t rounds = options.get_int("max_rounds");
  if (rounds < 1)
    throw UserError(fmt::format("simplify{{max_rounds={}}}: max_rounds must be at least 1", rounds),
                    "use simplify{max_rounds=1} or more");
  SimplifyResult r = simplify(k, rounds);
  return {r.changed(),
          {{"folded", r.folded},
           {"identities", r.identities},
           {"cse", r.cse},
           {"branches_folded", r.branches_folded},
           {"loads_forwarded", r.loads_forwarded},
           {"rounds", r.rounds}}};
}

}  // namespace pb::passes
