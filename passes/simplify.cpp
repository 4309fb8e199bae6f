#include "passes/simplify.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/diagnostic.h"
#include "ir/huge_pages.h"
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
  if (s.num_operands() > 4) return std::nullopt;
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
      key.attr = e.is_grad;
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

// Available expressions for CSE: a flat open-addressing table of 16-byte slots (hash, scope,
// statement), sized once per round from the kernel's statement count. Entries of blocks that
// have ended stay in place but no longer match (their scope is dead) and are overwritten by
// later insertions, so leaving a block costs nothing and lookups never allocate.
class AvailableTable {
 public:
  // Empties the table, sized so that `expected` insertions rarely make it grow.
  void reset(size_t expected) {
    size_t n = 1024;
    while (n < expected) n *= 2;
    slots_.assign(n, Slot{});
    alive_.clear();
    used_ = 0;
  }

  int open_scope() {
    alive_.push_back(true);
    return static_cast<int>(alive_.size()) - 1;
  }
  void close_scope(int scope) { alive_[static_cast<size_t>(scope)] = false; }

  Stmt* find(const CseKey& key, size_t hash) const {
    uint32_t h = static_cast<uint32_t>(hash);
    for (size_t i = h & mask(); slots_[i].stmt; i = (i + 1) & mask()) {
      const Slot& e = slots_[i];
      if (e.hash == h && alive_[e.scope] && key_of(*e.stmt) == key) return e.stmt;
    }
    return nullptr;
  }

  void insert(size_t hash, Stmt* s, int scope) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    place(static_cast<uint32_t>(hash), s, static_cast<uint32_t>(scope));
  }

 private:
  struct Slot {
    uint32_t hash = 0;  // the low half of the key's hash (tables stay below 2^32 slots)
    uint32_t scope = 0;
    Stmt* stmt = nullptr;
  };
  size_t mask() const { return slots_.size() - 1; }
  void place(uint32_t hash, Stmt* s, uint32_t scope) {
    size_t i = hash & mask();
    while (slots_[i].stmt && alive_[slots_[i].scope]) i = (i + 1) & mask();
    if (!slots_[i].stmt) ++used_;
    slots_[i] = {hash, scope, s};
  }
  void grow() {
    auto old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    used_ = 0;
    for (const Slot& e : old)
      if (e.stmt && alive_[e.scope]) place(e.hash, e.stmt, e.scope);
  }

  std::vector<Slot, HugePageAllocator<Slot>> slots_;  // probed at random: huge pages spare the TLB
  std::vector<bool> alive_;
  size_t used_ = 0;
};

// Allocas a statement (or anything nested in it) may write.
void collect_local_writes(const Stmt& s, std::unordered_set<const Stmt*>& out) {
  if (const auto* st = dyn_cast<LocalStoreStmt>(&s)) out.insert(st->dest());
  if (const auto* a = dyn_cast<AtomicOpStmt>(&s); a && isa<AllocaStmt>(a->dest())) out.insert(a->dest());
  if (const auto* w = dyn_cast<WhileControlStmt>(&s)) out.insert(w->mask());
  if (!s.is_container()) return;
  for (const Block* b : s.blocks())
    if (b)
      for (const Stmt* c : *b) collect_local_writes(*c, out);
}

class Simplifier {
 public:
  Simplifier(Kernel& k, SimplifyResult& r) : k_(k), r_(r) {}

  // One round; returns whether anything changed.
  bool round() {
    int64_t before = r_.folded + r_.identities + r_.cse + r_.branches_folded + r_.loads_forwarded;
    available_.reset(k_.count_statements());
    block(k_.root());
    return r_.folded + r_.identities + r_.cse + r_.branches_folded + r_.loads_forwarded != before;
  }

 private:
  // Replaces `s` by `by` everywhere and erases it.
  static void replace(Stmt* s, Stmt* by) {
    s->replace_all_uses_with(by);
    s->parent()->erase(s);
  }

  // A constant equal to `v` visible at `at`: an existing one, or a new one inserted before it.
  Stmt* constant_before(Stmt* at, const Value& v, int scope) {
    CseKey key;
    key.kind = StmtKind::Const;
    key.type = DataType::of(v.kind());
    key.bits = v.bits();
    size_t h = CseKeyHash()(key);
    if (Stmt* existing = available_.find(key, h)) return existing;
    Stmt* raw = at->parent()->insert_before(at, k_.make<ConstStmt>(v));
    available_.insert(h, raw, scope);
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
          replace(s, constant_before(s, *v, scope));
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
          available_.insert(h, s, scope);
        }
        s = next;
        continue;
      }
      if (isa<AllocaStmt>(s)) {
        known[s] = nullptr;
      } else if (auto* st = dyn_cast<LocalStoreStmt>(s)) {
        known[st->dest()] = st->val();
      } else if (auto* ld = dyn_cast<LocalLoadStmt>(s)) {
        if (auto it = known.find(ld->src()); it != known.end()) {
          Stmt* v = it->second ? it->second : constant_before(ld, Value::zero(ld->type.scalar), scope);
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
        s = first ? first : next;
        continue;
      } else if (s->is_container() || isa<AtomicOpStmt>(s) || isa<WhileControlStmt>(s)) {
        if (!known.empty()) {
          std::unordered_set<const Stmt*> writes;
          collect_local_writes(*s, writes);
          for (const Stmt* a : writes) known.erase(a);
        }
        for (Block* child : s->blocks())
          if (child) block(*child);
      }
      s = next;
    }
    available_.close_scope(scope);
  }

  Kernel& k_;
  SimplifyResult& r_;
  AvailableTable available_;
};

}  // namespace

SimplifyResult simplify(Kernel& k, int64_t max_rounds) {
  SimplifyResult r;
  Simplifier s(k, r);
  while (r.rounds < max_rounds) {
    ++r.rounds;
    if (!s.round()) break;
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
                    .choices = {}}},
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
