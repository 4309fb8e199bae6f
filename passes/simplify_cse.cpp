// The block-scoped stages of simplify: store-to-load forwarding and CSE.
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "ir/builder.h"
#include "ir/visitor.h"
#include "passes/simplify.h"

namespace pb::passes {

using namespace ir;

namespace {

// Allocas a statement (or anything nested in it) may write.
void collect_local_writes(const Stmt& s, std::unordered_set<const Stmt*>& out) {
  if (const auto* st = dyn_cast<LocalStoreStmt>(&s)) out.insert(st->dest());
  if (const auto* a = dyn_cast<AtomicOpStmt>(&s); a && isa<AllocaStmt>(a->dest())) out.insert(a->dest());
  if (const auto* w = dyn_cast<WhileControlStmt>(&s)) out.insert(w->mask());
  for (const Block* b : s.blocks())
    if (b)
      for (const Stmt* c : *b) collect_local_writes(*c, out);
}

struct Forwarder {
  Kernel& k;
  int64_t forwarded = 0;

  void block(Block& b) {
    // alloca -> the value it holds here (nullptr: zero, as just allocated)
    std::unordered_map<const Stmt*, Stmt*> known;
    for (Stmt* s : b.statements()) {
      if (isa<AllocaStmt>(s)) {
        known[s] = nullptr;
      } else if (auto* st = dyn_cast<LocalStoreStmt>(s)) {
        known[st->dest()] = st->val();
      } else if (auto* ld = dyn_cast<LocalLoadStmt>(s)) {
        auto it = known.find(ld->src());
        if (it == known.end()) continue;
        Stmt* v = it->second;
        if (!v) {
          Builder bld(k);
          bld.set_insertion_point_before(*ld);
          v = bld.constant(Value::zero(ld->type.scalar));
        }
        ld->replace_all_uses_with(v);
        b.erase(ld);
        ++forwarded;
      } else if (s->is_container() || isa<AtomicOpStmt>(s) || isa<WhileControlStmt>(s)) {
        std::unordered_set<const Stmt*> writes;
        collect_local_writes(*s, writes);
        for (const Stmt* a : writes) known.erase(a);
        for (Block* child : s->blocks())
          if (child) block(*child);
      }
    }
  }
};

// The identity of a pure statement: kind, attributes and operands.
struct CseKey {
  StmtKind kind;
  DataType type;
  int64_t attr = 0;
  uint64_t bits = 0;
  std::vector<const Stmt*> operands;
  bool operator==(const CseKey& o) const {
    return kind == o.kind && type == o.type && attr == o.attr && bits == o.bits && operands == o.operands;
  }
};

struct CseKeyHash {
  size_t operator()(const CseKey& k) const {
    size_t h = static_cast<size_t>(k.kind) * 1000003u ^ static_cast<size_t>(k.type.scalar) * 31u ^ (k.type.pointer ? 7u : 0u);
    h ^= std::hash<int64_t>()(k.attr) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= std::hash<uint64_t>()(k.bits) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    for (const Stmt* s : k.operands) h ^= std::hash<const void*>()(s) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  }
};

std::optional<CseKey> key_of(const Stmt& s) {
  CseKey key{s.kind(), s.type, 0, 0, {s.operands().begin(), s.operands().end()}};
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

struct Cse {
  int64_t replaced = 0;
  std::unordered_map<CseKey, Stmt*, CseKeyHash> available;

  void block(Block& b) {
    std::vector<CseKey> scope;  // keys this block made available, removed when it ends
    for (Stmt* s : b.statements()) {
      if (auto key = key_of(*s)) {
        auto it = available.find(*key);
        if (it != available.end()) {
          s->replace_all_uses_with(it->second);
          b.erase(s);
          ++replaced;
          continue;
        }
        scope.push_back(*key);
        available.emplace(std::move(*key), s);
      }
      for (Block* child : s->blocks())
        if (child) block(*child);
    }
    for (const CseKey& key : scope) available.erase(key);
  }
};

}  // namespace

int64_t forward_local_stores(Kernel& k) {
  Forwarder f{k};
  f.block(k.root());
  return f.forwarded;
}

int64_t eliminate_common_subexpressions(Kernel& k) {
  Cse c;
  c.block(k.root());
  return c.replaced;
}

}  // namespace pb::passes
