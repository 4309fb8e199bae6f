#include "workbench/workspace/run.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "ir/diagnostic.h"
#include "ir/type_uses.h"
#include "ir/visitor.h"
#include "passes/scalarize.h"
#include "runtime/interp/json_values.h"
#include "runtime/interp/state.h"
#include "workbench/workspace/backend.h"
#include "workbench/workspace/cpu_module.h"

namespace pb::workbench {

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

}  // namespace

std::vector<std::string> float_ndarray_names(const runtime::State& state) {
  std::vector<std::string> out;
  for (size_t i = 0; i < state.args.size(); ++i)
    if (state.args[i].is_ndarray && ir::is_float(state.args[i].array.dtype)) out.push_back(fmt::format("arg{}", i));
  return out;
}

DiffArray diff_array(const ir::Kernel& k, runtime::State& state, const std::string& name, const std::string& role) {
  if (auto n = ndarray_index(name); n && !k.find_field(name)) {
    if (*n >= state.args.size() || !state.args[*n].is_ndarray)
      throw UserError(fmt::format("{}: the kernel has no ndarray argument {}", role, *n),
                      "name a float field, or an ndarray argument as arg<N>");
    runtime::ArgValue& a = state.args[*n];
    if (!ir::is_float(a.array.dtype))
      throw UserError(
          fmt::format("{}: ndarray argument {} is {}, not a float ndarray", role, *n, ir::scalar_name(a.array.dtype)),
          "gradients exist only for f32 and f64 ndarrays");
    if (!a.grad) a.grad = runtime::Buffer::zeros(a.array.dtype, a.array.shape);
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

void seed_gradients(const ir::Kernel& k, runtime::State& state,
                    const std::vector<std::pair<std::string, double>>& seeds) {
  for (const auto& [name, value] : seeds) {
    runtime::Buffer& buf = *diff_array(k, state, name, "--seed-grad").grad;
    for (auto& v : buf.data) v = ir::Value::from_double(buf.dtype, value);
  }
}

runtime::State state_from_inputs(const ir::Kernel& k, const nlohmann::json& inputs, const std::string& inputs_name) {
  try {
    return runtime::make_state(k, inputs);
  } catch (const UserError& e) {
    if (inputs_name.empty()) throw;
    Diagnostic d = e.diagnostic();
    d.message = inputs_name + ": " + d.message;
    throw UserError(d);
  }
}

std::optional<Backend> backend_from_name(std::string_view name) {
  if (name == "interp") return Backend::interp;
  if (name == "cpu") return Backend::cpu;
  if (name == "vulkan") return Backend::vulkan;
  return std::nullopt;
}

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::interp:
      return "interp";
    case Backend::cpu:
      return "cpu";
    case Backend::vulkan:
      return "vulkan";
  }
  return "?";
}

runtime::RunResult run_on_backend(Backend backend, const ir::Kernel& k, runtime::State& state,
                                  const runtime::RunOptions& options) {
  // The compiling backends and the dynamic global-access check take scalar kernels: a tensor kernel
  // runs scalarized, as the reference's code generators do (the same state: a tensor cell's
  // elements are its field's last dimensions).
  bool scalar_only = backend != Backend::interp || options.check_global_access;
  if (scalar_only && ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); })) {
    auto scalar = k.clone();
    try {
      passes::scalarize(*scalar);
    } catch (const UserError& e) {
      Diagnostic d = e.diagnostic();
      d.message =
          fmt::format("{} runs the kernel scalarized: {}",
                      backend == Backend::interp ? "the global-access check" : backend_name(backend), d.message);
      throw UserError(d);
    }
    return run_on_backend(backend, *scalar, state, options);
  }
  switch (backend) {
    case Backend::interp:
      return runtime::run_kernel(k, state, options);
    case Backend::cpu:
      return run_on_cpu(k, state, options);
    case Backend::vulkan: {
      BackendOptions o;
      o.interp = options;
      runtime::RunResult r;
      r.returned = run_state_on(Backend::vulkan, k, state, o).returned;
      return r;
    }
  }
  return {};
}

RunOutput run_on_interpreter(const ir::Kernel& k, const RunRequest& req) {
  runtime::State state = state_from_inputs(k, req.inputs, req.inputs_name);
  seed_gradients(k, state, req.seed_grads);
  runtime::RunResult result;
  try {
    result = run_on_backend(req.backend, k, state, req.options);
  } catch (const RunFailure&) {
    throw;
  } catch (const UserError& e) {
    throw RunFailure(e);
  }
  nlohmann::json values = runtime::state_to_json(k, state);
  add_returned(values, result.returned);
  return {std::move(values), result.printed, unexercised_stacks(k, result)};
}

void add_returned(nlohmann::json& values, const std::vector<ir::Value>& returned) {
  if (returned.empty()) return;
  nlohmann::json& ret = values["return"] = nlohmann::json::array();
  for (const ir::Value& v : returned) ret.push_back(runtime::detail::value_to_json(v));
}

std::vector<int> unexercised_stacks(const ir::Kernel& k, const runtime::RunResult& r) {
  struct Pushes {
    int64_t beside = 0;  // in the alloc's own block
    bool nested = false;
  };
  std::map<const ir::Stmt*, Pushes> pushes;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    auto* push = ir::dyn_cast<ir::AdStackPushStmt>(&s);
    if (!push) return;
    const ir::Stmt* alloc = push->operand(0);
    Pushes& p = pushes[alloc];
    if (push->parent() == alloc->parent())
      ++p.beside;
    else
      p.nested = true;
  });
  std::vector<int> ids;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (!ir::isa<ir::AdStackAllocaStmt>(&s)) return;
    auto p = pushes.find(&s);
    if (p == pushes.end() || !p->second.nested) return;
    auto it = r.max_stack_depth.find(s.id);
    if (it == r.max_stack_depth.end() || it->second <= p->second.beside) ids.push_back(s.id);
  });
  return ids;
}

}  // namespace pb::workbench
