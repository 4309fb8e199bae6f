#include "runtime/core/sparse.h"

#include <fmt/format.h>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/eval.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "runtime/core/json_values.h"

namespace pb::runtime::detail {
namespace {

using nlohmann::json;

std::vector<int64_t> unravel(int64_t cell, const ir::Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = cell % shape[d];
    cell /= shape[d];
  }
  return c;
}

int64_t ravel(const std::vector<int64_t>& c, const ir::Shape& shape) {
  int64_t cell = 0;
  for (size_t d = 0; d < shape.size(); ++d) cell = cell * shape[d] + (d < c.size() ? c[d] : 0);
  return cell;
}

// The number of activity entries of a declared sparse space: one per cell, or for a dynamic
// space one length per parent cell.
ir::Shape activity_shape(const ir::Kernel& k, const ir::IndexSpace& sp) {
  if (sp.kind != ir::SNodeKind::dynamic) return sp.shape.value_or(ir::Shape{});
  const ir::IndexSpace* parent = sp.parent.empty() ? nullptr : k.find_space(sp.parent);
  return parent ? parent->shape.value_or(ir::Shape{}) : ir::Shape{};
}

ir::Value zero() { return ir::Value::from_int(ir::ScalarKind::i64, 0); }

[[noreturn]] void op_error(const std::string& what, const std::string& where, const std::string& remedy) {
  throw UserError(fmt::format("{} {}", what, where), remedy);
}

}  // namespace

void read_activity(const ir::Kernel& k, const json& inputs, State& st) {
  for (const ir::IndexSpace& sp : k.spaces) {
    if (!sp.declared || !sp.shape || sp.kind == ir::SNodeKind::dense) continue;
    // As many cells as a field of the space could have (the same limit as Buffer::zeros).
    int64_t cells = num_elements(*sp.shape);
    if (cells > kMaxStateBytes / static_cast<int64_t>(sizeof(ir::Value)))
      throw UserError(fmt::format("index space '{}' of shape {} has more cells than the interpreter's limit of {} "
                                  "GiB of state allows",
                                  sp.name, ir::shape_to_string(*sp.shape), kMaxStateBytes >> 30),
                      "give it a smaller shape in the header");
    st.activity[sp.name].assign(static_cast<size_t>(num_elements(activity_shape(k, sp))), 0);
  }
  for (const char* key : {"active", "length"}) {
    if (!inputs.contains(key)) continue;
    const json& given = inputs.at(key);
    bool lengths = std::string_view(key) == "length";
    if (!given.is_object())
      throw UserError(fmt::format("inputs: \"{}\" is {}, not an object", key, given.dump()),
                      fmt::format("give \"{}\" as an object keyed by index space", key));
    for (const auto& [name, data] : given.items()) {
      const ir::IndexSpace* sp = k.find_space(name);
      bool fits = sp && sp->declared && sp->shape && sp->kind != ir::SNodeKind::dense &&
                  (sp->kind == ir::SNodeKind::dynamic) == lengths;
      if (!fits)
        throw UserError(fmt::format("inputs: \"{}\" names '{}', which is not a declared {} space", key, name,
                                    lengths ? "dynamic" : "pointer or bitmasked"),
                        lengths ? "give \"length\" for dynamic spaces and \"active\" for pointer and bitmasked ones"
                                : "give \"active\" for pointer and bitmasked spaces and \"length\" for dynamic ones");
      std::string what = fmt::format("inputs: \"{}\" of '{}'", key, name);
      Buffer b = read_buffer(data, ir::ScalarKind::i64, activity_shape(k, *sp), what);
      int64_t limit =
          lengths ? num_elements(sp->shape.value_or(ir::Shape{})) / num_elements(activity_shape(k, *sp)) : 1;
      std::vector<int64_t>& a = st.activity[name];
      for (size_t i = 0; i < b.size(); ++i) {
        int64_t v = b.data[i].as_i64();
        if (v < 0 || v > limit)
          throw UserError(fmt::format("{}: entry {} is {}, outside 0..{}", what, i, v, limit),
                          lengths ? "a length counts the cells under a parent cell, at most the space's capacity"
                                  : "give 1 for an active cell and 0 for an inactive one");
        a[i] = v;
      }
    }
  }
}

void activity_to_json(const ir::Kernel& k, const State& st, json& out) {
  json active = json::object(), length = json::object();
  for (const ir::IndexSpace& sp : k.spaces) {
    auto it = st.activity.find(sp.name);
    if (!sp.declared || it == st.activity.end()) continue;
    (sp.kind == ir::SNodeKind::dynamic ? length : active)[sp.name] = it->second;
  }
  if (!active.empty()) out["active"] = std::move(active);
  if (!length.empty()) out["length"] = std::move(length);
}

int SparseCells::space(const std::string& name) const {
  for (size_t i = 0; i < spaces_.size(); ++i)
    if (spaces_[i].name == name) return static_cast<int>(i);
  return -1;
}

CellData interp_cell_data(const std::vector<Buffer*>& field_bufs) {
  CellData d;
  for (const Buffer* b : field_bufs) d.shapes.push_back(b ? &b->shape : nullptr);
  d.write = [&field_bufs](ir::FieldId f, int64_t element, const ir::Value& v) {
    if (Buffer* b = field_bufs[static_cast<size_t>(f)]) b->data[static_cast<size_t>(element)] = v.cast_to(b->dtype);
  };
  return d;
}

void SparseCells::bind(const ir::Kernel& k, std::map<std::string, std::vector<int64_t>>& activity, CellData data,
                       bool zero_inactive) {
  k_ = &k;
  data_ = std::move(data);
  for (const ir::IndexSpace& sp : k.spaces) {  // one entry per space, so that indices agree
    Space s;
    s.name = sp.name;
    if (!sp.declared || !sp.shape) {
      s.name.clear();  // not a declared space: found by no name
      spaces_.push_back(std::move(s));
      continue;
    }
    s.kind = sp.kind;
    s.full = *sp.shape;
    s.own = s.full;
    if (!sp.parent.empty()) {
      s.parent = space(sp.parent);
      PB_ASSERT(s.parent >= 0, "a parent space is declared before its children (ir::nesting_problem)");
      s.parent_full = ir::padded_parent_shape(spaces_[static_cast<size_t>(s.parent)].full, s.full.size());
      for (size_t d = 0; d < s.full.size(); ++d) s.own[d] = s.full[d] / s.parent_full[d];
    }
    if (s.kind != ir::SNodeKind::dense) {
      any_sparse_ = true;
      s.activity = &activity[s.name];
    }
    spaces_.push_back(std::move(s));
  }
  // Undeclared sparse SNodes, lookups whose kind disagrees with the declaration, and chains that
  // enter a nested space from another than its parent.
  ir::walk(k.root(), [&](const ir::Stmt& s) {
    if (const auto* ch = ir::dyn_cast<ir::GetChStmt>(&s)) {
      int to = space(ch->to);
      if (to >= 0 && spaces_[static_cast<size_t>(to)].parent >= 0 &&
          spaces_[static_cast<size_t>(spaces_[static_cast<size_t>(to)].parent)].name != ch->from)
        throw UserError(
            fmt::format("`{}` enters space '{}' from '{}', but the header nests it in '{}'", ir::print_stmt(s, k),
                        ch->to, ch->from, spaces_[static_cast<size_t>(spaces_[static_cast<size_t>(to)].parent)].name),
            "declare the spaces as the dump's access chain nests them");
      return;
    }
    const auto* l = ir::dyn_cast<ir::SNodeLookupStmt>(&s);
    if (l && (l->snode_type == "bit_struct" || l->snode_type == "quant_array" || l->snode_type == "bit_array"))
      throw UserError(
          fmt::format("`{}` looks up the {} SNode '{}', a quantized layout that the interpreter does not run",
                      ir::print_stmt(s, k), l->snode_type, l->snode),
          "run the kernel without quantized types (their reads and writes need the bit layout)");
    if (auto problem = ir::snode_use_problem(k, s)) throw UserError(problem->message, problem->remedy);
  });
  field_space_.assign(k.fields().size(), -1);
  std::map<int, std::vector<char>> live_maps;  // by space, for the fields in it
  if (!any_sparse_) return;
  for (size_t i = 0; i < k.fields().size(); ++i) {
    const ir::Field& f = k.fields()[i];
    int s = f.space.empty() ? -1 : space(f.space);
    if (s < 0) continue;
    spaces_[static_cast<size_t>(s)].fields.push_back(static_cast<ir::FieldId>(i));
    bool sparse = false;
    for (int l = s; l >= 0; l = spaces_[static_cast<size_t>(l)].parent)
      sparse = sparse || spaces_[static_cast<size_t>(l)].kind != ir::SNodeKind::dense;
    if (!sparse) continue;
    if (f.tensor != 0)
      throw UserError(fmt::format("field '{}' holds tensors and lives in a sparse space, which is not run", f.name),
                      "run the scalarize pass first (`--passes=scalarize`)");
    const ir::Shape* shape = i < data_.shapes.size() ? data_.shapes[i] : nullptr;
    if (shape && *shape != spaces_[static_cast<size_t>(s)].full)
      throw UserError(
          fmt::format("field '{}' has shape {}, but its sparse space '{}' has shape {}", f.name,
                      ir::shape_to_string(*shape), f.space, ir::shape_to_string(spaces_[static_cast<size_t>(s)].full)),
          "give a field in a sparse space the space's full shape");
    field_space_[i] = s;
    // Inactive cells hold no data.
    if (shape && zero_inactive) {
      auto [at, fresh] = live_maps.try_emplace(s);
      if (fresh) at->second = live_map(s);
      const std::vector<char>& live = at->second;
      for (size_t e = 0; e < live.size(); ++e)
        if (!live[e]) data_.write(static_cast<ir::FieldId>(i), static_cast<int64_t>(e), zero());
    }
  }
}

int64_t& SparseCells::activity_at(const Space& sp, int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= sp.activity->size())
    throw ir::EvalError{fmt::format("cell {} is outside SNode '{}' ({} {})", index, sp.name, sp.activity->size(),
                                    sp.kind == ir::SNodeKind::dynamic ? "parent cells" : "cells"),
                        "the access chain reaches this SNode through a cell of another SNode than its parent, or "
                        "past its shape: check the dump's lookups against the header"};
  return (*sp.activity)[static_cast<size_t>(index)];
}

bool SparseCells::level_live(const Space& sp, const std::vector<int64_t>& c, bool activate) {
  if (sp.kind == ir::SNodeKind::dense) return true;
  if (sp.kind != ir::SNodeKind::dynamic) {
    int64_t& a = activity_at(sp, ravel(c, sp.full));
    if (activate) a = 1;
    return a != 0;
  }
  std::vector<int64_t> local(c.size()), up(c.size());
  for (size_t d = 0; d < c.size(); ++d) {
    local[d] = c[d] % sp.own[d];
    up[d] = c[d] / sp.own[d];
  }
  int64_t i = ravel(local, sp.own);
  int64_t& len = activity_at(sp, sp.parent < 0 ? 0 : ravel(up, sp.parent_full));
  if (activate && i >= len) len = i + 1;
  return i < len;
}

bool SparseCells::reach_coords(int s, const std::vector<int64_t>& coords, bool activate) {
  std::vector<int64_t> c = coords;
  bool live = true;
  for (int l = s; l >= 0;) {
    const Space& sp = spaces_[static_cast<size_t>(l)];
    live = level_live(sp, c, activate) && live;  // activates every level, live or not
    if (sp.parent < 0) break;
    for (size_t d = 0; d < c.size(); ++d) c[d] /= sp.own[d];
    c.resize(spaces_[static_cast<size_t>(sp.parent)].full.size());
    l = sp.parent;
  }
  return live;
}

bool SparseCells::reach(ir::FieldId f, int64_t offset, bool activate) {
  int s = field_space_[static_cast<size_t>(f)];
  const Space& sp = spaces_[static_cast<size_t>(s)];
  return reach_coords(s, unravel(offset, sp.full), activate);
}

std::optional<std::vector<int64_t>> SparseCells::visited_cells(const std::string& name) {
  int s = space(name);
  if (s < 0) return std::nullopt;
  bool sparse = false;
  for (int l = s; l >= 0; l = spaces_[static_cast<size_t>(l)].parent)
    sparse = sparse || spaces_[static_cast<size_t>(l)].kind != ir::SNodeKind::dense;
  if (!sparse) return std::nullopt;
  std::vector<char> live = live_map(s);
  std::vector<int64_t> cells;
  for (size_t cell = 0; cell < live.size(); ++cell)
    if (live[cell]) cells.push_back(static_cast<int64_t>(cell));
  return cells;
}

std::vector<char> SparseCells::live_map(int s) const {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  std::vector<char> up;
  if (sp.parent >= 0) up = live_map(sp.parent);  // as deep as the nesting, which the header bounds
  const size_t rank = sp.full.size();
  std::vector<char> live(static_cast<size_t>(num_elements(sp.full)), 1);
  // The cell's coordinates counted row-major, each as c = q * own + r (q on the parent's axis),
  // so that no cell divides.
  std::vector<int64_t> c(rank, 0), q(rank, 0), r(rank, 0);
  for (size_t cell = 0; cell < live.size(); ++cell) {
    int64_t parent = 0, local = 0;  // the parent's cell, and the index under it
    for (size_t d = 0; d < rank; ++d) {
      if (sp.parent >= 0) parent = parent * sp.parent_full[d] + q[d];
      local = local * sp.own[d] + r[d];
    }
    bool ok = up.empty() || up[static_cast<size_t>(parent)];
    if (ok && sp.kind == ir::SNodeKind::dynamic)
      ok = local < activity_at(sp, sp.parent < 0 ? 0 : parent);
    else if (ok && sp.kind != ir::SNodeKind::dense)
      ok = activity_at(sp, static_cast<int64_t>(cell)) != 0;
    live[cell] = ok ? 1 : 0;
    for (size_t d = rank; d-- > 0;) {
      if (++c[d] < sp.full[d]) {
        if (++r[d] == sp.own[d]) r[d] = 0, ++q[d];
        break;
      }
      c[d] = q[d] = r[d] = 0;
    }
  }
  return live;
}

int64_t SparseCells::child_cell(int s, int64_t parent, int64_t index) const {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  if (sp.parent < 0) return parent * num_elements(sp.own) + index;
  std::vector<int64_t> c = unravel(parent, sp.parent_full), local = unravel(index, sp.own);
  for (size_t d = 0; d < c.size(); ++d) c[d] = c[d] * sp.own[d] + local[d];
  return ravel(c, sp.full);
}

bool SparseCells::parent_live(int s, int64_t parent, bool activate) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  if (sp.parent < 0) return true;
  return reach_coords(sp.parent, unravel(parent, spaces_[static_cast<size_t>(sp.parent)].full), activate);
}

bool SparseCells::reach_cell(int s, int64_t cell, bool activate) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  return level_live(sp, unravel(cell, sp.full), activate);
}

int64_t SparseCells::cell_at(int s, const std::vector<int64_t>& coords) const {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  if (sp.kind != ir::SNodeKind::dynamic) return ravel(coords, sp.full);
  return sp.parent < 0 ? 0 : ravel(coords, spaces_[static_cast<size_t>(sp.parent)].full);
}

bool SparseCells::is_active(int s, int64_t cell) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  if (sp.kind == ir::SNodeKind::dynamic) return length(s, cell) > 0;
  return reach_coords(s, unravel(cell, sp.full), false);
}

void SparseCells::activate(int s, int64_t cell) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  if (sp.kind != ir::SNodeKind::dynamic) reach_coords(s, unravel(cell, sp.full), true);
}

void SparseCells::deactivate(int s, int64_t cell) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  if (sp.kind == ir::SNodeKind::dense) return;
  activity_at(sp, cell) = 0;
  zero_under(s, cell);
}

int64_t SparseCells::length(int s, int64_t parent) const {
  return activity_at(spaces_[static_cast<size_t>(s)], parent);
}

int64_t SparseCells::append(int s, int64_t parent, const ir::Value& value, const std::string& where) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  std::vector<ir::FieldId> primals;
  for (ir::FieldId f : sp.fields)
    if (!k_->field(f).primal) primals.push_back(f);
  if (primals.size() != 1)
    throw UserError(fmt::format("append to dynamic SNode '{}' {}: it holds {} fields, and append needs exactly one",
                                sp.name, where, primals.size()),
                    "place one field in the dynamic space (the reference requires it too)");
  int64_t& len = activity_at(sp, parent);
  int64_t capacity = num_elements(sp.own);
  if (len >= capacity)
    throw UserError(fmt::format("append to dynamic SNode '{}' {}: parent cell {} is full ({} cells)", sp.name, where,
                                parent, capacity),
                    "give the dynamic space more cells per parent cell, or append less");
  int64_t i = len++;
  std::vector<int64_t> c = sp.parent < 0 ? std::vector<int64_t>(sp.full.size(), 0) : unravel(parent, sp.parent_full);
  std::vector<int64_t> local = unravel(i, sp.own);
  for (size_t d = 0; d < c.size(); ++d) c[d] = c[d] * sp.own[d] + local[d];
  data_.write(primals.front(), ravel(c, sp.full), value);
  return i;
}

void SparseCells::zero_under(int s, int64_t cell) {
  const Space& sp = spaces_[static_cast<size_t>(s)];
  // The block under the cell, in the anchor's coordinates: the space's own cell, or for a dynamic
  // space its parent's cell.
  bool dynamic = sp.kind == ir::SNodeKind::dynamic;
  ir::Shape anchor = dynamic ? (sp.parent < 0 ? ir::Shape(sp.full.size(), 1) : sp.parent_full) : sp.full;
  std::vector<int64_t> at = unravel(dynamic && sp.parent < 0 ? 0 : cell, anchor);
  for (size_t t = 0; t < spaces_.size(); ++t) {
    bool below = false;
    for (int l = static_cast<int>(t); l >= 0 && !below; l = spaces_[static_cast<size_t>(l)].parent) below = l == s;
    if (!below) continue;
    const Space& below_sp = spaces_[t];
    const ir::Shape& full = below_sp.full;
    ir::Shape a = ir::padded_parent_shape(anchor, full.size()), div(full.size());
    for (size_t d = 0; d < full.size(); ++d) div[d] = full[d] / a[d];
    // A sparse space below the cell starts over as well: its cells there are inactive.
    bool clear_activity = static_cast<int>(t) != s && below_sp.activity;
    for (int64_t e = 0, n = num_elements(div); e < n; ++e) {
      std::vector<int64_t> c = unravel(e, div);
      for (size_t d = 0; d < c.size(); ++d) c[d] += (d < at.size() ? at[d] : 0) * div[d];
      int64_t element = ravel(c, full);
      for (ir::FieldId f : below_sp.fields) data_.write(f, element, zero());
      if (!clear_activity) continue;
      if (below_sp.kind != ir::SNodeKind::dynamic) {
        activity_at(below_sp, element) = 0;
      } else {
        for (size_t d = 0; d < c.size(); ++d) c[d] /= below_sp.own[d];
        activity_at(below_sp, below_sp.parent < 0 ? 0 : ravel(c, below_sp.parent_full)) = 0;
      }
    }
  }
}

namespace {

std::optional<ir::Value> run_snode_op(SparseCells& cells, const ir::SNodeOpStmt& s, int space, ir::ScalarKind kind,
                                      const std::vector<ir::Value>& in, const std::string& where) {
  auto fail = [&](const std::string& what, const std::string& remedy) { op_error(what, where, remedy); };
  auto done = [&]() -> std::optional<ir::Value> {
    if (!s.type.is_value()) return std::nullopt;
    return ir::Value::zero(kind);
  };
  bool dynamic = space >= 0 && cells.kind(space) == ir::SNodeKind::dynamic;
  if (space < 0 || cells.kind(space) == ir::SNodeKind::dense) {
    // Every cell of a dense SNode is active and stays so (sparse SNodes are declared: SparseCells::bind).
    if (s.op == "is_active") return ir::Value::from_int(kind, 1);
    if (s.op == "activate" || s.op == "deactivate") return done();
    fail(fmt::format("SNode op '{}' has no meaning on the dense SNode '{}'", s.op, s.snode),
         "declare the space dynamic (append, length) or run the kernel on the reference runtime");
    return std::nullopt;
  }
  if (s.ptr() && ir::isa<ir::GlobalPtrStmt>(s.ptr()))
    fail("an SNode op on a field's element has no meaning on sparse SNodes",
         "give the op a global ptr to the SNode itself (`<*gen> ... global ptr [S1pointer]`) or the parent's cell");
  // Before lower_access the pointer gives the cell itself (a dynamic space: its parent cell),
  // numbered over the full shape; the cells above it are activated for append only, as
  // lower_access's chain would.
  bool by_coords = s.ptr() && ir::isa<ir::SNodePtrStmt>(s.ptr());
  int64_t parent = s.ptr() ? in[0].as_i64() : 0;
  if (by_coords && dynamic && !cells.parent_live(space, parent, s.op == "append")) parent = -1;
  if (!dynamic) {
    int64_t cell = parent;
    if (s.val() && !by_coords) {
      int64_t i = in.back().as_i64(), n = num_elements(cells.own_shape(space));
      if (i < 0 || i >= n)
        fail(fmt::format("cell {} is out of bounds for SNode '{}' of {} cell(s) per parent cell", i, s.snode, n),
             "check the linearized index against the space's shape");
      cell = parent < 0 ? -1 : cells.child_cell(space, parent, i);
    }
    if (s.op == "is_active") return ir::Value::from_int(kind, cell >= 0 && cells.is_active(space, cell) ? 1 : 0);
    if (s.op == "activate" || s.op == "deactivate") {
      if (cell >= 0) (s.op == "activate" ? cells.activate(space, cell) : cells.deactivate(space, cell));
      return done();
    }
    fail(fmt::format("SNode op '{}' has no meaning on the {} SNode '{}'", s.op, ir::snode_kind_name(cells.kind(space)),
                     s.snode),
         "use is_active, activate or deactivate on pointer and bitmasked SNodes");
    return std::nullopt;
  }
  if (parent < 0) {  // under an inactive cell: nothing there
    if (s.op == "append")
      fail(fmt::format("append to dynamic SNode '{}' under an inactive cell", s.snode),
           "activate the cells above it first (a write through them does)");
    return s.type.is_value() ? std::optional(ir::Value::zero(kind)) : std::nullopt;
  }
  if (s.op == "length") return ir::Value::from_int(kind, cells.length(space, parent));
  if (s.op == "is_active") return ir::Value::from_int(kind, cells.length(space, parent) > 0 ? 1 : 0);
  if (s.op == "deactivate") {
    cells.deactivate(space, parent);
    return done();
  }
  if (s.op == "append") {
    if (!s.val()) fail("append without a value", "give the value to append (`, val = $v`)");
    return ir::Value::from_int(kind, cells.append(space, parent, in.back(), where));
  }
  fail(fmt::format("SNode op '{}' has no meaning on the dynamic SNode '{}'", s.op, s.snode),
       "use append, length or deactivate on dynamic SNodes");
  return std::nullopt;
}

}  // namespace

std::optional<ir::Value> snode_op(SparseCells& cells, const ir::SNodeOpStmt& s, int space, ir::ScalarKind kind,
                                  const std::vector<ir::Value>& in, const ir::Kernel& k, const std::string& label) {
  try {
    return run_snode_op(cells, s, space, kind, in, fmt::format("at `{}` in {}", ir::print_stmt(s, k), label));
  } catch (const ir::EvalError& e) {
    op_error(e.message, fmt::format("at `{}` in {}", ir::print_stmt(s, k), label), e.remedy);
  }
}

}  // namespace pb::runtime::detail
