#include "passes/lower_access.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ir/builder.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

constexpr const char* kRoot = "S0root";

class AccessLowerer {
 public:
  AccessLowerer(Kernel& k, bool atomics) : k_(k), atomics_(atomics), b_(k) {
    for (const Field& f : k.fields()) taken_.insert(f.name);
    for (const IndexSpace& s : k.spaces) taken_.insert(s.name);
    taken_.insert(kRoot);
  }

  LowerAccessResult run() {
    std::vector<std::pair<Stmt*, GlobalPtrStmt*>> uses;  // (user, pointer), in program order
    walk(k_.root(), [&](Stmt& s) {
      Stmt* ptr = nullptr;
      if (auto* load = dyn_cast<GlobalLoadStmt>(&s)) ptr = load->src();
      if (auto* store = dyn_cast<GlobalStoreStmt>(&s)) ptr = store->dest();
      if (auto* atomic = dyn_cast<AtomicOpStmt>(&s); atomic && atomics_) ptr = atomic->dest();
      if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) uses.emplace_back(&s, g);
    });
    std::set<GlobalPtrStmt*> touched;
    for (auto [user, ptr] : uses) {
      std::optional<Shape> shape = shape_of(*ptr);
      if (!shape) {
        ++r_.skipped;
        continue;
      }
      b_.set_insertion_point_before(*user);
      user->replace_operand(ptr, chain(*ptr, dense_of(ptr->field), *shape));
      touched.insert(ptr);
      ++r_.lowered;
    }
    for (GlobalPtrStmt* ptr : touched)
      if (!ptr->has_users()) ptr->parent()->erase(ptr);
    return r_;
  }

 private:
  // The field's extents: declared or given by its header, or none for a pointer without indices
  // (a 0-d field, whatever the inputs say); nullopt when unknown until the run (or an axis is
  // empty, which no linearized stride can express).
  std::optional<Shape> shape_of(const GlobalPtrStmt& ptr) const {
    const Field& f = k_.field(ptr.field);
    if (f.tensor != 0) return std::nullopt;  // tensor cells: scalarize first
    // A field of a sparse or nested space: its chain has several levels, which this pass does not build.
    if (const IndexSpace* sp = k_.find_space(f.space); sp && (sp->kind != SNodeKind::dense || !sp->parent.empty()))
      return std::nullopt;
    if (!f.shape) return ptr.indices().empty() ? std::optional<Shape>(Shape{}) : std::nullopt;
    for (int64_t d : *f.shape)
      if (d < 1) return std::nullopt;
    return f.shape;
  }

  // The dense SNode the field is placed in: its declared space, else one named for it.
  const std::string& dense_of(FieldId id) {
    if (auto it = dense_.find(id); it != dense_.end()) return it->second;
    std::string name = k_.field(id).space;
    if (name.empty()) {
      do name = "S" + std::to_string(next_number_++) + "dense";
      while (taken_.count(name));
      taken_.insert(name);
    }
    return dense_[id] = name;
  }

  Stmt* chain(const GlobalPtrStmt& ptr, const std::string& dense, const Shape& shape) {
    const Field& f = k_.field(ptr.field);
    Stmt* root = b_.create<GetRootStmt>(std::string("[S0root][root]"));
    Stmt* root_index = b_.create<LinearizeStmt>(std::vector<Stmt*>{}, std::vector<int64_t>{});
    Stmt* root_cell = b_.create<SNodeLookupStmt>(kRoot, "root", root, root_index, false);
    Stmt* container = get_child(kRoot, dense, root_cell, DataType::gen_pointer());
    // Each axis of this level is divided by the cells the levels below hold on it: one.
    std::vector<Stmt*> indices;
    for (Stmt* i : ptr.indices())
      indices.push_back(b_.binary(BinaryOp::bit_shr, i, b_.constant(Value::zero(i->type.scalar))));
    Stmt* index = b_.create<LinearizeStmt>(indices, shape);
    Stmt* cell = b_.create<SNodeLookupStmt>(dense, "dense", container, index, false);
    return get_child(dense, f.name, cell, DataType::pointer_to(f.dtype));
  }

  Stmt* get_child(const std::string& from, const std::string& to, Stmt* input, DataType type) {
    auto s = k_.make<GetChStmt>(from, to, input);
    s->type = type;
    return b_.insert(std::move(s));
  }

  Kernel& k_;
  bool atomics_;
  Builder b_;
  LowerAccessResult r_;
  std::map<FieldId, std::string> dense_;
  std::set<std::string> taken_;  // field and space names, and the dense SNodes named so far
  int next_number_ = 1;
};

}  // namespace

LowerAccessResult lower_access(Kernel& k, bool lower_atomics) { return AccessLowerer(k, lower_atomics).run(); }

PassInfo LowerAccessPass::info() {
  return declare_pass<LowerAccessPass>(
      {.name = "lower_access",
       .summary = "Turns field pointers into the SNode access chain (get root, lookup, get child)",
       .options = {{.name = "lower_atomics",
                    .type = OptionType::Bool,
                    .default_value = "true",
                    .help = "also lower the destinations of atomics (the reference's lower_atomic)",
                    .choices = {}}},
       .statistics = {"lowered", "skipped"},
       .create = {}});
}

PassResult LowerAccessPass::run(Kernel& k, const PassOptions& options) {
  LowerAccessResult r = lower_access(k, options.get_bool("lower_atomics"));
  return {r.lowered > 0, {{"lowered", r.lowered}, {"skipped", r.skipped}}};
}

}  // namespace pb::passes
