#include "passes/scalarize.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/assert.h"
#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/tensor_type.h"
#include "ir/visitor.h"

namespace pb::passes {

using namespace ir;

namespace {

bool touches_tensor(const Stmt& s) {
  if (s.type.is_tensor()) return true;
  for (const Stmt* o : s.operands())
    if (o && o->type.is_tensor()) return true;
  return false;
}

// The per-dimension indices of row-major element `e` of a tensor of shape `dims`.
std::vector<int> multi_index(const std::vector<int>& dims, int64_t e) {
  std::vector<int> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = static_cast<int>(e % dims[d]);
    e /= dims[d];
  }
  return idx;
}

class Scalarizer {
 public:
  explicit Scalarizer(Kernel& k) : k_(k), b_(k) {}

  ScalarizeResult run() {
    std::vector<Stmt*> order;
    walk(k_.root(), [&](Stmt& s) {
      if (touches_tensor(s)) order.push_back(&s);
    });
    for (Stmt* s : order) check(*s);
    plan_element_args(order);
    std::vector<CellLoop> cell_loops = struct_fors_over_cells();
    for (size_t i = 0; i < k_.fields().size(); ++i) {
      Field& f = k_.field(static_cast<FieldId>(i));
      if (f.tensor == 0) continue;
      const std::vector<int>& dims = tensor_shape(f.tensor);
      if (f.shape) f.shape->insert(f.shape->end(), dims.begin(), dims.end());
      f.tensor = 0;
      ++r_.fields;
    }
    for (const CellLoop& c : cell_loops) keep_walking_cells(c);
    for (ArgDecl& a : k_.args) {
      if (a.tensor == 0 || a.by_value_tensor()) continue;
      a.ndim += static_cast<int>(tensor_shape(a.tensor).size());
      a.tensor = 0;
      ++r_.fields;
    }
    declare_element_args();
    for (Stmt* s : order) {
      b_.set_insertion_point_before(*s);
      visit(*s, [&](auto& x) { rewrite(x); });
    }
    for (auto it = doomed_.rbegin(); it != doomed_.rend(); ++it) (*it)->parent()->erase(*it);
    r_.tensor_statements = static_cast<int64_t>(doomed_.size());
    return r_;
  }

 private:
  [[noreturn]] void refuse(const Stmt& s, const std::string& why, const std::string& remedy) const {
    throw UserError(fmt::format("scalarize: `{}`: {}", print_stmt(s, k_), why), remedy);
  }

  // A tensor argument passed by value: declared so, or (undeclared) used other than as an ndarray's base.
  bool by_value(const ArgLoadStmt& s) const {
    if (s.type.pointer) return false;
    if (const ArgDecl* a = k_.find_arg(s.arg_index)) return a->by_value_tensor();
    for (const Stmt::Use& u : s.uses())
      if (!isa<ExternalPtrStmt>(u.user())) return true;
    return false;
  }

  // Each tensor argument passed by value becomes one scalar argument per element, at fresh
  // indices after every index the kernel names: ArgDecl::element_of links them to the caller's
  // tensor. Planned before anything changes, so that too many elements leave the kernel as it was.
  struct ElementArgs {
    DataType type;           // the tensor's type
    std::vector<int> index;  // per element
  };
  void plan_element_args(const std::vector<Stmt*>& order) {
    int next = 0;
    for (const ArgDecl& a : k_.args) next = std::max({next, a.index + 1, a.element_of + 1});
    walk(k_.root(), [&](Stmt& s) {
      if (auto* a = dyn_cast<ArgLoadStmt>(&s)) next = std::max(next, a->arg_index + 1);
    });
    for (Stmt* s : order) {
      auto* a = dyn_cast<ArgLoadStmt>(s);
      if (!a || !by_value(*a)) continue;
      by_value_loads_.insert(a);
      if (element_args_.count(a->arg_index)) continue;
      int64_t n = tensor_elements(a->type);
      if (next + n - 1 > kMaxArgIndex)
        refuse(
            *a,
            fmt::format("its {} elements would need argument indices up to {}, past {}", n, next + n - 1, kMaxArgIndex),
            "pass the tensor as an ndarray (`arg N : ndarray<[Tensor (3) f32], 0>`)");
      ElementArgs& e = element_args_[a->arg_index];
      e.type = a->type;
      for (int64_t i = 0; i < n; ++i) e.index.push_back(next++);
    }
  }
  void declare_element_args() {
    for (const auto& [tensor_arg, e] : element_args_) {
      std::erase_if(k_.args, [&](const ArgDecl& a) { return a.index == tensor_arg; });
      for (size_t i = 0; i < e.index.size(); ++i) {
        ArgDecl d;
        d.index = e.index[i];
        d.dtype = e.type.scalar;
        d.element_of = tensor_arg;
        d.element = static_cast<int>(i);
        k_.args.push_back(d);
      }
      ++r_.fields;
    }
  }

  // A struct for over a tensor field walks its cells (the interpreter strips the cell's dimensions
  // from the field's shape); found before the fields change.
  struct CellLoop {
    StructForStmt* loop;
    Shape cells;  // the field's shape, without the tensor's dimensions
  };
  std::vector<CellLoop> struct_fors_over_cells() const {
    std::vector<CellLoop> out;
    walk(k_.root(), [&](Stmt& s) {
      auto* loop = dyn_cast<StructForStmt>(&s);
      if (!loop) return;
      if (const IndexSpace* sp = k_.find_space(loop->space); sp && sp->shape) return;
      auto id = k_.find_field(loop->space);
      if (!id || k_.field(*id).tensor == 0) return;
      const Field& f = k_.field(*id);
      if (!f.shape)
        refuse(s,
               fmt::format("a struct for over the cells of tensor field '{}', whose shape is not declared, is not "
                           "scalarized (its cells' elements become dimensions of the field)",
                           f.name),
               fmt::format("declare the field in the header (`field {} : {}[N]`)", f.name, to_string(f.cell_type())));
      out.push_back({loop, *f.shape});
    });
    return out;
  }
  // Once the cells' elements are dimensions of the field, the loop walks a new declared space of
  // the cells' shape, `dense v.cells : [N]`.
  void keep_walking_cells(const CellLoop& c) {
    auto [made, fresh] = cell_spaces_.try_emplace(c.loop->space, c.loop->space + ".cells");
    if (fresh) {
      while (k_.find_space(made->second) || k_.find_field(made->second)) made->second += "_";
      IndexSpace cells;
      cells.name = made->second;
      cells.shape = c.cells;
      cells.declared = true;
      k_.spaces.push_back(std::move(cells));
    }
    c.loop->space = made->second;
  }

  // Everything scalarize cannot rewrite, found before anything changes.
  void check(const Stmt& s) const {
    switch (s.kind()) {
      case StmtKind::Alloca:
      case StmtKind::LocalLoad:
      case StmtKind::LocalStore:
      case StmtKind::GlobalLoad:
      case StmtKind::GlobalStore:
      case StmtKind::AtomicOp:
      case StmtKind::BinaryOp:
      case StmtKind::TernaryOp:
      case StmtKind::MatrixInit:
      case StmtKind::GetElement:
      case StmtKind::GlobalPtr:
      case StmtKind::ExternalPtr:
      case StmtKind::GlobalTemporary:
      case StmtKind::MatrixOfGlobalPtr:
      case StmtKind::MatrixOfMatrixPtr:
        return;
      case StmtKind::UnaryOp:
        if (static_cast<const UnaryOpStmt&>(s).op == UnaryOp::cast_bits)
          refuse(s, "a bit cast of a tensor is not scalarized", "cast element by element (get_element, then cast)");
        return;
      case StmtKind::ArgLoad: {
        bool value = by_value(static_cast<const ArgLoadStmt&>(s));
        for (const Stmt::Use& u : s.uses())
          if (isa<ExternalPtrStmt>(u.user()) == value)
            refuse(s,
                   value ? "a tensor argument passed by value addresses no ndarray"
                         : "the base of an ndarray of tensors is used as a value",
                   value ? "declare the argument as an ndarray (`arg N : ndarray<[Tensor (3) f32], 1>`)"
                         : "declare a tensor passed by value in the header (`arg N : [Tensor (3) f32]`)");
        return;
      }
      case StmtKind::MatrixPtr: {
        const auto& m = static_cast<const MatrixPtrStmt&>(s);
        const Stmt* origin = m.origin();
        if (!isa<AllocaStmt>(origin) && !isa<GlobalPtrStmt>(origin) && !isa<ExternalPtrStmt>(origin) &&
            !isa<GlobalTemporaryStmt>(origin) && !isa<MatrixOfGlobalPtrStmt>(origin) &&
            !isa<MatrixOfMatrixPtrStmt>(origin))
          refuse(s, "a shift ptr into this origin is not scalarized",
                 "scalarize the kernel before lowering the access chain (lower_access)");
        const auto* c = dyn_cast<ConstStmt>(m.offset());
        if (c) {
          int64_t e = c->value.as_i64();
          if (e < 0 || e >= tensor_elements(origin->type.pointee()))
            refuse(s, fmt::format("element {} is outside {}", e, to_string(origin->type.pointee())),
                   "check the shift ptr offset against the tensor's shape");
        } else if (!isa<GlobalPtrStmt>(origin) && !isa<ExternalPtrStmt>(origin)) {
          refuse(s, "a variable offset into a local tensor (or a tensor of pointers) is not scalarized",
                 "index the tensor with constants (unroll the loop over its elements: `qd.static`)");
        }
        return;
      }
      default:
        refuse(s, fmt::format("{} of a tensor is not scalarized", kind_name(s.kind())),
               "take the elements first (get_element) and use them one by one");
    }
  }

  Stmt* add(std::unique_ptr<Stmt> s, DataType hint = {}) {
    if (hint.known()) s->type = hint;
    ++r_.scalar_statements;
    return b_.insert(std::move(s));
  }
  Stmt* index_const(int v) { return add(k_.make<ConstStmt>(Value::make_i32(v))); }
  std::vector<Stmt*> consts(const std::vector<int>& idx) {
    std::vector<Stmt*> out;
    out.reserve(idx.size());
    for (int v : idx) out.push_back(index_const(v));
    return out;
  }
  int64_t lanes(DataType t) const { return tensor_elements(t.pointee()); }
  void doom(Stmt& s) { doomed_.push_back(&s); }
  // The element values of tensor operand `x`, or `x` for each element when it is a scalar.
  Stmt* elem(Stmt* x, int64_t e) const { return x->type.is_tensor() ? values_.at(x)[static_cast<size_t>(e)] : x; }

  // Addresses: one scalar pointer per element.
  void rewrite(GlobalPtrStmt& s) {
    const std::vector<int>& dims = tensor_shape(s.type.tensor);
    std::vector<Stmt*>& out = pointers_[&s];
    for (int64_t e = 0; e < lanes(s.type); ++e) {
      std::vector<Stmt*> idx(s.indices().begin(), s.indices().end());
      for (Stmt* c : consts(multi_index(dims, e))) idx.push_back(c);
      out.push_back(add(k_.make<GlobalPtrStmt>(s.field, idx, s.activate)));
    }
    doom(s);
  }
  std::unique_ptr<ExternalPtrStmt> external(const ExternalPtrStmt& s, std::vector<Stmt*> extra) const {
    std::vector<Stmt*> idx(s.indices().begin(), s.indices().end());
    idx.insert(idx.end(), extra.begin(), extra.end());
    auto p = k_.make<ExternalPtrStmt>(s.base(), idx);
    p->layout = s.layout;
    p->is_grad = s.is_grad;
    p->is_dual = s.is_dual;
    return p;
  }
  void rewrite(ExternalPtrStmt& s) {
    const std::vector<int>& dims = tensor_shape(s.type.tensor);
    std::vector<Stmt*>& out = pointers_[&s];
    for (int64_t e = 0; e < lanes(s.type); ++e) out.push_back(add(external(s, consts(multi_index(dims, e)))));
    doom(s);
  }
  void rewrite(ArgLoadStmt& s) {
    if (!by_value_loads_.count(&s)) {
      s.type = DataType::pointer_to(s.type.scalar);  // an ndarray's base
      return;
    }
    for (int index : element_args_.at(s.arg_index).index)
      values_[&s].push_back(add(k_.make<ArgLoadStmt>(index, s.type.element())));
    doom(s);
  }
  void rewrite(GlobalTemporaryStmt& s) {
    int bytes = bit_width(s.type.scalar) / 8;
    std::vector<Stmt*>& out = pointers_[&s];
    for (int64_t e = 0; e < lanes(s.type); ++e)
      out.push_back(add(k_.make<GlobalTemporaryStmt>(DataType::pointer_to(s.type.scalar), s.offset + e * bytes)));
    doom(s);
  }
  void rewrite(AllocaStmt& s) {
    std::vector<Stmt*>& out = pointers_[&s];
    for (int64_t e = 0; e < lanes(s.type); ++e) out.push_back(add(k_.make<AllocaStmt>(s.type.scalar)));
    doom(s);
  }
  void rewrite(MatrixOfGlobalPtrStmt& s) {
    std::vector<Stmt*> idx(s.operands().begin(), s.operands().end());
    for (FieldId f : s.fields) pointers_[&s].push_back(add(k_.make<GlobalPtrStmt>(f, idx, s.activate)));
    doom(s);
  }
  void rewrite(MatrixOfMatrixPtrStmt& s) {
    pointers_[&s].assign(s.operands().begin(), s.operands().end());
    doom(s);
  }
  void rewrite(MatrixPtrStmt& s) {
    Stmt* origin = s.origin();
    if (const auto* c = dyn_cast<ConstStmt>(s.offset())) {
      s.replace_all_uses_with(pointers_.at(origin).at(static_cast<size_t>(c->value.as_i64())));
      doom(s);
      return;
    }
    // A variable element of a field's or ndarray's cell: its indices from the offset.
    const std::vector<int>& dims = tensor_shape(origin->type.tensor);
    std::vector<Stmt*> extra(dims.size());
    int64_t stride = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      Stmt* q = stride == 1
                    ? s.offset()
                    : add(k_.make<BinaryOpStmt>(BinaryOp::div, s.offset(), index_const(static_cast<int>(stride))),
                          s.offset()->type);
      extra[d] = d == 0 ? q : add(k_.make<BinaryOpStmt>(BinaryOp::mod, q, index_const(dims[d])), s.offset()->type);
      stride *= dims[d];
    }
    if (s.offset()->type.scalar != ScalarKind::i32)
      for (Stmt*& x : extra) x = add(make_cast(x, ScalarKind::i32));
    Stmt* p = nullptr;
    if (const auto* g = dyn_cast<GlobalPtrStmt>(origin)) {
      std::vector<Stmt*> idx(g->indices().begin(), g->indices().end());
      idx.insert(idx.end(), extra.begin(), extra.end());
      p = add(k_.make<GlobalPtrStmt>(g->field, idx, g->activate));
    } else {
      p = add(external(*dyn_cast<ExternalPtrStmt>(origin), extra));
    }
    s.replace_all_uses_with(p);
    doom(s);
  }
  std::unique_ptr<Stmt> make_cast(Stmt* x, ScalarKind to) const {
    auto c = k_.make<UnaryOpStmt>(UnaryOp::cast_value, x);
    c->type = DataType::of(to);
    return c;
  }

  // Values: one scalar statement per element.
  void rewrite(MatrixInitStmt& s) {
    std::vector<Stmt*>& out = values_[&s];
    for (Stmt* v : s.operands()) out.push_back(v->type.scalar == s.type.scalar ? v : add(make_cast(v, s.type.scalar)));
    doom(s);
  }
  void rewrite(GetElementStmt& s) {
    std::optional<int64_t> e = element_index(s.src()->type, s.index);
    PB_ASSERT(e.has_value(), "get_element's index lies outside its tensor (the verifier checks it)");
    s.replace_all_uses_with(values_.at(s.src()).at(static_cast<size_t>(*e)));
    doom(s);
  }
  template <class Load>
  void load(Load& s) {
    const std::vector<Stmt*>& from = pointers_.at(s.src());
    for (Stmt* p : from) values_[&s].push_back(add(k_.make<Load>(p)));
    doom(s);
  }
  void rewrite(LocalLoadStmt& s) { load(s); }
  void rewrite(GlobalLoadStmt& s) { load(s); }
  template <class Store>
  void store(Store& s) {
    const std::vector<Stmt*>& to = pointers_.at(s.dest());
    for (size_t e = 0; e < to.size(); ++e) add(k_.make<Store>(to[e], elem(s.val(), static_cast<int64_t>(e))));
    doom(s);
  }
  void rewrite(LocalStoreStmt& s) { store(s); }
  void rewrite(GlobalStoreStmt& s) { store(s); }
  void rewrite(AtomicOpStmt& s) {
    const std::vector<Stmt*>& to = pointers_.at(s.dest());
    for (size_t e = 0; e < to.size(); ++e)
      values_[&s].push_back(add(k_.make<AtomicOpStmt>(s.op, to[e], elem(s.val(), static_cast<int64_t>(e)))));
    doom(s);
  }
  void rewrite(UnaryOpStmt& s) {
    for (int64_t e = 0; e < lanes(s.type); ++e)
      values_[&s].push_back(add(k_.make<UnaryOpStmt>(s.op, elem(s.x(), e)), s.type.element()));
    doom(s);
  }
  void rewrite(BinaryOpStmt& s) {
    for (int64_t e = 0; e < lanes(s.type); ++e)
      values_[&s].push_back(add(k_.make<BinaryOpStmt>(s.op, elem(s.lhs(), e), elem(s.rhs(), e)), s.type.element()));
    doom(s);
  }
  void rewrite(TernaryOpStmt& s) {
    for (int64_t e = 0; e < lanes(s.type); ++e)
      values_[&s].push_back(add(k_.make<TernaryOpStmt>(elem(s.cond(), e), elem(s.a(), e), elem(s.b(), e))));
    doom(s);
  }
  template <class T>
  void rewrite(T& s) {  // check() let through nothing else
    refuse(s, "unexpected tensor statement", "report this: it is a passbench bug");
  }

  Kernel& k_;
  Builder b_;
  ScalarizeResult r_;
  std::unordered_map<const Stmt*, std::vector<Stmt*>> values_;    // tensor value -> its elements
  std::unordered_map<const Stmt*, std::vector<Stmt*>> pointers_;  // pointer to a tensor -> per element
  std::vector<Stmt*> doomed_;                                     // in pre-order
  std::unordered_map<std::string, std::string> cell_spaces_;      // tensor field -> the space of its cells
  std::map<int, ElementArgs> element_args_;                       // tensor argument passed by value -> elements
  std::unordered_set<const Stmt*> by_value_loads_;                // its argloads, found before the kernel changes
};

}  // namespace

ScalarizeResult scalarize(Kernel& k) { return Scalarizer(k).run(); }

PassInfo ScalarizePass::info() {
  return declare_pass<ScalarizePass>({.name = "scalarize",
                                      .summary = "Turns tensor values, pointers, fields and ndarrays into scalars",
                                      .options = {},
                                      .statistics = {"tensor_statements", "scalar_statements", "fields"},
                                      .create = {},
                                      .takes_tensors = true});
}

PassResult ScalarizePass::run(Kernel& k, const PassOptions&) {
  ScalarizeResult r = scalarize(k);
  return {
      r.tensor_statements + r.fields > 0,
      {{"tensor_statements", r.tensor_statements}, {"scalar_statements", r.scalar_statements}, {"fields", r.fields}}};
}

}  // namespace pb::passes
