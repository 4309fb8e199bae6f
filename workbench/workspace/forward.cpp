#include "workbench/workspace/forward.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "ir/widen.h"
#include "runtime/core/state.h"
#include "workbench/workspace/execute.h"
#include "workbench/workspace/replay.h"

namespace pb::workbench {

namespace {

// Runs `k` on backend `b`; a run-time error becomes a RunFailure whose message starts with `what`.
// A compiled backend runs the widened kernel as written (f64 is its own type there): the
// interpreter-only options (f64 mode, decision tracing) apply on the interpreter.
runtime::RunResult run_step(const ir::Kernel& k, runtime::State& state, const runtime::RunOptions& options,
                            const std::string& what, Backend b = Backend::interp) {
  runtime::RunOptions on = options;
  if (b != Backend::interp) on.f64 = on.trace_decisions = false;
  runtime::Backend& backend = backend_for(b);
  try {
    return backend.launch(k, state, on);
  } catch (const runtime::Refusal&) {
    throw;
  } catch (const UserError& e) {
    Diagnostic d = e.diagnostic();
    d.message = what + (b == Backend::interp ? "" : fmt::format(" on {}", backend_name(b))) + ": " + d.message;
    throw RunFailure(UserError(d));
  }
}

// A compiled backend checks the kernel widened to f64; one that reinterprets f32 bits has none.
void require_widened(const std::unique_ptr<ir::Kernel>& wide, Backend b, const char* check) {
  if (wide || b == Backend::interp) return;
  throw runtime::Refusal(
      fmt::format("{} on {} runs the kernel widened to f64, and this kernel reinterprets the bits of an f32 value "
                  "(`cast_bits`), which has no f64 meaning",
                  check, backend_name(b)),
      "check it on the interpreter");
}

void zero(runtime::Buffer& b) {
  for (ir::Value& v : b.data) v = ir::Value::zero(v.kind());
}
// Every gradient and dual array of `s` set to 0.
void zero_companions(const ir::Kernel& k, runtime::State& s) {
  for (const ir::Field& f : k.fields())
    if (f.primal)
      if (auto it = s.fields.find(f.name); it != s.fields.end()) zero(it->second);
  for (runtime::ArgValue& a : s.args) {
    if (a.grad) zero(*a.grad);
    if (a.dual) zero(*a.dual);
  }
}

std::string element_name(const std::string& array, size_t flat, const ir::Shape& shape) {
  if (shape.empty()) return array;
  std::vector<int64_t> index(shape.size());
  auto rest = static_cast<int64_t>(flat);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  std::string s = array + "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

// A differentiable array's primal buffer, by output name.
runtime::Buffer& primal_array(const ir::Kernel& k, runtime::State& state, const std::string& name,
                              const std::string& role) {
  if (k.find_field(name)) {
    auto it = state.fields.find(name);
    if (it == state.fields.end())
      throw UserError(fmt::format("{}: the shape of field '{}' is unknown", role, name),
                      "declare its shape in the header or give it in the inputs");
    return it->second;
  }
  return *diff_array(k, state, name, role).primal;
}

// Float fields that have a dual in the tangent kernel, and float ndarrays, in order.
std::vector<std::string> dual_arrays(const ir::Kernel& dual, const runtime::State& state) {
  std::vector<std::string> out;
  for (const ir::Field& f : dual.fields())
    if (f.dual && !f.primal && ir::is_float(f.dtype)) out.push_back(f.name);
  for (const std::string& n : float_ndarray_names(state)) out.push_back(n);
  return out;
}

// The arrays among `names` that `k` stores to (store or atomic into a field or ndarray element).
std::vector<std::string> written_arrays(const ir::Kernel& k, const std::vector<std::string>& names) {
  std::set<std::string> written;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    const ir::Stmt* dest = nullptr;
    if (auto* st = ir::dyn_cast<ir::GlobalStoreStmt>(&s)) dest = st->dest();
    if (auto* at = ir::dyn_cast<ir::AtomicOpStmt>(&s)) dest = at->dest();
    if (auto* g = dest ? ir::dyn_cast<ir::GlobalPtrStmt>(dest) : nullptr) written.insert(k.field(g->field).name);
    if (auto* e = dest ? ir::dyn_cast<ir::ExternalPtrStmt>(dest) : nullptr)
      if (auto* a = ir::dyn_cast<ir::ArgLoadStmt>(e->base())) written.insert(fmt::format("arg{}", a->arg_index));
  });
  std::vector<std::string> out;
  for (const auto& n : names)
    if (written.count(n)) out.push_back(n);
  return out;
}

struct Path {
  uint64_t hash = 0, count = 0;
  explicit Path(const runtime::RunResult& r) : hash(r.decision_hash), count(r.decisions) {}
  bool operator==(const Path&) const = default;
};

void check_tolerances(double eps, double rel, double abs) {
  if (!(std::isfinite(eps) && eps > 0)) throw UserError(fmt::format("--eps {} must be a positive number", eps));
  if (!(std::isfinite(rel) && rel >= 0)) throw UserError(fmt::format("--rel {} must be a number >= 0", rel));
  if (!(std::isfinite(abs) && abs >= 0)) throw UserError(fmt::format("--abs {} must be a number >= 0", abs));
}

}  // namespace

std::unique_ptr<ir::Kernel> make_dual_kernel(const ir::Kernel& forward, const std::string& pipeline,
                                             const std::string& file) {
  passes::RunOptions opts;
  opts.capture = passes::Capture::none;
  auto r = replay(forward.clone(), pipeline, opts);
  if (!r.run.failed) return std::move(r.kernel);
  const auto& rec = r.run.records.at(r.run.failed_index);
  std::string msg = fmt::format("making the tangent kernel: pass '{}' (pass {} of '{}') failed: {}", rec.pass,
                                rec.index + 1, pipeline, rec.failure);
  if (rec.internal_error) throw InternalError(msg);
  throw UserError(
      msg, fmt::format("`passbench replay {} --passes='{}'` shows the IR before the failing pass", file, pipeline));
}

DualOutput run_with_duals(const ir::Kernel& forward, const std::string& pipeline, const RunRequest& req,
                          const std::vector<std::pair<std::string, double>>& seed_duals) {
  RunRequest r = req;
  r.mode = runtime::Mode::forward;
  r.pipeline = pipeline;
  r.seed_duals = seed_duals;
  PreparedRequest p = prepare_request(forward, r);
  runtime::ExecutionResult x = execute_on(req.backend, p);
  DualOutput out;
  out.printed = x.main().printed;
  out.values = execution_values(x);
  out.dual_text = ir::print_kernel(*p.derived);
  return out;
}

JvpcheckResult jvpcheck(const ir::Kernel& forward, const JvpcheckOptions& o) {
  check_tolerances(o.eps, o.rel, o.abs);
  JvpcheckResult result;
  std::unique_ptr<ir::Kernel> wide = ir::widen_f32_to_f64(forward);
  require_widened(wide, o.backend, "jvpcheck");
  const ir::Kernel& fwd = wide ? *wide : forward;
  auto dual = make_dual_kernel(fwd, o.pipeline, o.kernel_name);
  result.dual_text = ir::print_kernel(*make_dual_kernel(forward, o.pipeline, o.kernel_name));
  runtime::State base = state_from_inputs(*dual, o.inputs, o.inputs_name);
  runtime::widen_floats(base);
  zero_companions(*dual, base);
  std::vector<std::string> all = dual_arrays(*dual, base);
  // Neither named: the arrays the kernel writes are the outputs, the others the inputs.
  std::vector<std::string> written =
      o.wrt.empty() && o.out.empty() ? written_arrays(fwd, all) : std::vector<std::string>{};
  auto is_written = [&](const std::string& n) { return std::find(written.begin(), written.end(), n) != written.end(); };
  if (!o.wrt.empty()) {
    result.wrt = o.wrt;
  } else {
    for (const auto& n : all)
      if (!is_written(n) && std::find(o.out.begin(), o.out.end(), n) == o.out.end()) result.wrt.push_back(n);
  }
  for (const auto& n : all)
    if (o.out.empty() && std::find(result.wrt.begin(), result.wrt.end(), n) == result.wrt.end())
      result.out.push_back(n);
  if (!o.out.empty()) result.out = o.out;
  if (result.wrt.empty() || result.out.empty()) {
    std::string names = all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "));
    throw UserError(
        fmt::format("jvpcheck: no {} array to compare (the kernel's differentiable arrays: {})",
                    result.wrt.empty() ? "input" : "output", names),
        all.size() >= 2
            ? fmt::format("name them: passbench jvpcheck {} --wrt {} --out {}", o.kernel_name, all.front(), all.back())
            : "give the kernel a float field with a dual or gradient field (or a float ndarray) it reads, "
              "and one it writes");
  }
  for (const auto& n : result.wrt) dual_array(*dual, base, n, "--wrt");
  for (const auto& n : result.out) dual_array(*dual, base, n, "--out");

  runtime::RunOptions run_opts;
  run_opts.f64 = true;
  run_opts.trace_decisions = true;
  run_opts.max_steps = o.max_steps;
  runtime::State at = base;
  Path at_x(run_step(fwd, at, run_opts, "in the forward run"));

  for (const auto& wname : result.wrt) {
    size_t n_in = primal_array(*dual, base, wname, "--wrt").size();
    for (size_t i = 0; i < n_in; ++i) {
      runtime::State t = base;
      runtime::Buffer& seed = dual_array(*dual, t, wname, "--wrt");
      seed.data[i] = ir::Value::from_double(seed.dtype, 1.0);
      std::string wrt_name = element_name(wname, i, seed.shape);
      run_step(*dual, t, run_opts, fmt::format("in the tangent kernel with dual({}) = 1", wrt_name), o.backend);
      double xi = primal_array(*dual, base, wname, "--wrt").data[i].as_f64();
      double h = o.eps * std::max(1.0, std::abs(xi));
      runtime::State side[2] = {base, base};
      auto run_side = [&](int k) {
        double xs = k == 0 ? xi + h : xi - h;
        primal_array(*dual, side[k], wname, "--wrt").data[i] = ir::Value::make_f64(xs);
        return run_step(fwd, side[k], run_opts, fmt::format("in the forward run at {} = {}", wrt_name, xs));
      };
      const Path path[2] = {Path(run_side(0)), Path(run_side(1))};  // in this order: x + h, then x - h
      bool kink = path[0] != path[1] || path[0] != at_x;
      double step = (xi + h) - (xi - h);
      for (const auto& oname : result.out) {
        const runtime::Buffer& tangent = dual_array(*dual, t, oname, "--out");
        const runtime::Buffer& plus = primal_array(*dual, side[0], oname, "--out");
        const runtime::Buffer& minus = primal_array(*dual, side[1], oname, "--out");
        for (size_t j = 0; j < tangent.size(); ++j) {
          JvpElement e;
          e.out = element_name(oname, j, tangent.shape);
          e.wrt = wrt_name;
          e.analytic = tangent.data[j].as_f64();
          e.numeric = (plus.data[j].as_f64() - minus.data[j].as_f64()) / step;
          double scale = std::max(std::abs(e.analytic), std::abs(e.numeric));
          e.abs_error = std::abs(e.analytic - e.numeric);
          e.rel_error = scale > 0 ? e.abs_error / scale : (e.abs_error == 0 ? 0 : INFINITY);
          e.status = e.abs_error <= o.abs + o.rel * scale ? GradStatus::ok : GradStatus::mismatch;
          if (kink) {
            e.status = GradStatus::kink;
            ++result.kinks;
          } else {
            ++result.compared;
            result.mismatches += e.status == GradStatus::mismatch;
            result.max_abs_error = std::max(result.max_abs_error, e.abs_error);
            result.max_rel_error = std::max(result.max_rel_error, e.rel_error);
          }
          result.elements.push_back(std::move(e));
        }
      }
    }
  }
  return result;
}

bool AdjointcheckResult::passed() const {
  if (trials.empty() || touched == 0) return false;
  return std::all_of(trials.begin(), trials.end(), [](const AdjointTrial& t) { return t.ok; });
}

AdjointcheckResult adjointcheck(const ir::Kernel& forward, const AdjointcheckOptions& o) {
  check_tolerances(1, o.rel, o.abs);
  if (o.trials < 1) throw UserError(fmt::format("--trials {} must be at least 1", o.trials));
  AdjointcheckResult result;
  std::unique_ptr<ir::Kernel> wide = ir::widen_f32_to_f64(forward);
  require_widened(wide, o.backend, "adjointcheck");
  const ir::Kernel& fwd = wide ? *wide : forward;
  auto dual = make_dual_kernel(fwd, o.forward_pipeline, o.kernel_name);
  auto reverse = make_reverse_kernel(fwd, o.reverse_pipeline, o.kernel_name);
  runtime::State base = state_from_inputs(*dual, o.inputs, o.inputs_name);
  runtime::widen_floats(base);
  zero_companions(*dual, base);
  for (const ir::Field& f : fwd.fields())
    if (f.grad && !f.primal && ir::is_float(f.dtype)) result.arrays.push_back(f.name);
  for (const std::string& n : float_ndarray_names(base)) result.arrays.push_back(n);
  if (result.arrays.empty())
    throw UserError("adjointcheck: the kernel has no differentiable array",
                    "give a float field a gradient field (`field x : f32[N] grad x_grad`) or pass a float ndarray");

  runtime::RunOptions run_opts;
  run_opts.f64 = true;
  run_opts.max_steps = o.max_steps;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int trial = 0; trial < o.trials; ++trial) {
    runtime::State tangent = base, adjoint = base;
    std::vector<std::vector<double>> v, w;
    for (const auto& name : result.arrays) {
      runtime::Buffer& d = dual_array(*dual, tangent, name, "adjointcheck");
      v.emplace_back(d.size());
      w.emplace_back(d.size());
      for (size_t i = 0; i < d.size(); ++i) {
        v.back()[i] = uniform(rng);
        w.back()[i] = uniform(rng);
        d.data[i] = ir::Value::from_double(d.dtype, v.back()[i]);
      }
    }
    run_step(*dual, tangent, run_opts, "in the tangent kernel", o.backend);
    run_step(fwd, adjoint, run_opts, "in the forward run", o.backend);
    for (size_t a = 0; a < result.arrays.size(); ++a) {
      runtime::Buffer& g = *diff_array(fwd, adjoint, result.arrays[a], "adjointcheck").grad;
      for (size_t i = 0; i < g.size(); ++i) g.data[i] = ir::Value::from_double(g.dtype, w[a][i]);
    }
    run_step(*reverse, adjoint, run_opts, "in the reverse kernel", o.backend);
    AdjointTrial t;
    double abs_fwd = 0, abs_rev = 0;
    for (size_t a = 0; a < result.arrays.size(); ++a) {
      const runtime::Buffer& jv = dual_array(*dual, tangent, result.arrays[a], "adjointcheck");
      const runtime::Buffer& jtw = *diff_array(fwd, adjoint, result.arrays[a], "adjointcheck").grad;
      for (size_t i = 0; i < jv.size(); ++i) {
        double f = w[a][i] * jv.data[i].as_f64(), r = jtw.data[i].as_f64() * v[a][i];
        t.forward += f;
        t.reverse += r;
        abs_fwd += std::abs(f);
        abs_rev += std::abs(r);
        result.touched += jv.data[i].as_f64() != v[a][i] || jtw.data[i].as_f64() != w[a][i];
      }
      if (trial == 0) result.elements += jv.size();
    }
    t.scale = std::max(abs_fwd, abs_rev);
    t.ok = std::abs(t.forward - t.reverse) <= o.abs + o.rel * t.scale;  // NaN: not ok
    result.trials.push_back(t);
  }
  return result;
}

}  // namespace pb::workbench
