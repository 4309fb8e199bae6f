#include "ir/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "ir/assert.h"
#include "ir/stmt_map.h"
#include "ir/visitor.h"

namespace pb::ir {

std::vector<Stmt*> collect_preorder(const Block& b) {
  std::vector<Stmt*> out;
  out.reserve(b.total_size());
  walk(b, [&](Stmt& s) { out.push_back(&s); });
  return out;
}

Kernel::Kernel() : root_(std::make_unique<Block>()) {}
Kernel::~Kernel() = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;

std::optional<FieldId> Kernel::find_field(std::string_view n) const {
  auto it = field_index_.find(std::string(n));
  if (it == field_index_.end()) return std::nullopt;
  return it->second;
}

FieldId Kernel::add_field(Field f) {
  PB_ASSERT(!find_field(f.name), "field '" + f.name + "' added twice");
  auto id = static_cast<FieldId>(fields_.size());
  field_index_.emplace(f.name, id);
  fields_.push_back(std::move(f));
  return id;
}

FieldId Kernel::ensure_grad(FieldId id) {
  if (auto g = field(id).grad) return *g;
  Field g;
  g.name = field(id).name + ".grad";
  g.dtype = field(id).dtype;
  g.tensor = field(id).tensor;
  g.shape = field(id).shape;
  g.space = field(id).space;
  g.primal = id;
  g.declared = field(id).declared;
  FieldId gid = add_field(std::move(g));
  field(id).grad = gid;
  return gid;
}

FieldId Kernel::ensure_dual(FieldId id) {
  if (auto d = field(id).dual) return *d;
  Field d;
  d.name = field(id).name + ".dual";
  while (find_field(d.name)) d.name += "_";
  d.dtype = field(id).dtype;
  d.tensor = field(id).tensor;
  d.shape = field(id).shape;
  d.space = field(id).space;
  d.primal = id;
  d.declared = field(id).declared;
  FieldId did = add_field(std::move(d));
  field(id).dual = did;
  return did;
}

const IndexSpace* Kernel::find_space(std::string_view n) const {
  for (const auto& s : spaces)
    if (s.name == n) return &s;
  return nullptr;
}

const ArgDecl* Kernel::find_arg(int index) const {
  for (const auto& a : args)
    if (a.index == index) return &a;
  return nullptr;
}

void Kernel::renumber(int first) {
  int next = first;
  walk(*root_, [&](Stmt& s) { s.id = next++; });
  next_id_ = next;
}

size_t Kernel::count_statements() const { return root_->total_size(); }

namespace {

// Source statement -> its copy.
using CloneMap = StmtMap<Stmt*>;

std::unique_ptr<Stmt> clone_rec(const Stmt& s, Kernel* kernel, CloneMap& map, std::vector<Stmt*>& copies) {
  auto copy = s.clone_shallow();
  if (kernel) copy->id = kernel->fresh_id();
  map[&s] = copy.get();
  copies.push_back(copy.get());
  auto src_blocks = s.blocks();
  auto dst_blocks = copy->blocks();
  for (size_t i = 0; i < src_blocks.size(); ++i) {
    if (!src_blocks[i]) continue;
    PB_ASSERT(dst_blocks[i], "clone lost a block");
    for (const Stmt* child : *src_blocks[i]) dst_blocks[i]->push_back(clone_rec(*child, kernel, map, copies));
  }
  return copy;
}

void remap(const CloneMap& map, const std::vector<Stmt*>& copies) {
  for (Stmt* c : copies)
    for (size_t i = 0; i < c->num_operands(); ++i)
      if (Stmt* const* copy = c->operand(i) ? map.find(c->operand(i)) : nullptr) c->set_operand(i, *copy);
}

}  // namespace

std::unique_ptr<Stmt> clone_tree(const Stmt& s, Kernel* kernel) {
  CloneMap map(s.subtree_size());
  std::vector<Stmt*> copies;
  copies.reserve(s.subtree_size());
  auto copy = clone_rec(s, kernel, map, copies);
  remap(map, copies);
  return copy;
}

std::unique_ptr<Kernel> Kernel::clone() const {
  auto k = std::make_unique<Kernel>();
  k->name = name;
  k->fields_ = fields_;
  k->field_index_ = field_index_;
  k->spaces = spaces;
  k->args = args;
  k->next_id_ = next_id_;
  CloneMap map(root_->total_size());
  std::vector<Stmt*> copies;
  copies.reserve(root_->total_size());
  for (const Stmt* s : *root_) k->root_->push_back(clone_rec(*s, nullptr, map, copies));
  remap(map, copies);
  return k;
}

int nesting_depth(const Block& root, int limit) {
  // An explicit stack of (block, next statement) frames instead of recursion.
  std::vector<std::pair<const Block*, const Stmt*>> frames{{&root, root.front()}};
  int deepest = 0;
  while (!frames.empty()) {
    auto& [block, next] = frames.back();
    if (!next) {
      frames.pop_back();
      continue;
    }
    const Stmt* s = next;
    next = s->next();
    if (!s->is_container()) continue;
    for (const Block* child : s->blocks()) {
      if (!child) continue;
      int depth = static_cast<int>(frames.size());
      deepest = std::max(deepest, depth);
      if (deepest > limit) return deepest;
      frames.emplace_back(child, child->front());
    }
  }
  return deepest;
}

std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty()) return std::string("a name is empty");
  // Parentheses only inside `<...>`: an SNode name carries its type there (`S2bit_array<ba(cu1x32)>`).
  int angle = 0;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    angle += c == '<' ? 1 : c == '>' ? -1 : 0;
    if (std::isalnum(u) || c == '_' || c == '.' || c == '<' || c == '>') continue;
    if ((c == '(' || c == ')') && angle > 0) continue;
    std::string shown = std::isprint(u) ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02x}", u);
    return fmt::format("name '{}' holds {}, which does not print back", name, shown);
  }
  return std::nullopt;
}

std::optional<std::string> header_problem(const Kernel& k) {
  std::set<std::string_view> space_names;
  for (const IndexSpace& sp : k.spaces) {
    if (auto p = name_problem(sp.name)) return "index space: " + *p;
    if (!space_names.insert(sp.name).second) return fmt::format("index space '{}' is declared twice", sp.name);
    if (!sp.declared && sp.shape)
      return fmt::format("index space '{}' is not declared but has a shape (the header prints only declared ones)",
                         sp.name);
    if (!sp.declared && (sp.kind != SNodeKind::dense || !sp.parent.empty()))
      return fmt::format(
          "index space '{}' is not declared but has a kind or a parent (the header prints only "
          "declared ones)",
          sp.name);
  }
  if (auto p = nesting_problem(k)) return p;
  const auto& fields = k.fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    auto id = static_cast<FieldId>(i);
    if (auto p = name_problem(f.name)) return "field: " + *p;
    if (!f.declared && f.shape)
      return fmt::format("field '{}' is not declared but has a shape (the header prints only declared fields)", f.name);
    if (!f.space.empty() && !k.find_space(f.space))
      return fmt::format("field '{}' lives in index space '{}', which is not declared", f.name, f.space);
    for (auto [c, what] : {std::pair{f.grad, "grad"}, std::pair{f.dual, "dual"}}) {
      if (!c) continue;
      const Field& comp = k.field(*c);
      if (f.primal) return fmt::format("field '{}' is a companion and has a {} companion of its own", f.name, what);
      if (comp.primal != id || *c == id)
        return fmt::format("field '{}' names '{}' as its {} field, but '{}' does not name it as its primal", f.name,
                           comp.name, what, comp.name);
      if (comp.dtype != f.dtype || comp.tensor != f.tensor || comp.shape != f.shape || comp.space != f.space ||
          comp.declared != f.declared)
        return fmt::format("{} field '{}' differs from its primal '{}' in type, shape, space or declaration", what,
                           comp.name, f.name);
    }
    if (f.primal) {
      const Field& p = k.field(*f.primal);
      if (p.grad != id && p.dual != id)
        return fmt::format("field '{}' names '{}' as its primal, but '{}' does not name it as a companion", f.name,
                           p.name, p.name);
    }
  }
  std::set<int> arg_indices;
  for (const ArgDecl& a : k.args) {
    if (!arg_indices.insert(a.index).second) return fmt::format("argument {} is declared twice", a.index);
    // A scalar argument has no rank; the text form cannot say one, so a rank would not survive printing.
    if (!a.ndarray && a.ndim != 0)
      return fmt::format(
          "argument {} is a scalar but declares {} dimensions; give it \"ndarray\": true or drop \"ndim\"", a.index,
          a.ndim);
    if (a.element_of >= 0 && (a.ndarray || a.tensor != 0))
      return fmt::format("argument {} stands for an element of argument {}, so it is a scalar", a.index, a.element_of);
  }
  // An element argument's tensor is the caller's: the kernel reads it only through its elements.
  for (const ArgDecl& a : k.args)
    if (a.element_of >= 0 && arg_indices.count(a.element_of))
      return fmt::format("argument {} stands for element {} of argument {}, which the kernel declares itself", a.index,
                         a.element, a.element_of);
  return std::nullopt;
}

}  // namespace pb::ir
