#include "passes/autodiff/write_after_read.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

using ArrayKey = std::pair<int, int64_t>;  // (0, field id) or (1, ndarray argument index)

std::optional<ArrayKey> array_of(const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return ArrayKey{0, g->field};
  if (auto* e = dyn_cast<ExternalPtrStmt>(ptr))
    if (auto* a = dyn_cast<ArgLoadStmt>(e->base())) return ArrayKey{1, a->arg_index};
  return std::nullopt;
}

std::span<Stmt* const> indices_of(const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return g->indices();
  return static_cast<const ExternalPtrStmt*>(ptr)->indices();
}

std::string array_name(const Kernel& k, const ArrayKey& key) {
  if (key.first == 0) return fmt::format("field '{}'", k.field(static_cast<FieldId>(key.second)).name);
  return fmt::format("ndarray argument {}", key.second);
}

// Whether the reverse kernel may need the loaded value itself (see the header). The value stored
// into an array with a needed load is needed too: the reverse kernel replays the store and that
// load reads it back.
bool value_needed(const Stmt* load, const std::set<ArrayKey>& needed_arrays) {
  std::vector<const Stmt*> work{load};
  std::unordered_set<const Stmt*> seen{load};
  auto stored_into_needed = [&](const Stmt* ptr) {
    auto key = array_of(ptr);
    return !key || needed_arrays.count(*key) > 0;
  };
  while (!work.empty()) {
    const Stmt* v = work.back();
    work.pop_back();
    for (const Stmt::Use& u : v->uses()) {
      const Stmt* user = u.user();
      bool passes_on = false;
      if (auto* st = dyn_cast<GlobalStoreStmt>(user)) {
        if (u.slot() == 1 && !stored_into_needed(st->dest())) continue;  // the store's adjoint does not read it
        return true;
      }
      if (auto* a = dyn_cast<AtomicOpStmt>(user)) {
        if (u.slot() == 1 && (a->op == AtomicOp::add || a->op == AtomicOp::sub) && !stored_into_needed(a->dest()))
          continue;
        return true;
      }
      if (isa<PrintStmt>(user)) continue;
      if (auto* un = dyn_cast<UnaryOpStmt>(user)) passes_on = gradient_of(un->op) == Gradient::linear;
      if (auto* bin = dyn_cast<BinaryOpStmt>(user)) {
        // Scaling by a constant (x * c, c * x, x / c) reads no other differentiable value.
        const Stmt* other = bin->operand(1 - u.slot());
        bool by_constant =
            isa<ConstStmt>(other) && (bin->op == BinaryOp::mul || (bin->op == BinaryOp::div && u.slot() == 0));
        passes_on = gradient_of(bin->op) == Gradient::linear || by_constant;
      }
      if (isa<TernaryOpStmt>(user)) passes_on = u.slot() != 0;
      if (!passes_on) return true;
      if (seen.insert(user).second) work.push_back(user);
    }
  }
  return false;
}

// The statement whose block holds `s` (null at the root).
const Stmt* container_of(const Stmt* s) { return s->parent() ? s->parent()->owner() : nullptr; }

bool encloses(const Stmt* outer, const Stmt* s) {
  for (const Stmt* c = container_of(s); c; c = container_of(c))
    if (c == outer) return true;
  return false;
}

// A loop whose iterations run one after another (not a top-level range or struct for).
bool serial_loop(const Stmt* s) {
  if (!is_loop(s)) return false;
  bool parallel = (isa<RangeForStmt>(s) || isa<StructForStmt>(s)) && !container_of(s);
  return !parallel;
}

}  // namespace

bool may_run_after(const Stmt* read, const Stmt* write, const std::unordered_map<const Stmt*, size_t>& order) {
  for (const Stmt* c = container_of(read); c; c = container_of(c))
    if (serial_loop(c) && encloses(c, write)) return true;
  if (order.at(write) < order.at(read)) return false;
  // Both in one if, one in each branch: never in the same run of it.
  std::vector<const Block*> read_blocks;
  for (const Stmt* s = read; s; s = container_of(s)) read_blocks.push_back(s->parent());
  for (const Stmt* s = write; s; s = container_of(s)) {
    const Stmt* owner = s->parent()->owner();
    if (!owner) break;
    for (const Block* rb : read_blocks)
      if (rb != s->parent() && rb->owner() == owner) return !isa<IfStmt>(owner);
  }
  return true;
}

namespace {

bool same_indices(std::span<Stmt* const> a, std::span<Stmt* const> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// Whether a plain store to the element `read` reads runs before it on every path, in the same
// iteration: its block holds the read (directly or nested), earlier. The reverse kernel replays the
// forward statements in order, so that store puts back the value the forward read saw.
bool rewritten_first(const Stmt* read, std::span<Stmt* const> read_idx, const std::vector<const Stmt*>& writes,
                     const std::unordered_map<const Stmt*, size_t>& order) {
  for (const Stmt* w : writes) {
    if (!isa<GlobalStoreStmt>(w) || !same_indices(indices_of(w->operand(0)), read_idx)) continue;
    if (order.at(w) > order.at(read)) continue;
    for (const Stmt* s = read; s; s = container_of(s))
      if (s->parent() == w->parent()) return true;
  }
  return false;
}

}  // namespace

void check_write_after_read(const Kernel& k, const std::function<bool(const Stmt*, const Stmt*)>& disjoint) {
  std::map<ArrayKey, std::vector<const Stmt*>> reads, writes;
  std::unordered_map<const Stmt*, size_t> order;
  for (const Stmt* s : collect_preorder(k.root())) {
    order.emplace(s, order.size());
    if (auto* ld = dyn_cast<GlobalLoadStmt>(s)) {
      if (auto key = array_of(ld->src())) reads[*key].push_back(s);
    } else if (auto* st = dyn_cast<GlobalStoreStmt>(s)) {
      if (auto key = array_of(st->dest())) writes[*key].push_back(s);
    } else if (auto* at = dyn_cast<AtomicOpStmt>(s)) {
      if (auto key = array_of(at->dest())) writes[*key].push_back(s);
    }
  }
  // The arrays with a needed load, to a fixed point (a needed load can make a stored value needed).
  std::set<ArrayKey> needed;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [key, rs] : reads)
      if (!needed.count(key) &&
          std::any_of(rs.begin(), rs.end(), [&](const Stmt* r) { return value_needed(r, needed); }))
        grew = needed.insert(key).second;
  }
  for (const auto& [key, ws] : writes) {
    auto rs = reads.find(key);
    if (rs == reads.end() || !needed.count(key)) continue;
    for (const Stmt* read : rs->second) {
      if (!value_needed(read, needed)) continue;
      const Stmt* rp = static_cast<const GlobalLoadStmt*>(read)->src();
      if (rewritten_first(read, indices_of(rp), ws, order)) continue;
      for (const Stmt* write : ws) {
        const Stmt* wp = write->operand(0);
        auto ri = indices_of(rp), wi = indices_of(wp);
        bool apart = false, same = same_indices(ri, wi);
        for (size_t a = 0; a < ri.size() && a < wi.size(); ++a) apart = apart || disjoint(ri[a], wi[a]);
        if (apart || !may_run_after(read, write, order)) continue;
        throw UserError(
            fmt::format("{} is read and then {}written in the same launch: the reverse kernel starts from the "
                        "forward kernel's final memory and would read the new value (a wrong gradient)\n  read:  `{}` "
                        "through `{}`\n  write: `{}` through `{}`{}",
                        array_name(k, key), same ? "" : "maybe ", print_stmt(*read, k), print_stmt(*rp, k),
                        print_stmt(*write, k), print_stmt(*wp, k),
                        same ? "" : "\n  (the indices are not provably different, so this is conservative)"),
            "write the new values to a second field, or split the kernel in two at the write");
      }
    }
  }
}

}  // namespace pb::passes
