#include "passes/memory_footprint.h"

#include <fmt/format.h>

#include "ir/statements.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

enum LocationKind : uint64_t { kLocal = 0, kField = 1, kNdarray = 2, kUnknown = 3 };

// One key per location: the kind in the low two bits, the alloca's address (at least 8-byte
// aligned), field id or argument index above them.
uint64_t location(const Stmt* ptr) {
  if (isa<AllocaStmt>(ptr) || isa<AdStackAllocaStmt>(ptr)) return reinterpret_cast<uintptr_t>(ptr) | kLocal;
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return (static_cast<uint64_t>(g->field) << 2) | kField;
  if (auto* e = dyn_cast<ExternalPtrStmt>(ptr))
    if (auto* a = dyn_cast<ArgLoadStmt>(e->base())) return (static_cast<uint64_t>(a->arg_index) << 2) | kNdarray;
  return kUnknown;
}

bool intersects(const std::unordered_set<uint64_t>& a, const std::unordered_set<uint64_t>& b) {
  const auto& small = a.size() < b.size() ? a : b;
  const auto& large = a.size() < b.size() ? b : a;
  for (uint64_t key : small)
    if (large.count(key)) return true;
  return false;
}

std::string describe(uint64_t key, const Kernel& k) {
  switch (key & 3) {
    case kLocal:
      return "a local variable";
    case kField:
      return fmt::format("field '{}'", k.field(static_cast<FieldId>(key >> 2)).name);
    case kNdarray:
      return fmt::format("ndarray argument {}", key >> 2);
    default:
      return "memory through a pointer of unknown origin";
  }
}

}  // namespace

bool MemoryFootprint::records(uint64_t key) const {
  if (scope_ == Scope::all || key == kUnknown) return true;
  return ((key & 3) == kLocal) == (scope_ == Scope::locals);
}

void MemoryFootprint::read(const Stmt* ptr) {
  uint64_t key = location(ptr);
  if (!records(key)) return;
  if (key == kUnknown)
    reads_unknown_ = true;
  else
    reads_.insert(key);
}

void MemoryFootprint::write(const Stmt* ptr) {
  uint64_t key = location(ptr);
  if (!records(key)) return;
  if (key == kUnknown)
    writes_unknown_ = true;
  else
    writes_.insert(key);
}

void MemoryFootprint::add(const Stmt& s) {
  visit(s, [&](const auto& t) {
    using T = std::decay_t<decltype(t)>;
    if constexpr (std::is_same_v<T, LocalLoadStmt> || std::is_same_v<T, GlobalLoadStmt>) {
      read(t.src());
    } else if constexpr (std::is_same_v<T, LocalStoreStmt> || std::is_same_v<T, GlobalStoreStmt>) {
      write(t.dest());
    } else if constexpr (std::is_same_v<T, AtomicOpStmt>) {
      read(t.dest());
      write(t.dest());
    } else if constexpr (std::is_same_v<T, AllocaStmt> || std::is_same_v<T, AdStackAllocaStmt>) {
      write(&t);  // zero-initialised (emptied) each time it executes
    } else if constexpr (std::is_same_v<T, WhileControlStmt>) {
      if (t.has_mask()) write(t.mask());
    } else if constexpr (std::is_same_v<T, AdStackPushStmt> || std::is_same_v<T, AdStackPopStmt> ||
                         std::is_same_v<T, AdStackAccAdjointStmt>) {
      read(t.stack());
      write(t.stack());
    } else if constexpr (std::is_same_v<T, AdStackLoadTopStmt> || std::is_same_v<T, AdStackLoadTopAdjStmt>) {
      read(t.stack());
    }
    // Every other kind reads and writes no memory (values, pointers, control flow, print, assert).
  });
}

void MemoryFootprint::add_tree(const Stmt& s) {
  add(s);
  if (!s.is_container()) return;
  for (const Block* child : s.blocks())
    if (child) walk(*child, [&](Stmt& inner) { add(inner); });
}

bool MemoryFootprint::conflicts(const MemoryFootprint& o) const {
  bool touches = !reads_.empty() || !writes_.empty() || reads_unknown_ || writes_unknown_;
  bool o_touches = !o.reads_.empty() || !o.writes_.empty() || o.reads_unknown_ || o.writes_unknown_;
  if ((writes_unknown_ && o_touches) || (o.writes_unknown_ && touches)) return true;
  if ((reads_unknown_ && (!o.writes_.empty())) || (o.reads_unknown_ && !writes_.empty())) return true;
  return intersects(writes_, o.reads_) || intersects(writes_, o.writes_) || intersects(reads_, o.writes_);
}

bool MemoryFootprint::reads_what_is_written_by(const MemoryFootprint& o) const {
  if (o.writes_unknown_ && (reads_unknown_ || !reads_.empty())) return true;
  if (reads_unknown_ && !o.writes_.empty()) return true;
  return intersects(reads_, o.writes_);
}

std::string MemoryFootprint::shared_location(const MemoryFootprint& o, const Kernel& k) const {
  for (const auto* set : {&reads_, &writes_})
    for (uint64_t key : *set)
      if (o.writes_.count(key) || (set == &writes_ && o.reads_.count(key))) return describe(key, k);
  return describe(kUnknown, k);
}

}  // namespace pb::passes
