#include "ir/snode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "ir/kernel.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::ir {

std::optional<SNodeKind> snode_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kSNodeKindNames); ++i)
    if (kSNodeKindNames[i] == name) return static_cast<SNodeKind>(i);
  return std::nullopt;
}

std::vector<int64_t> padded_parent_shape(const std::vector<int64_t>& parent, size_t rank) {
  std::vector<int64_t> p = parent;
  p.resize(std::max(rank, p.size()), 1);
  return p;
}

ScalarKind scalar_of_snode_name(std::string_view name) {
  for (char sep : {'<', '_'}) {
    size_t at = name.rfind(sep);
    if (at == std::string_view::npos) continue;
    std::string_view suffix = name.substr(at + 1);
    if (!suffix.empty() && suffix.back() == '>') suffix.remove_suffix(1);
    if (auto k = scalar_from_name(std::string(suffix))) return *k;
  }
  return ScalarKind::unknown;
}

bool is_sparse_snode(const Kernel& k, std::string_view snode) {
  if (const IndexSpace* sp = k.find_space(snode); sp && sp->declared) return sp->kind != SNodeKind::dense;
  if (k.find_field(snode)) return false;
  // The reference names SNodes `S<id><type>`; a `<...>` suffix carries a place's type.
  std::string_view base = snode.substr(0, snode.find('<'));
  return std::ranges::any_of(std::initializer_list<std::string_view>{"pointer", "bitmasked", "dynamic", "hash"},
                             [&](std::string_view t) { return base.ends_with(t); });
}

std::optional<std::vector<int64_t>> cell_pointer_shape(const Kernel& k, std::string_view snode) {
  const IndexSpace* sp = k.find_space(snode);
  if (!sp || !sp->declared || !sp->shape) return std::nullopt;
  if (sp->kind != SNodeKind::dynamic) return sp->shape;
  const IndexSpace* up = sp->parent.empty() ? nullptr : k.find_space(sp->parent);
  return up ? up->shape.value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
}

bool in_sparse_tree(const Kernel& k, std::string_view space) {
  // Parents are declared before their children (nesting_problem), so the walk up ends.
  for (size_t depth = 0; depth <= k.spaces.size(); ++depth) {
    const IndexSpace* sp = k.find_space(space);
    if (!sp || !sp->declared) return false;
    if (sp->kind != SNodeKind::dense) return true;
    if (sp->parent.empty()) return false;
    space = sp->parent;
  }
  return false;
}

std::optional<std::string> first_sparse_use(const Kernel& k) {
  for (const IndexSpace& sp : k.spaces)
    if (sp.declared && sp.kind != SNodeKind::dense)
      return fmt::format("index space '{}' is {}", sp.name, snode_kind_name(sp.kind));
  std::optional<std::string> use;
  walk(k.root(), [&](const Stmt& s) {
    if (use) return;
    std::string_view snode;
    if (const auto* l = dyn_cast<SNodeLookupStmt>(&s))
      snode = l->snode;
    else if (const auto* o = dyn_cast<SNodeOpStmt>(&s))
      snode = o->snode;
    else if (const auto* c = dyn_cast<SNodePtrStmt>(&s))
      snode = c->snode;
    else if (const auto* t = dyn_cast<OffloadedStmt>(&s))
      snode = is_sparse_snode(k, t->parent_snode) ? t->parent_snode : t->snode;
    else if (const auto* f = dyn_cast<StructForStmt>(&s))
      snode = f->space;
    if (!snode.empty() && is_sparse_snode(k, snode))
      use = fmt::format("`{}` uses the sparse SNode '{}'", print_stmt(s, k), snode);
  });
  return use;
}

std::optional<SNodeUseProblem> snode_use_problem(const Kernel& k, const Stmt& s) {
  std::string_view snode, kind;
  if (const auto* l = dyn_cast<SNodeLookupStmt>(&s)) {
    snode = l->snode;
    kind = l->snode_type;
  } else if (const auto* o = dyn_cast<SNodeOpStmt>(&s)) {
    snode = o->snode;
  } else if (const auto* c = dyn_cast<SNodePtrStmt>(&s)) {
    snode = c->snode;
  } else if (const auto* t = dyn_cast<OffloadedStmt>(&s)) {
    snode = is_sparse_snode(k, t->parent_snode) ? t->parent_snode : t->snode;
  }
  if (snode.empty()) return std::nullopt;
  const IndexSpace* sp = k.find_space(snode);
  bool declared = sp && sp->declared && sp->shape;
  if (!declared && (is_sparse_snode(k, snode) || (!kind.empty() && kind != "dense" && kind != "root")))
    return SNodeUseProblem{
        fmt::format("`{}` uses the sparse SNode '{}', which the header does not declare", print_stmt(s, k), snode),
        kDeclareSNodeRemedy};
  if (declared && !kind.empty() && kind != snode_kind_name(sp->kind))
    return SNodeUseProblem{fmt::format("`{}` looks up SNode '{}' as {}, but the header declares it {}",
                                       print_stmt(s, k), snode, kind, snode_kind_name(sp->kind)),
                           "declare the space with the kind the dump prints"};
  return std::nullopt;
}

std::optional<std::string> nesting_problem(const Kernel& k) {
  for (size_t i = 0; i < k.spaces.size(); ++i) {
    const IndexSpace& sp = k.spaces[i];
    if (sp.parent.empty()) continue;
    auto parent = std::find_if(k.spaces.begin(), k.spaces.begin() + static_cast<std::ptrdiff_t>(i),
                               [&](const IndexSpace& p) { return p.name == sp.parent; });
    if (parent == k.spaces.begin() + static_cast<std::ptrdiff_t>(i))
      return fmt::format("index space '{}' is nested in '{}', which is not declared before it", sp.name, sp.parent);
    const std::optional<std::vector<int64_t>>& own = sp.shape;
    const std::optional<std::vector<int64_t>>& up = parent->shape;
    if (!sp.declared || !parent->declared || !own || !up)
      return fmt::format("index space '{}' and its parent '{}' must both be declared with a shape", sp.name, sp.parent);
    const std::vector<int64_t>& shape = *own;
    const std::vector<int64_t>& parent_shape = *up;
    if (parent_shape.size() > shape.size())
      return fmt::format("index space '{}' {} has fewer dimensions than its parent '{}' {}", sp.name,
                         shape_to_string(shape), sp.parent, shape_to_string(parent_shape));
    std::vector<int64_t> p = padded_parent_shape(parent_shape, shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      if (p[d] <= 0 || shape[d] % p[d] != 0)
        return fmt::format(
            "index space '{}' {} does not split into the cells of its parent '{}' {}: each "
            "dimension must be a multiple of the parent's",
            sp.name, shape_to_string(shape), sp.parent, shape_to_string(parent_shape));
  }
  return std::nullopt;
}

}  // namespace pb::ir
