#include "runtime/core/state.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/tensor_type.h"
#include "ir/visitor.h"
#include "runtime/core/json_values.h"
#include "runtime/core/sparse.h"

namespace pb::runtime {

using nlohmann::json;

Buffer Buffer::zeros(ir::ScalarKind dtype, ir::Shape shape, const std::string& what) {
  int64_t count = 1, bytes = 0;
  bool overflow = false;
  for (int64_t e : shape) overflow = overflow || e < 0 || __builtin_mul_overflow(count, e, &count);
  overflow = overflow || __builtin_mul_overflow(count, static_cast<int64_t>(sizeof(ir::Value)), &bytes);
  if (overflow || bytes > kMaxStateBytes)
    throw UserError(fmt::format("{} of shape {} needs {} bytes, more than the interpreter's limit of {} GiB", what,
                                ir::shape_to_string(shape),
                                overflow ? std::string("more than 2^63") : std::to_string(bytes), kMaxStateBytes >> 30),
                    "give it a smaller shape (in the header or the inputs)");
  Buffer b;
  b.dtype = dtype;
  b.data.assign(static_cast<size_t>(count), ir::Value::zero(dtype));
  b.shape = std::move(shape);
  return b;
}

int64_t num_elements(const ir::Shape& shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    if (__builtin_mul_overflow(n, e, &n)) return INT64_MAX;  // zeros() refuses such a shape
  return n;
}

ir::Shape cell_dims(uint32_t tensor) {
  if (tensor == 0) return {};
  const std::vector<int>& dims = ir::tensor_shape(tensor);
  return ir::Shape(dims.begin(), dims.end());
}

ir::Shape space_shape(const ir::Kernel& k, const State& s, const std::string& space) {
  if (const ir::IndexSpace* sp = k.find_space(space); sp && sp->shape) return *sp->shape;
  auto field_shape = [&](const ir::Field& f) -> std::optional<ir::Shape> {
    if (auto it = s.fields.find(f.name); it != s.fields.end()) {
      ir::Shape shape = it->second.shape;  // less the dimensions of a tensor cell
      shape.resize(shape.size() - std::min(shape.size(), cell_dims(f.tensor).size()));
      return shape;
    }
    return f.shape;
  };
  if (auto id = k.find_field(space))
    if (auto shape = field_shape(k.field(*id))) return *shape;
  for (const ir::Field& f : k.fields())
    if (f.space == space)
      if (auto shape = field_shape(f)) return *shape;
  if (auto it = s.spaces.find(space); it != s.spaces.end()) return it->second;
  throw UserError(fmt::format("the shape of index space '{}' (walked by a struct for) is unknown", space),
                  fmt::format("declare it in the header (`dense {} : [N]`) or give it in the inputs: "
                              "\"spaces\": {{\"{}\": [N]}}",
                              space, space));
}

namespace {

// `shape` less trailing dimensions equal to `cell` (a tensor's), if it ends with them and is longer.
ir::Shape strip_cell(ir::Shape shape, const ir::Shape& cell) {
  if (cell.empty() || shape.size() <= cell.size() || !std::equal(cell.begin(), cell.end(), shape.end() - cell.size()))
    return shape;
  shape.resize(shape.size() - cell.size());
  return shape;
}
ir::Shape with_cell(ir::Shape shape, const ir::Shape& cell) {
  shape.insert(shape.end(), cell.begin(), cell.end());
  return shape;
}

// What the kernel's statements tell about fields and arguments.
struct Uses {
  std::map<ir::FieldId, size_t> field_ndim;  // fields reached by a global ptr -> index count
  std::set<ir::FieldId> zero_d_places;       // fields reached by a 0-d access chain
  std::set<std::string> struct_for_spaces;
  std::map<int, ir::DataType> argload_types;  // undeclared arguments: the argload's type
  std::map<int, size_t> ndarray_ndim;         // arguments indexed by external_ptr -> index count
  std::set<int> tensor_values;                // undeclared tensor arguments used as values, not as ndarray bases
};

// Whether the access chain into a place reaches it through 0-d lookups only (`linearized(ind {},
// stride {})` at every level): the field is 0-d, as a global ptr with no index says before
// lower_access.
bool zero_d_chain(const ir::GetChStmt& place) {
  for (const ir::Stmt* cell = place.input();;) {
    if (ir::isa<ir::GetRootStmt>(cell)) return true;
    const auto* lookup = ir::dyn_cast<ir::SNodeLookupStmt>(cell);
    const auto* index = lookup ? ir::dyn_cast<ir::LinearizeStmt>(lookup->index()) : nullptr;
    if (!index || !index->strides.empty()) return false;
    const auto* up = ir::dyn_cast<ir::GetChStmt>(lookup->parent_ptr());
    if (!up) return ir::isa<ir::GetRootStmt>(lookup->parent_ptr());
    cell = up->input();
  }
}

Uses collect_uses(const ir::Kernel& k) {
  Uses u;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (auto* g = ir::dyn_cast<ir::GetChStmt>(&s); g && !g->type.gen && zero_d_chain(*g))
      if (auto f = k.find_field(g->to)) u.zero_d_places.insert(*f);
    if (auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(&s)) u.field_ndim[p->field] = p->indices().size();
    if (auto* f = ir::dyn_cast<ir::StructForStmt>(&s)) u.struct_for_spaces.insert(f->space);
    if (auto* a = ir::dyn_cast<ir::ArgLoadStmt>(&s)) {
      u.argload_types.emplace(a->arg_index, a->type);
      if (a->type.is_tensor() && !a->type.pointer)
        for (const ir::Stmt::Use& use : a->uses())
          if (!ir::isa<ir::ExternalPtrStmt>(use.user())) u.tensor_values.insert(a->arg_index);
    }
    if (auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(&s))
      if (auto* a = ir::dyn_cast<ir::ArgLoadStmt>(e->base())) u.ndarray_ndim[a->arg_index] = e->indices().size();
  });
  return u;
}

void check_keys(const json& obj, std::initializer_list<const char*> allowed, const std::string& what) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (ok) continue;
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw UserError(fmt::format("{}: unknown key '{}'", what, key), fmt::format("the keys allowed here are: {}", list));
  }
}

const json& object_or_empty(const json& j, const char* key, const std::string& what) {
  static const json empty = json::object();
  if (!j.contains(key)) return empty;
  const json& v = j.at(key);
  if (!v.is_object())
    throw UserError(fmt::format("{}: \"{}\" must be an object", what, key),
                    "see runtime/core/state.h for the inputs format");
  return v;
}

std::string field_names(const ir::Kernel& k) {
  std::string out;
  for (const ir::Field& f : k.fields()) out += (out.empty() ? "" : ", ") + f.name;
  return out.empty() ? "(none)" : out;
}

void read_fields(const ir::Kernel& k, const json& given, const Uses& uses, State& st) {
  // Shapes: header, else the inputs' "shape", else the nesting of the inputs' "data".
  std::map<ir::FieldId, const json*> entry;
  for (const auto& [name, obj] : given.items()) {
    auto id = k.find_field(name);
    if (!id)
      throw UserError(fmt::format("inputs give field '{}', which the kernel does not have", name),
                      fmt::format("the kernel's fields are: {}", field_names(k)));
    std::string what = fmt::format("field '{}'", name);
    if (!obj.is_object())
      throw UserError(fmt::format("{}: the entry is {}, not an object", what, obj.dump()),
                      "write a field as {\"shape\": [...], \"data\": [...], \"grad\": [...]} (every key optional)");
    if (k.field(*id).primal) {
      check_keys(obj, {"shape", "data"}, what);
    } else {
      check_keys(obj, {"shape", "data", "grad", "dual"}, what);
    }
    entry[*id] = &obj;
  }
  std::map<ir::FieldId, ir::Shape> shapes;
  auto shape_of = [&](ir::FieldId id) -> std::optional<ir::Shape> {
    const ir::Field& f = k.field(id);
    std::string what = fmt::format("field '{}'", f.name);
    std::optional<ir::Shape> shape = f.shape;
    if (f.primal)
      if (auto it = shapes.find(*f.primal); it != shapes.end()) shape = it->second;
    auto e = entry.find(id);
    if (e != entry.end() && e->second->contains("shape")) {
      ir::Shape given_shape = strip_cell(detail::read_shape(e->second->at("shape"), what), cell_dims(f.tensor));
      if (shape && *shape != given_shape)
        throw UserError(fmt::format("{}: the inputs give shape {}, but the kernel declares {}", what,
                                    ir::shape_to_string(given_shape), ir::shape_to_string(*shape)),
                        "drop \"shape\" from the inputs or make it agree with the header");
      shape = given_shape;
    }
    if (!shape && e != entry.end() && e->second->contains("data"))
      shape = strip_cell(detail::nested_shape(e->second->at("data"), what), cell_dims(f.tensor));
    return shape;
  };
  // Primals first, so companions can take their shape.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < k.fields().size(); ++i) {
      auto id = static_cast<ir::FieldId>(i);
      const ir::Field& f = k.field(id);
      if (f.primal.has_value() != (pass == 1)) continue;
      auto shape = shape_of(id);
      auto use = uses.field_ndim.find(id);
      bool zero_d_place = uses.zero_d_places.count(id) != 0;
      bool used = use != uses.field_ndim.end() || uses.struct_for_spaces.count(f.name) || zero_d_place;
      // An undeclared field the kernel indexes with no indices (or reaches by a 0-d access chain,
      // the same access after lower_access) can only be 0-d.
      bool no_indices =
          (use != uses.field_ndim.end() && use->second == 0) || (use == uses.field_ndim.end() && zero_d_place);
      if (!shape && no_indices && !uses.struct_for_spaces.count(f.name)) shape = ir::Shape{};
      if (!shape) {
        if (!used) continue;
        throw UserError(fmt::format("field '{}' is used by the kernel but its shape is unknown", f.name),
                        fmt::format("declare it in the header (`field {} : {}[N]`) or give its shape in the inputs: "
                                    "\"fields\": {{\"{}\": {{\"shape\": [N]}}}}",
                                    f.name, ir::scalar_name(f.dtype), f.name));
      }
      if (use != uses.field_ndim.end() && use->second != shape->size())
        throw UserError(fmt::format("field '{}' has shape {} but the kernel indexes it with {} index(es)", f.name,
                                    ir::shape_to_string(*shape), use->second),
                        "give the field a shape with one extent per index");
      shapes[id] = *shape;
      st.fields[f.name] =
          Buffer::zeros(f.dtype, with_cell(*shape, cell_dims(f.tensor)), fmt::format("field '{}'", f.name));
    }
  // Data.
  std::set<ir::FieldId> filled;
  auto fill = [&](ir::FieldId id, const json& data, const std::string& what) {
    if (!filled.insert(id).second)
      throw UserError(fmt::format("{}: given twice (under its own name and under its primal)", what), "give it once");
    const ir::Field& f = k.field(id);
    auto shape = shapes.find(id);
    if (shape == shapes.end())
      throw UserError(fmt::format("{}: the shape of field '{}' is unknown", what, f.name),
                      fmt::format("give \"shape\" for '{}' in the inputs, or declare it in the header", f.name));
    st.fields[f.name] = detail::read_buffer(data, f.dtype, with_cell(shape->second, cell_dims(f.tensor)), what);
  };
  for (const auto& [id, obj] : entry) {
    const ir::Field& f = k.field(id);
    if (obj->contains("data")) fill(id, obj->at("data"), fmt::format("field '{}' data", f.name));
    for (const char* key : {"grad", "dual"}) {
      if (!obj->contains(key)) continue;
      auto companion = std::string(key) == "grad" ? f.grad : f.dual;
      if (!companion)
        throw UserError(
            fmt::format("field '{}': inputs give \"{}\" but the field has no {} field", f.name, key, key),
            fmt::format("declare one in the header (`field {} : ... {} NAME`) or drop \"{}\"", f.name, key, key));
      fill(*companion, obj->at(key), fmt::format("field '{}' {}", f.name, key));
    }
  }
}

// An ndarray of `cell`-shaped tensors (empty: of scalars) is stored with the cell's dimensions last.
ArgValue read_ndarray(const json& j, ir::ScalarKind dtype, const ir::Shape& cell, std::optional<size_t> ndim,
                      const std::string& what) {
  if (!j.is_object())
    throw UserError(fmt::format("{} is an ndarray, but the inputs give {}", what, j.dump()),
                    "give an object such as {\"shape\": [4], \"data\": [...], \"grad\": [...]}");
  check_keys(j, {"shape", "data", "grad", "dual"}, what);
  std::optional<ir::Shape> shape;
  if (j.contains("shape")) shape = strip_cell(detail::read_shape(j.at("shape"), what), cell);
  if (!shape && j.contains("data")) shape = strip_cell(detail::nested_shape(j.at("data"), what), cell);
  if (!shape)
    throw UserError(fmt::format("{}: the ndarray's shape is unknown", what), "give \"shape\" or nested \"data\"");
  if (ndim && *ndim != shape->size())
    throw UserError(fmt::format("{}: shape {} has {} dimension(s), but the kernel indexes it with {}", what,
                                ir::shape_to_string(*shape), shape->size(), *ndim),
                    "give the ndarray one extent per index");
  *shape = with_cell(*shape, cell);
  ArgValue a;
  a.is_ndarray = true;
  a.array = j.contains("data") ? detail::read_buffer(j.at("data"), dtype, *shape, what + " data")
                               : Buffer::zeros(dtype, *shape, what);
  if (j.contains("grad"))
    a.grad = detail::read_buffer(j.at("grad"), dtype, *shape, what + " grad");
  else if (ir::is_float(dtype))
    a.grad = Buffer::zeros(dtype, *shape, what + " grad");  // like a gradient field: zero unless given
  if (j.contains("dual"))
    a.dual = detail::read_buffer(j.at("dual"), dtype, *shape, what + " dual");
  else if (ir::is_float(dtype))
    a.dual = Buffer::zeros(dtype, *shape, what + " dual");
  return a;
}

// A tensor passed by value: an array, flat (row-major) or nested as `cell`, or of any shape when
// `cell` is unknown (the caller's tensor behind element arguments).
ArgValue read_tensor_arg(const json& j, ir::ScalarKind dtype, std::optional<ir::Shape> cell, const std::string& what) {
  if (!j.is_array())
    throw UserError(fmt::format("{} is a tensor, but the inputs give {}", what, j.dump()),
                    "give its elements as an array, such as [0.5, 1.5] for a [Tensor (2) f32]");
  ArgValue a;
  a.is_tensor = true;
  a.array = detail::read_buffer(j, dtype, cell ? *cell : detail::nested_shape(j, what), what);
  return a;
}

// The caller's tensor arguments that the kernel reads through element arguments -> their dtype.
std::map<int, ir::ScalarKind> element_sources(const ir::Kernel& k) {
  std::map<int, ir::ScalarKind> out;
  for (const ir::ArgDecl& a : k.args)
    if (a.element_of >= 0) out.emplace(a.element_of, a.dtype);
  return out;
}

void read_args(const ir::Kernel& k, const json& inputs, const Uses& uses, State& st) {
  const json empty = json::array();
  const json& given = inputs.contains("args") ? inputs.at("args") : empty;
  if (!given.is_array())
    throw UserError(fmt::format("inputs: \"args\" is {}, not a list", given.dump()),
                    "give \"args\" as a list with one entry per kernel argument, in argument order");
  std::map<int, ir::ScalarKind> sources = element_sources(k);
  size_t count = 0;
  for (const ir::ArgDecl& a : k.args)
    count = std::max(count, static_cast<size_t>(a.element_of >= 0 ? a.element_of : a.index) + 1);
  for (const auto& [index, type] : uses.argload_types) count = std::max(count, static_cast<size_t>(index) + 1);
  if (given.size() > count)
    throw UserError(fmt::format("inputs give {} argument(s) but the kernel has {}", given.size(), count),
                    "give one entry per kernel argument, in argument order");
  st.args.assign(count, ArgValue{});
  for (size_t i = 0; i < count; ++i) {
    std::string what = fmt::format("argument {}", i);
    const ir::ArgDecl* decl = k.find_arg(static_cast<int>(i));
    auto load = uses.argload_types.find(static_cast<int>(i));
    if (decl && decl->element_of >= 0) continue;  // bound from its tensor below
    if (auto src = sources.find(static_cast<int>(i)); src != sources.end()) {
      if (i >= given.size())
        throw UserError(fmt::format("{} is missing from the inputs", what), "add it to \"args\" (an array)");
      st.args[i] = read_tensor_arg(given[i], src->second, std::nullopt, what);
      continue;
    }
    if (!decl && load == uses.argload_types.end()) {  // neither declared nor loaded: keep whatever is given
      if (i < given.size() && given[i].is_number()) st.args[i].scalar = ir::Value::make_f64(given[i].get<double>());
      continue;
    }
    if (i >= given.size())
      throw UserError(fmt::format("{} is missing from the inputs", what),
                      "add it to \"args\" (a number, or an ndarray object)");
    // The reference types the base of an ndarray of tensors as the tensor itself.
    bool by_value = decl ? decl->by_value_tensor() : uses.tensor_values.count(static_cast<int>(i)) > 0;
    bool ndarray = decl ? decl->ndarray : !by_value && (load->second.pointer || load->second.is_tensor());
    ir::ScalarKind dtype = decl ? decl->dtype : load->second.scalar;
    ir::Shape cell = cell_dims(decl ? decl->tensor : load->second.tensor);
    if (by_value) {
      st.args[i] = read_tensor_arg(given[i], dtype, cell, what);
    } else if (ndarray) {
      std::optional<size_t> ndim;
      if (decl) ndim = static_cast<size_t>(decl->ndim);
      if (auto it = uses.ndarray_ndim.find(static_cast<int>(i)); it != uses.ndarray_ndim.end()) ndim = it->second;
      st.args[i] = read_ndarray(given[i], dtype, cell, ndim, what);
    } else {
      st.args[i].scalar = detail::value_from_json(given[i], dtype, what);
    }
  }
  bind_element_args(k, st);
}

}  // namespace

namespace {
void widen_floats(Buffer& b) {
  if (b.dtype != ir::ScalarKind::f32 && b.dtype != ir::ScalarKind::f16) return;
  for (ir::Value& v : b.data) v = v.cast_to(ir::ScalarKind::f64);
  b.dtype = ir::ScalarKind::f64;
}
}  // namespace

void bind_element_args(const ir::Kernel& k, State& s) {
  for (const ir::ArgDecl& a : k.args) {
    if (a.element_of < 0) continue;
    auto source = static_cast<size_t>(a.element_of);
    if (source >= s.args.size() || !s.args[source].is_tensor ||
        static_cast<size_t>(a.element) >= s.args[source].array.size())
      throw UserError(fmt::format("argument {} stands for element {} of argument {}, which is not given as a tensor "
                                  "of that many elements",
                                  a.index, a.element, a.element_of),
                      fmt::format("give argument {} as an array of its elements", a.element_of));
    auto index = static_cast<size_t>(a.index);
    if (index >= s.args.size()) s.args.resize(index + 1);
    s.args[index] = ArgValue{};
    s.args[index].scalar = s.args[source].array.data[static_cast<size_t>(a.element)];
  }
}

void widen_floats(State& s) {
  for (auto& [name, b] : s.fields) widen_floats(b);
  for (ArgValue& a : s.args) {
    if (a.is_tensor) widen_floats(a.array);
    if (!a.is_ndarray) continue;
    widen_floats(a.array);
    if (a.grad) widen_floats(*a.grad);
    if (a.dual) widen_floats(*a.dual);
  }
}

State make_state(const ir::Kernel& k, const json& inputs_in) {
  const json inputs = inputs_in.is_null() ? json::object() : inputs_in;
  if (!inputs.is_object())
    throw UserError("inputs must be a JSON object", "see runtime/core/state.h for the inputs format");
  check_keys(inputs, {"fields", "args", "spaces", "active", "length"}, "inputs");
  State st;
  for (const auto& [name, shape] : object_or_empty(inputs, "spaces", "inputs").items())
    st.spaces[name] = detail::read_shape(shape, fmt::format("space '{}'", name));
  Uses uses = collect_uses(k);
  read_fields(k, object_or_empty(inputs, "fields", "inputs"), uses, st);
  read_args(k, inputs, uses, st);
  detail::read_activity(k, inputs, st);
  for (const std::string& space : uses.struct_for_spaces) space_shape(k, st, space);
  return st;
}

}  // namespace pb::runtime
