#include "runtime/core/seeds.h"

#include <fmt/format.h>

#include <optional>

#include "ir/diagnostic.h"

namespace pb::runtime {

namespace {

// "arg<N>" -> N.
std::optional<size_t> ndarray_index(const std::string& name) {
  if (name.size() < 4 || name.compare(0, 3, "arg") != 0 || name.size() > 12) return std::nullopt;
  size_t n = 0;
  for (size_t i = 3; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(name[i] - '0');
  }
  return n;
}

void fill(Buffer& b, double value) {
  for (ir::Value& v : b.data) v = ir::Value::from_double(b.dtype, value);
}

}  // namespace

std::vector<std::string> float_ndarray_names(const State& state) {
  std::vector<std::string> out;
  for (size_t i = 0; i < state.args.size(); ++i)
    if (state.args[i].is_ndarray && ir::is_float(state.args[i].array.dtype)) out.push_back(fmt::format("arg{}", i));
  return out;
}

DiffArray diff_array(const ir::Kernel& k, State& state, const std::string& name, const std::string& role) {
  if (auto n = ndarray_index(name); n && !k.find_field(name)) {
    if (*n >= state.args.size() || !state.args[*n].is_ndarray)
      throw UserError(fmt::format("{}: the kernel has no ndarray argument {}", role, *n),
                      "name a float field, or an ndarray argument as arg<N>");
    ArgValue& a = state.args[*n];
    if (!ir::is_float(a.array.dtype))
      throw UserError(
          fmt::format("{}: ndarray argument {} is {}, not a float ndarray", role, *n, ir::scalar_name(a.array.dtype)),
          "gradients exist only for f32 and f64 ndarrays");
    if (!a.grad) a.grad = Buffer::zeros(a.array.dtype, a.array.shape);
    return {&a.array, &*a.grad};
  }
  auto id = k.find_field(name);
  if (!id)
    throw UserError(fmt::format("{}: no field named '{}'", role, name),
                    "name a field of the kernel, or an ndarray argument as arg<N>");
  const ir::Field& f = k.field(*id);
  if (!ir::is_float(f.dtype))
    throw UserError(fmt::format("{}: field '{}' is {}, not a float field", role, name, ir::scalar_name(f.dtype)),
                    "gradients exist only for f32 and f64 fields");
  if (!f.grad)
    throw UserError(fmt::format("{}: field '{}' has no gradient field", role, name),
                    fmt::format("declare it in the header: `field {0} : f32[N] grad {0}_grad`", name));
  auto primal = state.fields.find(name);
  auto grad = state.fields.find(k.field(*f.grad).name);
  if (primal == state.fields.end() || grad == state.fields.end())
    throw UserError(fmt::format("{}: the shape of field '{}' is unknown", role, name),
                    "declare its shape in the header or give it in the inputs");
  return {&primal->second, &grad->second};
}

Buffer& dual_array(const ir::Kernel& k, State& state, const std::string& name, const std::string& role) {
  if (auto id = k.find_field(name)) {
    const ir::Field& f = k.field(*id);
    if (!ir::is_float(f.dtype) || !f.dual)
      throw UserError(fmt::format("{}: field '{}' has no dual field", role, name),
                      fmt::format("declare it in the header (`field {0} : f32[N] dual {0}_dual`) or give it a "
                                  "gradient field, from which make_dual infers one",
                                  name));
    auto it = state.fields.find(k.field(*f.dual).name);
    if (it == state.fields.end())
      throw UserError(fmt::format("{}: the shape of field '{}' is unknown", role, name),
                      "declare its shape in the header or give it in the inputs");
    return it->second;
  }
  Buffer& primal = *diff_array(k, state, name, role).primal;  // an ndarray, or a clear error
  for (ArgValue& a : state.args)
    if (a.is_ndarray && &a.array == &primal) {
      if (!a.dual) a.dual = Buffer::zeros(a.array.dtype, a.array.shape);
      return *a.dual;
    }
  throw UserError(fmt::format("{}: '{}' is not a float field or ndarray", role, name));
}

void seed_gradients(const ir::Kernel& k, State& state, const std::vector<std::pair<std::string, double>>& seeds) {
  for (const auto& [name, value] : seeds) fill(*diff_array(k, state, name, "--seed-grad").grad, value);
}

void seed_duals(const ir::Kernel& k, State& state, const std::vector<std::pair<std::string, double>>& seeds) {
  for (const auto& [name, value] : seeds) fill(dual_array(k, state, name, "--seed-dual"), value);
}

}  // namespace pb::runtime
