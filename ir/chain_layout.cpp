// Declares the layout a header-less dump's SNode access chain shows (ir/snode.h,
// declare_chain_layout).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ir/kernel.h"
#include "ir/snode.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

// The coordinate an index operand extracts from, through the splits lower_access emits (division,
// modulo, shifts and masks by constants, bit_extract); the operand itself otherwise.
const Stmt* coordinate_of(const Stmt* s) {
  while (s) {
    if (const auto* b = dyn_cast<BitExtractStmt>(s)) {
      s = b->input();
      continue;
    }
    const auto* bin = dyn_cast<BinaryOpStmt>(s);
    bool split = bin && isa<ConstStmt>(bin->rhs()) &&
                 (bin->op == BinaryOp::div || bin->op == BinaryOp::floordiv || bin->op == BinaryOp::mod ||
                  bin->op == BinaryOp::bit_shr || bin->op == BinaryOp::bit_sar || bin->op == BinaryOp::bit_and);
    if (!split) return s;
    s = bin->lhs();
  }
  return s;
}

// What one lookup shows about its SNode.
struct Seen {
  std::string kind;
  Shape own;                             // cells per parent cell, from the linearized strides
  std::vector<const Stmt*> coordinates;  // per axis
  std::string parent;                    // empty: a child of the root
  std::vector<const Stmt*> parent_coordinates;
};

struct Inferred {
  std::string kind;
  Shape own;
  std::string parent;
  bool same_axes = false;  // its axes are its parent's (else new axes after the parent's)
  bool consistent = true;
};

bool is_root(const std::string& snode, const std::map<std::string, std::string>& kinds) {
  auto it = kinds.find(snode);
  return (it != kinds.end() && it->second == "root") || snode.ends_with("root");
}

}  // namespace

std::vector<std::string> declare_chain_layout(Kernel& k) {
  // Only a kernel that uses an undeclared sparse SNode: the chain of a dense dump runs as it is.
  bool undeclared_sparse = false;
  walk(k.root(), [&](const Stmt& s) {
    if (const auto* l = dyn_cast<SNodeLookupStmt>(&s)) {
      const IndexSpace* sp = k.find_space(l->snode);
      bool sparse = snode_kind_from_name(l->snode_type).value_or(SNodeKind::dense) != SNodeKind::dense;
      undeclared_sparse = undeclared_sparse || ((!sp || !sp->declared) && sparse);
    }
  });
  if (!undeclared_sparse) return {};

  std::map<std::string, std::string> kinds;
  walk(k.root(), [&](const Stmt& s) {
    if (const auto* l = dyn_cast<SNodeLookupStmt>(&s)) kinds[l->snode] = l->snode_type;
  });
  std::map<std::string, Inferred> found;
  std::map<std::string, std::string> places;  // place field -> its SNode
  std::map<FieldId, size_t> indexed;          // fields a global ptr reaches -> its index count
  walk(k.root(), [&](const Stmt& s) {
    if (const auto* g = dyn_cast<GlobalPtrStmt>(&s)) indexed[g->field] = g->indices().size();
    if (const auto* ch = dyn_cast<GetChStmt>(&s); ch && !ch->type.gen && !is_root(ch->from, kinds)) {
      places.emplace(ch->to, ch->from);
      return;
    }
    const auto* l = dyn_cast<SNodeLookupStmt>(&s);
    if (!l || l->snode_type == "root") return;
    Seen seen;
    seen.kind = l->snode_type;
    // A lookup by a plain cell number (a constant) shows no shape: the other lookups tell.
    const auto* lin = dyn_cast<LinearizeStmt>(l->index());
    if (!lin) return;
    seen.own = lin->strides;
    for (const Stmt* i : lin->operands()) seen.coordinates.push_back(coordinate_of(i));
    if (const auto* up = dyn_cast<GetChStmt>(l->parent_ptr()); up && !is_root(up->from, kinds)) {
      seen.parent = up->from;
      const auto* parent_lookup = dyn_cast<SNodeLookupStmt>(up->input());
      const auto* parent_lin = parent_lookup ? dyn_cast<LinearizeStmt>(parent_lookup->index()) : nullptr;
      if (!parent_lin) return;
      for (const Stmt* i : parent_lin->operands()) seen.parent_coordinates.push_back(coordinate_of(i));
    }
    // Its axes are its parent's when each coordinate is the parent's on the same axis, new ones
    // when it shares none with the parent; anything else is not a layout this reads.
    std::set<const Stmt*> up(seen.parent_coordinates.begin(), seen.parent_coordinates.end());
    bool same = !seen.parent.empty() && seen.coordinates == seen.parent_coordinates;
    bool fresh =
        std::none_of(seen.coordinates.begin(), seen.coordinates.end(), [&](const Stmt* c) { return up.count(c) != 0; });
    auto [it, first] = found.try_emplace(l->snode);
    Inferred& inf = it->second;
    if (first) {
      inf.kind = seen.kind;
      inf.own = seen.own;
      inf.parent = seen.parent;
      inf.same_axes = same;
    }
    bool agrees = inf.kind == seen.kind && inf.own == seen.own && inf.parent == seen.parent && (same || fresh) &&
                  inf.same_axes == same;
    inf.consistent = inf.consistent && agrees;
  });

  // Declare top-down: a space after its parent, with its full shape.
  std::vector<std::string> declared;
  std::map<std::string, Shape> full;
  for (const IndexSpace& sp : k.spaces)
    if (sp.declared && sp.shape) full[sp.name] = *sp.shape;
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [name, inf] : found) {
      if (full.count(name) || !inf.consistent) continue;
      auto kind = snode_kind_from_name(inf.kind);
      if (!kind) continue;
      Shape shape = inf.own;
      bool fits = std::all_of(shape.begin(), shape.end(), [](int64_t n) { return n >= 1; });
      if (!inf.parent.empty()) {
        auto p = full.find(inf.parent);
        if (p == full.end()) continue;  // after its parent, if the parent is ever declared
        if (inf.same_axes) {
          fits = fits && p->second.size() == shape.size();
          for (size_t d = 0; fits && d < shape.size(); ++d)
            fits = !__builtin_mul_overflow(shape[d], p->second[d], &shape[d]);
        } else {
          shape.insert(shape.begin(), p->second.begin(), p->second.end());
        }
      }
      // A shape the header could not hold (an empty or overflowing extent, too many axes) is
      // left undeclared.
      if (!fits || shape.size() > static_cast<size_t>(kMaxRank)) {
        inf.consistent = false;
        continue;
      }
      IndexSpace sp;
      sp.name = name;
      sp.shape = shape;
      sp.declared = true;
      sp.kind = *kind;
      sp.parent = inf.parent;
      std::erase_if(k.spaces, [&](const IndexSpace& s) { return s.name == name; });
      // After the declared spaces, before the undeclared ones: the order the header reads back in.
      auto at = std::find_if(k.spaces.begin(), k.spaces.end(), [](const IndexSpace& s) { return !s.declared; });
      k.spaces.insert(at, std::move(sp));
      full[name] = shape;
      declared.push_back(name);
      progress = true;
    }
  }
  // Each place's field lives in its SNode, with the SNode's full shape.
  for (const auto& [place, snode] : places) {
    auto id = k.find_field(place);
    auto shape = full.find(snode);
    if (!id || shape == full.end() || std::find(declared.begin(), declared.end(), snode) == declared.end()) continue;
    Field& f = k.field(*id);
    auto use = indexed.find(*id);
    bool agrees = use == indexed.end() || use->second == shape->second.size();
    if (!f.space.empty() || (f.shape && *f.shape != shape->second) || f.primal || !agrees) continue;
    f.shape = shape->second;
    f.space = snode;
    f.declared = true;
  }
  return declared;
}

}  // namespace pb::ir
