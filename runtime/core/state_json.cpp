#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "runtime/core/json_values.h"
#include "runtime/core/sparse.h"

namespace pb::runtime {
namespace detail {
namespace {

using nlohmann::json;

constexpr const char* kValueRemedy =
    "values are JSON numbers (true/false for u1; \"nan\", \"inf\", \"-inf\" for floats)";

std::optional<double> special_float(const std::string& text) {
  if (text == "nan" || text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf" || text == "+inf" || text == "infinity" || text == "Infinity")
    return std::numeric_limits<double>::infinity();
  if (text == "-inf" || text == "-infinity" || text == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

bool fits(ir::ScalarKind k, int64_t i) {
  if (k == ir::ScalarKind::u1) return i == 0 || i == 1;
  if (ir::is_float(k)) return true;
  const int w = ir::bit_width(k);
  if (!ir::is_signed(k)) return i >= 0 && (w >= 64 || (static_cast<uint64_t>(i) >> w) == 0);
  return w >= 64 || (i >= -(int64_t{1} << (w - 1)) && i < (int64_t{1} << (w - 1)));
}

bool fits(ir::ScalarKind k, uint64_t u) {
  if (k == ir::ScalarKind::u1) return u <= 1;
  if (ir::is_float(k)) return true;
  const int w = ir::bit_width(k);
  if (ir::is_signed(k)) return u < (uint64_t{1} << (w - 1));
  return w >= 64 || (u >> w) == 0;
}

ir::Value integer_from_json(const json& j, ir::ScalarKind k, const std::string& what) {
  auto out_of_range = [&] {
    return UserError(fmt::format("{}: {} is out of range for {}", what, j.dump(), ir::scalar_name(k)),
                     "give a value the element type can hold");
  };
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (!std::isfinite(d) || d != std::floor(d))
      throw UserError(
          fmt::format("{}: {} is not an integer, but the element type is {}", what, j.dump(), ir::scalar_name(k)),
          "give whole numbers for integer fields and arguments");
    if (d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) {
      auto i = static_cast<int64_t>(d);
      if (!fits(k, i)) throw out_of_range();
      return ir::Value::from_int(k, i);
    }
    if (d < 0 || d >= 1.8446744073709552e19 || !fits(k, static_cast<uint64_t>(d))) throw out_of_range();
    return ir::Value::from_uint(k, static_cast<uint64_t>(d));
  }
  if (j.is_number_unsigned()) {
    auto u = j.get<uint64_t>();
    if (!fits(k, u)) throw out_of_range();
    return ir::Value::from_uint(k, u);
  }
  auto i = j.get<int64_t>();
  if (!fits(k, i)) throw out_of_range();
  return ir::Value::from_int(k, i);
}

// Appends the leaves of `j` (row-major) to `out`, checking that every array at depth d has
// extent shape[d] and that leaves sit at depth shape.size().
void flatten(const json& j, const ir::Shape& shape, size_t depth, std::vector<const json*>& out,
             const std::string& what) {
  if (!j.is_array()) {
    if (depth != shape.size())
      throw UserError(
          fmt::format("{}: the nested data is ragged (a value sits at depth {} of {})", what, depth, shape.size()),
          "give a flat row-major list, or nested lists of equal lengths");
    out.push_back(&j);
    return;
  }
  if (depth >= shape.size() || static_cast<int64_t>(j.size()) != shape[depth])
    throw UserError(
        fmt::format("{}: the nested data is ragged (a list at depth {} has {} entries)", what, depth, j.size()),
        "give a flat row-major list, or nested lists of equal lengths");
  for (const json& e : j) flatten(e, shape, depth + 1, out, what);
}

}  // namespace

ir::Value value_from_json(const json& j, ir::ScalarKind k, const std::string& what) {
  if (j.is_boolean()) {
    if (k != ir::ScalarKind::u1)
      throw UserError(fmt::format("{}: {} given for a {} element", what, j.dump(), ir::scalar_name(k)), kValueRemedy);
    return ir::Value::make_bool(j.get<bool>());
  }
  if (j.is_string() && ir::is_float(k)) {
    if (auto d = special_float(j.get<std::string>())) return ir::Value::from_double(k, *d);
  }
  if (!j.is_number()) throw UserError(fmt::format("{}: {} is not a number", what, j.dump()), kValueRemedy);
  if (ir::is_float(k)) {
    double d = j.get<double>();
    if (k == ir::ScalarKind::f32 && std::isfinite(d) && std::abs(d) > std::numeric_limits<float>::max())
      throw UserError(fmt::format("{}: {} is out of range for f32 (it would become infinity)", what, j.dump()),
                      "give a value f32 can hold, or \"inf\" / \"-inf\" if infinity is meant");
    if (k == ir::ScalarKind::f16 && std::isfinite(d) && std::isinf(ir::Value::make_f16(d).as_f64()))
      throw UserError(fmt::format("{}: {} is out of range for f16 (it would become infinity)", what, j.dump()),
                      "give a value f16 can hold (at most 65504 in magnitude), or \"inf\" / \"-inf\"");
    return ir::Value::from_double(k, d);
  }
  return integer_from_json(j, k, what);
}

json value_to_json(const ir::Value& v) {
  switch (v.kind()) {
    case ir::ScalarKind::f16:
    case ir::ScalarKind::f32:
    case ir::ScalarKind::f64: {
      double d = v.as_f64();
      if (std::isnan(d)) return "nan";
      if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
      return d;
    }
    case ir::ScalarKind::u1:
      return v.as_bool() ? 1 : 0;
    case ir::ScalarKind::u32:
    case ir::ScalarKind::u64:
      return v.as_u64();
    default:
      return v.as_i64();
  }
}

ir::Shape nested_shape(const json& data, const std::string& what) {
  ir::Shape shape;
  const json* j = &data;
  while (j->is_array()) {
    shape.push_back(static_cast<int64_t>(j->size()));
    if (j->empty()) break;
    j = &(*j)[0];
  }
  std::vector<const json*> leaves;
  flatten(data, shape, 0, leaves, what);
  return shape;
}

Buffer read_buffer(const json& data, ir::ScalarKind k, const ir::Shape& shape, const std::string& what) {
  ir::Shape nested = nested_shape(data, what);
  int64_t want = num_elements(shape);
  std::vector<const json*> leaves;
  if (nested == shape || (nested.size() == 1 && nested[0] == want) || (nested.empty() && want == 1)) {
    const ir::Shape& layout = nested;
    flatten(data, layout, 0, leaves, what);
  } else {
    throw UserError(fmt::format("{}: {} value(s) laid out as {}, but the shape {} has {} element(s)", what,
                                num_elements(nested), ir::shape_to_string(nested), ir::shape_to_string(shape), want),
                    "give exactly one value per element, flat in row-major order or nested by the shape");
  }
  Buffer b = Buffer::zeros(k, shape, what);
  for (size_t i = 0; i < leaves.size(); ++i)
    b.data[i] = value_from_json(*leaves[i], k, fmt::format("{} element {}", what, i));
  return b;
}

ir::Shape read_shape(const json& j, const std::string& what) {
  if (!j.is_array())
    throw UserError(fmt::format("{}: shape {} is not a list", what, j.dump()),
                    "write a shape as a list such as [4] or [2, 3]");
  ir::Shape s;
  for (const json& e : j) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0)
      throw UserError(fmt::format("{}: shape {} has an extent that is not a positive integer", what, j.dump()),
                      "write a shape as a list of positive integers such as [4] or [2, 3]");
    s.push_back(e.get<int64_t>());
  }
  return s;
}

}  // namespace detail

namespace {

nlohmann::json buffer_to_json(const Buffer& b) {
  nlohmann::json data = nlohmann::json::array();
  for (const ir::Value& v : b.data) data.push_back(detail::value_to_json(v));
  return {{"shape", b.shape}, {"data", std::move(data)}};
}

}  // namespace

nlohmann::json state_to_json(const ir::Kernel& k, const State& s) {
  nlohmann::json fields = nlohmann::json::object();
  auto find = [&](const std::string& name) -> const Buffer* {
    auto it = s.fields.find(name);
    return it == s.fields.end() ? nullptr : &it->second;
  };
  for (const ir::Field& f : k.fields()) {
    if (f.primal) continue;
    const Buffer* b = find(f.name);
    if (!b) continue;
    nlohmann::json j = buffer_to_json(*b);
    if (f.grad)
      if (const Buffer* g = find(k.field(*f.grad).name)) j["grad"] = buffer_to_json(*g)["data"];
    if (f.dual)
      if (const Buffer* d = find(k.field(*f.dual).name)) j["dual"] = buffer_to_json(*d)["data"];
    fields[f.name] = std::move(j);
  }
  nlohmann::json out = {{"fields", std::move(fields)}};
  nlohmann::json ndarrays = nlohmann::json::object();
  // Dual arrays only for a forward-mode kernel, so other kernels' output is unchanged.
  bool has_dual = false;
  ir::walk(k.root(), [&](ir::Stmt& st) {
    if (auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(&st)) has_dual = has_dual || e->is_dual;
  });
  for (size_t i = 0; i < s.args.size(); ++i) {
    const ArgValue& a = s.args[i];
    if (!a.is_ndarray) continue;
    nlohmann::json j = buffer_to_json(a.array);
    if (a.grad) j["grad"] = buffer_to_json(*a.grad)["data"];
    if (a.dual && has_dual) j["dual"] = buffer_to_json(*a.dual)["data"];
    ndarrays[fmt::format("arg{}", i)] = std::move(j);
  }
  if (!ndarrays.empty()) out["ndarrays"] = std::move(ndarrays);
  detail::activity_to_json(k, s, out);
  return out;
}

}  // namespace pb::runtime
