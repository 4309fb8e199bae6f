#include "workbench/workspace/backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "ir/diagnostic.h"
#include "ir/type_uses.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "passes/scalarize.h"
#include "runtime/interp/interpreter.h"
#include "runtime/interp/json_values.h"
#include "runtime/vulkan/run.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/load.h"

namespace pb::workbench {

namespace {

// One Vulkan runtime per device filter for the whole process (opening a device is slow). Never
// destroyed: a device torn down by a static destructor at exit can run after the driver's own
// teardown (NVIDIA's driver then crashes the exiting process); the OS reclaims it instead.
runtime::vulkan::Runtime& vulkan_runtime(const std::string& device) {
  static std::mutex mutex;
  static auto* opened = new std::map<std::string, std::unique_ptr<runtime::vulkan::Runtime>>();
  std::lock_guard lock(mutex);
  auto& slot = (*opened)[device];
  if (!slot) slot = std::make_unique<runtime::vulkan::Runtime>(device);
  return *slot;
}
std::mutex& vulkan_launch_mutex() {
  static std::mutex m;
  return m;
}

struct NamedArray {
  std::string name;
  const runtime::Buffer* buffer;
};

std::vector<NamedArray> arrays_of(const runtime::State& s) {
  std::vector<NamedArray> out;
  out.reserve(s.fields.size() + 2 * s.args.size());
  for (const auto& [name, buf] : s.fields) out.push_back({name, &buf});
  for (size_t i = 0; i < s.args.size(); ++i) {
    const auto& arg = s.args[i];
    if (!arg.is_ndarray) continue;
    out.push_back({fmt::format("arg{}", i), &arg.array});
    if (arg.grad) out.push_back({fmt::format("arg{}_grad", i), &*arg.grad});
  }
  return out;
}

BackendDiff diff(Backend b, const NamedArray& want, const runtime::Buffer* got, const Tolerances& tol) {
  BackendDiff d;
  d.backend = b;
  d.array = want.name;
  d.dtype = want.buffer->dtype;
  bool is_float = ir::is_float(d.dtype);
  d.tolerance = !is_float ? 0 : d.dtype == ir::ScalarKind::f64 ? tol.f64 : tol.f32;
  if (!got || got->data.size() != want.buffer->data.size()) {
    d.ok = false;
    d.error = "missing on this backend";
    return d;
  }
  for (size_t i = 0; i < got->data.size(); ++i, ++d.elements) {
    const ir::Value& a = want.buffer->data[i];
    const ir::Value& v = got->data[i];
    if (!is_float) {
      double e = a.bits() == v.bits() ? 0 : std::fabs(static_cast<double>(a.as_i64() - v.as_i64()));
      d.max_abs = std::max(d.max_abs, e);
      d.max_rel = std::max(d.max_rel, e == 0 ? 0.0 : 1.0);
      d.ok = d.ok && e == 0;
      continue;
    }
    double x = a.as_f64(), y = v.as_f64();
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    double e = std::fabs(x - y);
    double scale = std::max(std::fabs(x), std::fabs(y));
    if (std::isnan(e)) e = std::numeric_limits<double>::infinity();
    d.max_abs = std::max(d.max_abs, e);
    d.max_rel = std::max(d.max_rel, scale > 0 ? e / scale : e);
    d.ok = d.ok && e <= d.tolerance * std::max(1.0, scale);
  }
  return d;
}

std::vector<BackendDiff> diff_states(Backend b, const runtime::State& want, const runtime::State& got,
                                     const Tolerances& tol) {
  std::vector<BackendDiff> rows;
  std::map<std::string, const runtime::Buffer*> theirs;
  for (const NamedArray& a : arrays_of(got)) theirs[a.name] = a.buffer;
  for (const NamedArray& a : arrays_of(want)) {
    auto it = theirs.find(a.name);
    rows.push_back(diff(b, a, it == theirs.end() ? nullptr : it->second, tol));
  }
  // Sparse spaces: which cells are active (a dynamic space's lengths), compared exactly.
  auto cells = [](const std::vector<int64_t>& v) {
    runtime::Buffer buf{ir::ScalarKind::i64, {static_cast<int64_t>(v.size())}, {}};
    for (int64_t c : v) buf.data.push_back(ir::Value::from_int(ir::ScalarKind::i64, c));
    return buf;
  };
  for (const auto& [space, active] : want.activity) {
    runtime::Buffer w = cells(active), g;
    auto it = got.activity.find(space);
    if (it != got.activity.end()) g = cells(it->second);
    rows.push_back(diff(b, {space + " (cells)", &w}, it == got.activity.end() ? nullptr : &g, tol));
  }
  return rows;
}

// One row per returned value ("return[0]", ...), against the interpreter's.
std::vector<BackendDiff> diff_returns(Backend b, const std::vector<ir::Value>& want, const std::vector<ir::Value>& got,
                                      const Tolerances& tol) {
  std::vector<BackendDiff> rows;
  for (size_t i = 0; i < want.size(); ++i) {
    runtime::Buffer w{want[i].kind(), {1}, {want[i]}}, g;
    if (i < got.size()) g = runtime::Buffer{got[i].kind(), {1}, {got[i]}};
    rows.push_back(diff(b, {fmt::format("return[{}]", i), &w}, i < got.size() ? &g : nullptr, tol));
  }
  return rows;
}

BackendDiff failed_row(Backend b, const std::string& message) {
  BackendDiff d;
  d.backend = b;
  d.array = "-";
  d.ok = false;
  d.error = message;
  return d;
}

}  // namespace

KnownDifference known_difference(const nlohmann::json& fixture, Backend b) {
  KnownDifference k;
  if (!fixture.contains("backends") || !fixture["backends"].contains(backend_name(b))) return k;
  const nlohmann::json& j = fixture["backends"][std::string(backend_name(b))];
  k.reason = j.value("known_difference", "");
  if (j.contains("ignore")) k.ignore = j["ignore"].get<std::vector<std::string>>();
  if (j.contains("rtol")) k.rtol = j["rtol"].get<double>();
  if (j.contains("expect"))
    for (const auto& [name, data] : j["expect"].items()) k.expect[name] = data;
  return k;
}

std::vector<Backend> parse_backends(std::string_view text) {
  if (text == "all") return {Backend::interp, Backend::cpu, Backend::vulkan};
  std::vector<Backend> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string_view name = text.substr(start, comma - start);
    std::optional<Backend> b = backend_from_name(name);
    if (!b)
      throw UserError(fmt::format("--backend: unknown backend '{}'", name),
                      "choose interp, cpu, vulkan, all, or several separated by commas");
    out.push_back(*b);
    start = comma + 1;
  }
  return out;
}

LaunchTime run_state_on(Backend b, const ir::Kernel& k, runtime::State& state, const BackendOptions& o) {
  if (b != Backend::interp && ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); })) {
    auto scalar = k.clone();  // compiled backends run a tensor kernel scalarized (workspace/run.cpp)
    try {
      passes::scalarize(*scalar);
    } catch (const UserError& e) {
      Diagnostic d = e.diagnostic();
      d.message = fmt::format("on {}: {}", backend_name(b), d.message);
      throw RunFailure(UserError(d));
    }
    return run_state_on(b, *scalar, state, o);
  }
  LaunchTime t;
  t.backend = b;
  t.kernel = k.name;
  try {
    switch (b) {
      case Backend::interp: {
        auto start = std::chrono::steady_clock::now();
        runtime::RunResult r = runtime::run_kernel(k, state, o.interp);
        t.returned = std::move(r.returned);
        t.printed = std::move(r.printed);
        t.launch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        t.kernel_ms = t.launch_ms;
        return t;
      }
      case Backend::cpu: {
        auto start = std::chrono::steady_clock::now();
        runtime::RunResult r = run_on_backend(Backend::cpu, k, state, o.interp);
        t.returned = std::move(r.returned);
        t.printed = std::move(r.printed);
        t.launch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        t.kernel_ms = t.launch_ms;
        return t;
      }
      case Backend::vulkan: {
        if (o.interp.shuffle || o.interp.trace_decisions || o.interp.check_global_access || o.interp.f64)
          throw UserError(
              "shuffling, decision tracing, f64 mode and the dynamic global-access check are not "
              "vulkan options",
              "use --backend=interp (f64 mode: interp or cpu)");
        runtime::vulkan::Runtime& rt = vulkan_runtime(o.device);
        std::lock_guard lock(vulkan_launch_mutex());  // one queue: launches take turns
        runtime::vulkan::LaunchOptions launch;
        launch.max_steps = o.interp.max_steps;
        runtime::vulkan::RunReport r = runtime::vulkan::run_kernel(rt, k, state, {}, launch);
        t.device = rt.device().name;
        t.kernel_ms = r.launch.kernel_ms;
        t.launch_ms = r.launch.launch_ms;
        t.timed = r.launch.timed;
        t.returned = std::move(r.launch.returned);
        return t;
      }
    }
  } catch (const UserError& e) {
    if (b == Backend::interp) throw RunFailure(e);
    Diagnostic d = e.diagnostic();
    d.message = fmt::format("on {}: {}", backend_name(b), d.message);
    throw RunFailure(UserError(d));
  }
  return t;
}

BackendRun run_on_backend(Backend b, const ir::Kernel& k, const RunRequest& req, const std::string* pipeline,
                          const BackendOptions& o) {
  runtime::State state = state_from_inputs(k, req.inputs, req.inputs_name);
  BackendRun out;
  if (!pipeline) {
    seed_gradients(k, state, req.seed_grads);
    out.launches.push_back(run_state_on(b, k, state, o));
  } else {
    auto reverse = make_reverse_kernel(k, *pipeline, req.kernel_name);
    out.launches.push_back(run_state_on(b, k, state, o));
    seed_gradients(k, state, req.seed_grads);
    out.launches.push_back(run_state_on(b, *reverse, state, o));
    out.launches.back().kernel += " (reverse)";
  }
  out.values = runtime::state_to_json(k, state);
  add_returned(out.values, out.launches.front().returned);
  return out;
}

std::vector<BackendDiff> compare_backends(const ir::Kernel& k, const RunRequest& req, const std::string* pipeline,
                                          const std::vector<Backend>& backends, const BackendOptions& o,
                                          const Tolerances& tol, std::vector<LaunchTime>* launches) {
  std::unique_ptr<ir::Kernel> reverse;
  if (pipeline) reverse = make_reverse_kernel(k, *pipeline, req.kernel_name);
  std::vector<ir::Value> returned;  // by the forward kernel on the backend last run
  auto run = [&](Backend b) {
    runtime::State state = state_from_inputs(k, req.inputs, req.inputs_name);
    if (!reverse) seed_gradients(k, state, req.seed_grads);
    LaunchTime forward = run_state_on(b, k, state, o);
    returned = forward.returned;
    if (launches) launches->push_back(forward);
    if (reverse) {
      seed_gradients(k, state, req.seed_grads);
      LaunchTime back = run_state_on(b, *reverse, state, o);
      back.kernel += " (reverse)";
      if (launches) launches->push_back(back);
    }
    return state;
  };
  runtime::State want = run(Backend::interp);
  std::vector<ir::Value> want_returned = returned;
  std::vector<BackendDiff> rows;
  for (Backend b : backends) {
    if (b == Backend::interp) continue;
    try {
      runtime::State got = run(b);
      auto r = diff_states(b, want, got, tol);
      rows.insert(rows.end(), r.begin(), r.end());
      auto ret = diff_returns(b, want_returned, returned, tol);
      rows.insert(rows.end(), ret.begin(), ret.end());
    } catch (const UserError& e) {
      rows.push_back(failed_row(b, e.diagnostic().message));
    }
  }
  return rows;
}

std::string format_backend_table(const std::vector<BackendDiff>& rows) {
  std::string out = fmt::format("{:<8} {:<24} {:<5} {:>9} {:>12} {:>12} {:>10}  {}\n", "backend", "array", "type",
                                "elements", "max abs", "max rel", "tolerance", "verdict");
  for (const BackendDiff& d : rows) {
    if (!d.error.empty() && d.elements == 0) {
      out += fmt::format("{:<8} {:<24} error: {}\n", backend_name(d.backend), d.array, d.error);
      continue;
    }
    out +=
        fmt::format("{:<8} {:<24} {:<5} {:>9} {:>12.3e} {:>12.3e} {:>10.1e}  {}\n", backend_name(d.backend), d.array,
                    ir::scalar_name(d.dtype), d.elements, d.max_abs, d.max_rel, d.tolerance, d.ok ? "ok" : "DIFFERS");
  }
  return out;
}

FixtureBackendOutcome check_fixture_on_backends(const std::string& path, const std::vector<Backend>& backends,
                                                const BackendOptions& o, const Tolerances& tol) {
  FixtureBackendOutcome out;
  nlohmann::json fx = parse_json_text(read_file(path), path);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (fx.contains("inputs_file"))
    fx["inputs"] = parse_json_text(read_file((dir / fx["inputs_file"].get<std::string>()).string()),
                                   fx["inputs_file"].get<std::string>());
  if (!fx.contains("inputs")) {
    out.skipped = "no inputs";
    return out;
  }
  std::unique_ptr<ir::Kernel> k;
  try {
    k = fx.contains("kernel_text") ? parse_kernel_source(fx["kernel_text"].get<std::string>(), path)
                                   : load_kernel((dir / fx["kernel"].get<std::string>()).string());
    if (!ir::verify(*k).empty()) {
      out.skipped = "a negative fixture (the kernel does not verify)";
      return out;
    }
    std::string pipeline = fx.value("pipeline", "");
    if (!pipeline.empty()) {
      passes::RunOptions ro;
      ro.capture_ir = false;
      if (passes::run_pipeline(*k, passes::parse_pipeline(pipeline), ro).failed) {
        out.skipped = "the pipeline fails (a negative fixture)";
        return out;
      }
    }
  } catch (const UserError& e) {
    out.skipped = fmt::format("a negative fixture: {}", e.diagnostic().message);
    return out;
  }
  runtime::State initial;
  runtime::State want;
  try {
    initial = runtime::make_state(*k, fx["inputs"]);
    std::vector<std::pair<std::string, double>> seeds;
    if (fx.contains("grad") && fx["grad"].contains("seed"))
      for (const auto& [name, v] : fx["grad"]["seed"].items()) seeds.emplace_back(name, v.get<double>());
    seed_gradients(*k, initial, seeds);
    want = initial;
    run_state_on(Backend::interp, *k, want, o);
  } catch (const UserError& e) {
    out.skipped = fmt::format("the interpreter rejects the run: {}", e.diagnostic().message);
    return out;
  }
  for (Backend b : backends) {
    if (b == Backend::interp) continue;
    KnownDifference known = known_difference(fx, b);
    if (!known.reason.empty() && known.ignore.empty() && !known.rtol && known.expect.empty()) {
      out.skipped = fmt::format("a known difference on {}: {}", backend_name(b), known.reason);
      continue;
    }
    Tolerances fixture_tol = tol;
    if (known.rtol) fixture_tol = {*known.rtol, *known.rtol};
    if (b == Backend::vulkan) {
      std::string lacks;
      try {
        const auto& device = vulkan_runtime(o.device).device();
        auto lowering = runtime::vulkan::lowering_for(*k, device);
        if (lowering.float64 && !device.float64) lacks = "shaderFloat64 (the kernel uses f64)";
        if (lowering.int64 && !device.int64) lacks = "shaderInt64 (the kernel uses 64-bit integers)";
        if (!lacks.empty()) {
          out.skipped = fmt::format("the Vulkan device \"{}\" lacks {}", device.name, lacks);
          return out;
        }
      } catch (const UserError& e) {
        out.rows.push_back(failed_row(b, e.diagnostic().message));
        out.passed = false;
        continue;
      }
    }
    runtime::State got = initial;
    try {
      run_state_on(b, *k, got, o);
    } catch (const UserError& e) {
      out.rows.push_back(failed_row(b, e.diagnostic().message));
      out.passed = false;
      continue;
    }
    runtime::State want_here = want;
    for (const auto& [name, data] : known.expect) {
      auto it = want_here.fields.find(name);
      std::string what = fmt::format("{}: backends.{}.expect.{}", path, backend_name(b), name);
      if (it == want_here.fields.end())
        throw UserError(fmt::format("{}: the kernel has no field '{}' with data", what, name),
                        "name a field or gradient field of the kernel");
      it->second = runtime::detail::read_buffer(data, it->second.dtype, it->second.shape, what);
    }
    for (BackendDiff& d : diff_states(b, want_here, got, fixture_tol)) {
      if (std::find(known.ignore.begin(), known.ignore.end(), d.array) != known.ignore.end()) continue;
      out.passed = out.passed && d.ok;
      out.rows.push_back(std::move(d));
    }
  }
  size_t compared = 0;
  for (const BackendDiff& d : out.rows) compared += d.elements;
  if (out.passed && compared == 0 && out.skipped.empty()) out.skipped = "the kernel has no field or ndarray to compare";
  if (compared) out.skipped.clear();
  return out;
}

}  // namespace pb::workbench
