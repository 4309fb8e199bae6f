#include "workbench/workspace/fixture_backends.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "ir/diagnostic.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/core/json_values.h"
#include "runtime/vulkan/backend.h"
#include "runtime/vulkan/run.h"
#include "workbench/workspace/load.h"

namespace pb::workbench {

namespace fs = std::filesystem;

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

std::string fixture_backend_exemption(const nlohmann::json& fx) {
  if (fx.contains("expect") && fx["expect"].contains("error")) {
    std::string stage = fx["expect"]["error"].value("stage", "");
    if (stage != "run") return fmt::format("a negative fixture: it fails at stage '{}', before any run", stage);
  }
  if (!fx.contains("inputs") && !fx.contains("inputs_file") && !fx.contains("run"))
    return "nothing to run: the fixture has no inputs";
  return {};
}

namespace {

nlohmann::json inputs_of(const nlohmann::json& fx, const fs::path& dir) {
  if (fx.contains("inputs_file")) {
    std::string rel = fx["inputs_file"].get<std::string>();
    return parse_json_text(read_file((dir / rel).string()), rel);
  }
  return fx.value("inputs", nlohmann::json::object());
}

runtime::Seeds seeds_of(const nlohmann::json& obj) {
  runtime::Seeds out;
  for (const auto& [name, v] : obj.items()) out.emplace_back(name, v.get<double>());
  return out;
}

bool forward_fixture(const nlohmann::json& fx) {
  return fx.contains("dual") || fx.contains("jvpcheck") || fx.contains("adjointcheck");
}

// The fixture's own request: its tangent run, its gradient run, or its plain run (of the kernel
// after the pipeline when the pipeline is not autodiff).
RunRequest fixture_request(const nlohmann::json& fx, const fs::path& dir, const std::string& path) {
  RunRequest req;
  req.inputs = inputs_of(fx, dir);
  req.inputs_name = path;
  req.kernel_name = path;
  req.options.max_steps = 20'000'000;
  std::string pipeline = fx.value("pipeline", "");
  if (fx.contains("run")) {
    const auto& run = fx["run"];
    req.options.f64 = run.value("f64", false);
    if (run.contains("seed_grad")) req.seed_grads = seeds_of(run["seed_grad"]);
  }
  if (!pipeline.empty() && forward_fixture(fx)) {
    req.mode = runtime::Mode::forward;
    req.pipeline = pipeline;
    // A "dual" run's seeds are its own, even none (the inputs' dual arrays are then the tangent).
    if (fx.contains("dual"))
      req.seed_duals = seeds_of(fx["dual"].value("seed", nlohmann::json::object()));
    else if (fx.contains("jvpcheck") && fx["jvpcheck"].contains("wrt"))
      for (const auto& name : fx["jvpcheck"]["wrt"]) req.seed_duals.emplace_back(name.get<std::string>(), 1.0);
  } else if (!pipeline.empty() && (fx.contains("grad") || fx.contains("gradcheck"))) {
    req.mode = runtime::Mode::reverse;
    req.pipeline = pipeline;
    if (fx.contains("grad")) req.seed_grads = seeds_of(fx["grad"].value("seed", nlohmann::json::object()));
    if (req.seed_grads.empty() && fx.contains("gradcheck"))
      req.seed_grads.emplace_back(fx["gradcheck"].at("loss").get<std::string>(), 1.0);
  }
  return req;
}

// A tangent request without seeds would compare zero tangents: seed every float field's dual,
// unless the fixture's "dual" run states its seeds (none: the inputs give the duals).
void seed_every_dual(PreparedRequest& p, const nlohmann::json& fx) {
  if (p.exec.mode != runtime::Mode::forward || !p.exec.dual_seeds.empty() || fx.contains("dual")) return;
  for (const ir::Field& f : p.derived->fields())
    if (f.dual && !f.primal && ir::is_float(f.dtype)) p.exec.dual_seeds.emplace_back(f.name, 1.0);
}

}  // namespace

std::unique_ptr<ir::Kernel> fixture_kernel(const nlohmann::json& fx, const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  auto k = fx.contains("kernel_text") ? parse_kernel_source(fx["kernel_text"].get<std::string>(), path)
                                      : load_kernel((dir / fx["kernel"].get<std::string>()).string());
  auto errors = ir::verify(*k);
  if (!errors.empty())
    throw UserError(fmt::format("the kernel does not verify: {}", errors.front().format()),
                    "a fixture whose kernel must not verify says so in expect.error (stage verify)");
  return k;
}

namespace {

// A plain pipeline (not autodiff) runs first: the backends run the kernel it leaves.
void apply_plain_pipeline(ir::Kernel& k, const RunRequest& req, const std::string& pipeline) {
  if (pipeline.empty() || req.mode != runtime::Mode::primal) return;
  passes::RunOptions ro;
  ro.capture = passes::Capture::none;
  auto run = passes::run_pipeline(k, passes::parse_pipeline(pipeline), ro);
  if (run.failed)
    throw UserError(fmt::format("the pipeline '{}' fails: {}", pipeline, run.records[run.failed_index].failure),
                    "a fixture whose pipeline must fail says so in expect.error (stage pass)");
}

// The hardware a kernel needs that the Vulkan device lacks ("" = none): a skip, not a failure.
std::string vulkan_lacks(const ir::Kernel& k, const BackendOptions& o) {
  const auto& device = runtime::vulkan::device_info(o.device);
  auto lowering = runtime::vulkan::lowering_for(k, device);
  if (lowering.float64 && !device.float64)
    return fmt::format("the Vulkan device \"{}\" lacks shaderFloat64 (the kernel uses f64)", device.name);
  if (lowering.int64 && !device.int64)
    return fmt::format("the Vulkan device \"{}\" lacks shaderInt64 (the kernel uses 64-bit integers)", device.name);
  return {};
}

// Replaces the interpreter's values of the arrays `known.expect` names by the declared ones.
void apply_declared_values(runtime::ExecutionResult& want, const KnownDifference& known, Backend b,
                           const std::string& path) {
  for (const auto& [name, data] : known.expect) {
    auto it = want.state.fields.find(name);
    std::string what = fmt::format("{}: backends.{}.expect.{}", path, backend_name(b), name);
    if (it == want.state.fields.end())
      throw UserError(fmt::format("{}: the kernel has no field '{}' with data", what, name),
                      "name a field or gradient field of the kernel");
    it->second = runtime::detail::read_buffer(data, it->second.dtype, it->second.shape, what);
  }
}

void compare_on(Backend b, const PreparedRequest& p, const runtime::ExecutionResult& want, const nlohmann::json& fx,
                const std::string& path, const BackendOptions& o, const Tolerances& tol,
                const std::vector<std::string>& order_dependent, FixtureBackendOutcome& out) {
  KnownDifference known = known_difference(fx, b);
  if (known.skips()) {
    out.skipped.push_back(fmt::format("{}: a known difference: {}", backend_name(b), known.reason));
    return;
  }
  if (b == Backend::vulkan) {
    const ir::Kernel& first = p.exec.mode == runtime::Mode::forward ? *p.derived : *p.exec.kernel;
    std::string lacks = vulkan_lacks(first, o);
    if (lacks.empty() && p.derived) lacks = vulkan_lacks(*p.derived, o);
    if (!lacks.empty()) {
      out.skipped.push_back("vulkan: " + lacks);
      return;
    }
  }
  for (const std::string& array : order_dependent)
    if (std::find(known.ignore.begin(), known.ignore.end(), array) == known.ignore.end()) {
      BackendDiff d = failed_row(
          b, fmt::format("'{}' depends on the order of parallel iterations (the interpreter gives other values when "
                         "they run shuffled), so a parallel backend's verdict would depend on thread timing; declare "
                         "it: \"backends\": {{\"{}\": {{\"known_difference\": \"WHY\", \"ignore\": [\"{}\"]}}}}",
                         array, backend_name(b), array));
      out.rows.push_back(std::move(d));
      out.passed = false;
    }
  Tolerances t = tol;
  if (known.rtol) t = {*known.rtol, *known.rtol, *known.rtol};
  runtime::ExecutionResult reference = want;
  apply_declared_values(reference, known, b, path);
  try {
    runtime::ExecutionResult got = execute_on(b, p, o);
    for (BackendDiff& d : diff_executions(b, reference, got, t, compare_parts(b, p, o))) {
      if (std::find(known.ignore.begin(), known.ignore.end(), d.array) != known.ignore.end()) continue;
      out.passed = out.passed && d.ok;
      out.values_compared += d.elements;
      out.rows.push_back(std::move(d));
    }
  } catch (const runtime::Refusal& e) {
    out.rows.push_back(failed_row(b, e.diagnostic().message, true));
    out.passed = false;
  } catch (const UserError& e) {
    out.rows.push_back(failed_row(b, e.diagnostic().message));
    out.passed = false;
  }
}

// A fixture whose run must fail: it must fail on every backend too.
void expect_failure_on(Backend b, const PreparedRequest& p, const nlohmann::json& fx, const BackendOptions& o,
                       FixtureBackendOutcome& out) {
  if (known_difference(fx, b).skips()) {
    out.skipped.push_back(fmt::format("{}: a known difference: {}", backend_name(b), known_difference(fx, b).reason));
    return;
  }
  try {
    execute_on(b, p, o);
    out.rows.push_back(failed_row(b, "the run succeeded, but the fixture's run must fail (expect.error, stage run)"));
    out.passed = false;
  } catch (const UserError& e) {
    BackendDiff d = failed_row(b, "fails as the interpreter does: " + e.diagnostic().message);
    d.ok = true;
    out.rows.push_back(std::move(d));
  }
}

}  // namespace

std::vector<std::string> order_dependent_arrays(const PreparedRequest& p, const runtime::ExecutionResult& want,
                                                const Tolerances& tol) {
  std::vector<std::string> out;
  PreparedRequest shuffled;
  shuffled.exec = p.exec;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    shuffled.exec.options.shuffle = true;
    shuffled.exec.options.seed = seed;
    runtime::ExecutionResult r;
    try {
      r = execute_on(Backend::interp, shuffled);
    } catch (const UserError&) {
      continue;  // an order that fails (an overflow, say) tells nothing about the values
    }
    for (const BackendDiff& d : diff_executions(Backend::interp, want, r, tol, {}))
      if (!d.ok && std::find(out.begin(), out.end(), d.array) == out.end()) out.push_back(d.array);
  }
  return out;
}

FixtureBackendOutcome check_fixture_on_backends(const std::string& path, const std::vector<Backend>& backends,
                                                const BackendOptions& o, const Tolerances& tol) {
  FixtureBackendOutcome out;
  nlohmann::json fx = parse_json_text(read_file(path), path);
  fs::path dir = fs::path(path).parent_path();
  if (std::string why = fixture_backend_exemption(fx); !why.empty()) {
    out.skipped.push_back(why);
    return out;
  }
  auto k = fixture_kernel(fx, path);
  RunRequest req = fixture_request(fx, dir, path);
  apply_plain_pipeline(*k, req, fx.value("pipeline", ""));
  PreparedRequest p = prepare_request(*k, req);
  seed_every_dual(p, fx);
  bool must_fail = fx.contains("expect") && fx["expect"].contains("error");
  std::optional<runtime::ExecutionResult> want;
  try {
    want = execute_on(Backend::interp, p, o);
  } catch (const UserError& e) {
    if (!must_fail) throw UserError(fmt::format("the interpreter fails: {}", e.diagnostic().message));
  }
  if (must_fail && want) throw UserError("the interpreter ran the fixture, whose run must fail (expect.error)");
  std::vector<std::string> order_dependent;
  bool compiled = std::any_of(backends.begin(), backends.end(), [](Backend b) { return b != Backend::interp; });
  if (want && compiled) order_dependent = order_dependent_arrays(p, *want, tol);
  for (Backend b : backends) {
    if (b == Backend::interp) continue;
    if (must_fail)
      expect_failure_on(b, p, fx, o, out);
    else
      compare_on(b, p, *want, fx, path, o, tol, order_dependent, out);
  }
  if (!must_fail && out.passed && out.values_compared == 0 && !out.rows.empty()) {
    out.passed = false;
    out.rows.push_back(
        failed_row(backends.back(), "nothing compared: a comparison that compares nothing did not pass"));
  }
  return out;
}

}  // namespace pb::workbench
