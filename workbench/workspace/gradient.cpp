#include "workbench/workspace/gradient.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "ir/widen.h"
#include "runtime/core/state.h"
#include "workbench/workspace/execute.h"
#include "workbench/workspace/replay.h"

namespace pb::workbench {

namespace {

// Runs `k` on the interpreter; a run-time error becomes a RunFailure whose message starts with `what`.
runtime::RunResult run_step(const ir::Kernel& k, runtime::State& state, const runtime::RunOptions& options,
                            const std::string& what) {
  try {
    return backend_for(Backend::interp).launch(k, state, options);
  } catch (const UserError& e) {
    Diagnostic d = e.diagnostic();
    d.message = what + ": " + d.message;
    throw RunFailure(UserError(d));
  }
}

double sum(const runtime::Buffer& b) {
  double s = 0;
  for (const ir::Value& v : b.data) s += v.as_f64();
  return s;
}

std::vector<int64_t> unflatten(size_t flat, const ir::Shape& shape) {
  std::vector<int64_t> index(shape.size());
  auto rest = static_cast<int64_t>(flat);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  return index;
}

// The arrays to differentiate with respect to: --wrt, else every float field with a gradient
// field and every float ndarray argument, the loss aside.
std::vector<std::string> arrays_to_check(const ir::Kernel& k, runtime::State& state, const GradcheckOptions& o) {
  if (!o.wrt.empty()) {
    for (const auto& name : o.wrt) diff_array(k, state, name, "--wrt");
    return o.wrt;
  }
  std::vector<std::string> wrt;
  for (const ir::Field& f : k.fields())
    if (f.grad && !f.primal && f.name != o.loss && ir::is_float(f.dtype)) wrt.push_back(f.name);
  for (const std::string& name : float_ndarray_names(state))
    if (name != o.loss) wrt.push_back(name);
  if (wrt.empty())
    throw UserError(fmt::format("nothing to differentiate with respect to: no float field other than '{}' has "
                                "a gradient field, and no float ndarray argument is given",
                                o.loss),
                    "declare a gradient field for an input (`field x : f32[N] grad x_grad`) or name it with --wrt");
  return wrt;
}

void check_options(const GradcheckOptions& o) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  auto non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!positive(o.eps))
    throw UserError(fmt::format("--eps {} must be a positive number", o.eps), "for example --eps 1e-6");
  if (!non_negative(o.rel))
    throw UserError(fmt::format("--rel {} must be a number >= 0", o.rel), "for example --rel 1e-5");
  if (!non_negative(o.abs))
    throw UserError(fmt::format("--abs {} must be a number >= 0", o.abs), "for example --abs 1e-8");
}

// The decisions of a traced run (runtime::RunOptions::trace_decisions).
struct Path {
  uint64_t hash = 0;
  uint64_t count = 0;
  explicit Path(const runtime::RunResult& r) : hash(r.decision_hash), count(r.decisions) {}
  bool operator==(const Path&) const = default;
};

void compare(GradElement& e, const GradcheckOptions& o) {
  double scale = std::max(std::abs(e.analytic), std::abs(e.numeric));
  e.abs_error = std::abs(e.analytic - e.numeric);
  e.rel_error = scale > 0 ? e.abs_error / scale : (e.abs_error == 0 ? 0 : INFINITY);
  // Written so that a NaN on either side is a mismatch.
  e.status = e.abs_error <= o.abs + o.rel * scale ? GradStatus::ok : GradStatus::mismatch;
}

}  // namespace

std::string reverse_pipeline_for_access_rule(const std::string& pipeline, const std::string& global_access) {
  if (global_access == "error") return pipeline;
  PB_ASSERT(global_access == "warn", "--global-access takes error or warn");
  if (pipeline == kDefaultReversePipeline) return "reverse_ad{global_access=warn}";
  throw UserError(
      fmt::format("--global-access=warn applies to the default pipeline, and --passes gives '{}'", pipeline),
      "write the option into the pipeline: reverse_ad{global_access=warn}, or "
      "check_global_access{findings=warn} where the pipeline names its stages");
}

std::unique_ptr<ir::Kernel> make_reverse_kernel(const ir::Kernel& forward, const std::string& pipeline,
                                                const std::string& file, std::vector<std::string>* warnings,
                                                bool* access_unproven) {
  passes::RunOptions opts;
  opts.capture = passes::Capture::none;
  auto r = replay(forward.clone(), pipeline, opts);
  if (warnings)
    for (const auto& rec : r.run.records)
      for (const auto& w : rec.warnings) warnings->push_back(rec.pass + ": " + w);
  if (access_unproven)
    for (const auto& rec : r.run.records)
      if (auto f = rec.stats.find("findings"); rec.pass == "check_global_access" && f != rec.stats.end() &&
                                               f->second > 0 && rec.spec.find("findings=warn") == std::string::npos)
        *access_unproven = true;
  if (!r.run.failed) return std::move(r.kernel);
  const auto& rec = r.run.records.at(r.run.failed_index);
  std::string msg = fmt::format("making the reverse kernel: pass '{}' (pass {} of '{}') failed: {}", rec.pass,
                                rec.index + 1, pipeline, rec.failure);
  if (rec.internal_error) throw InternalError(msg);
  std::string remedy =
      fmt::format("`passbench replay {} --passes='{}'` shows the IR before the failing pass", file, pipeline);
  if (rec.rule_violation) throw RuleViolation(msg, remedy);
  throw UserError(msg, remedy);
}

GradientOutput run_with_gradients(const ir::Kernel& forward, const std::string& pipeline, const RunRequest& req) {
  RunRequest r = req;
  r.mode = runtime::Mode::reverse;
  r.pipeline = pipeline;
  PreparedRequest p = prepare_request(forward, r);
  runtime::ExecutionResult x = execute_on(req.backend, p);
  GradientOutput out;
  for (const auto& l : x.launches) out.printed += l.result.printed;
  out.values = execution_values(x);
  out.reverse_text = ir::print_kernel(*p.derived);
  out.unexercised_stacks = unexercised_stacks(*p.derived, x.last());
  out.stacks = stack_uses(x);
  out.warnings = p.warnings;
  return out;
}

std::string_view status_name(GradStatus s) {
  switch (s) {
    case GradStatus::ok:
      return "ok";
    case GradStatus::mismatch:
      return "mismatch";
    case GradStatus::kink:
      return "kink";
  }
  return "?";
}

std::string element_name(const GradElement& e) {
  if (e.index.empty()) return e.field;
  std::string s = e.field + "[";
  for (size_t d = 0; d < e.index.size(); ++d) s += (d ? ", " : "") + std::to_string(e.index[d]);
  return s + "]";
}

GradcheckResult gradcheck(const ir::Kernel& forward, const GradcheckOptions& o) {
  check_options(o);
  GradcheckResult result;
  runtime::State base = state_from_inputs(forward, o.inputs, o.inputs_name);
  diff_array(forward, base, o.loss, "--loss");
  result.wrt = arrays_to_check(forward, base, o);
  bool access_unproven = false;
  auto reverse = make_reverse_kernel(forward, o.pipeline, o.kernel_name, &result.warnings, &access_unproven);
  result.reverse_text = ir::print_kernel(*reverse);
  // Both sides in f64: the kernel itself widened, so that the pipeline's constant folding is
  // in f64 too (folding an f32 kernel rounds to f32, which the f64 forward run does not).
  std::unique_ptr<ir::Kernel> wide = ir::widen_f32_to_f64(forward);
  if (wide) reverse = make_reverse_kernel(*wide, o.pipeline, o.kernel_name);
  const ir::Kernel& fwd = wide ? *wide : forward;

  for (const ir::Field& f : forward.fields())  // the analytic gradient accumulates from zero
    if (f.grad)
      if (auto it = base.fields.find(forward.field(*f.grad).name); it != base.fields.end())
        for (ir::Value& v : it->second.data) v = ir::Value::zero(v.kind());
  for (runtime::ArgValue& a : base.args)
    if (a.grad)
      for (ir::Value& v : a.grad->data) v = ir::Value::zero(v.kind());
  runtime::widen_floats(base);

  runtime::RunOptions run_opts;
  run_opts.f64 = true;
  run_opts.trace_decisions = true;
  run_opts.max_steps = o.max_steps;
  runtime::State analytic = base;
  Path at_x(run_step(fwd, analytic, run_opts, "in the forward run"));
  result.loss = sum(*diff_array(fwd, analytic, o.loss, "--loss").primal);
  if (o.backend == Backend::interp) {
    PreparedRequest checked;
    checked.exec.kernel = &fwd;
    checked.exec.options.max_steps = o.max_steps;
    checked.access_unproven = access_unproven;
    check_unproven_access(checked, base);
    seed_gradients(fwd, analytic, {{o.loss, 1.0}});
    result.unexercised_stacks =
        unexercised_stacks(*reverse, run_step(*reverse, analytic, run_opts, "in the reverse kernel"));
  } else {
    // The same widened kernels run as written there: f64 is the kernel's own type, and the
    // decisions at x come from the interpreter's run above.
    PreparedRequest p;
    p.exec.mode = runtime::Mode::reverse;
    p.exec.kernel = &fwd;
    p.exec.derived = reverse.get();
    p.exec.grad_seeds = {{o.loss, 1.0}};
    p.exec.options.max_steps = o.max_steps;
    p.exec.stack_usage = backend_for(o.backend).capabilities().stack_usage;
    p.access_unproven = access_unproven;
    runtime::ExecutionResult x = execute_on(o.backend, p, base);
    analytic = std::move(x.state);
    if (p.exec.stack_usage) result.unexercised_stacks = unexercised_stacks(*reverse, x.last());
  }

  for (const auto& name : result.wrt) {
    const runtime::Buffer& x = *diff_array(fwd, base, name, "--wrt").primal;
    const runtime::Buffer& grad = *diff_array(fwd, analytic, name, "--wrt").grad;
    for (size_t i = 0; i < x.size(); ++i) {
      GradElement e;
      e.field = name;
      e.index = unflatten(i, x.shape);
      e.analytic = grad.data[i].as_f64();
      double xi = x.data[i].as_f64(), h = o.eps * std::max(1.0, std::abs(xi));
      double loss_at[2];
      auto run_side = [&](int side) {
        runtime::State s = base;
        double xs = side == 0 ? xi + h : xi - h;
        diff_array(fwd, s, name, "--wrt").primal->data[i] = ir::Value::make_f64(xs);
        auto what = fmt::format("in the forward run at {} = {} (x {} h)", element_name(e), xs, side == 0 ? "+" : "-");
        Path p(run_step(fwd, s, run_opts, what));
        loss_at[side] = sum(*diff_array(fwd, s, o.loss, "--loss").primal);
        return p;
      };
      const Path path[2] = {run_side(0), run_side(1)};  // in this order: x + h, then x - h
      // The actual step (x+h) - (x-h), which rounding may make differ from 2h.
      e.numeric = (loss_at[0] - loss_at[1]) / ((xi + h) - (xi - h));
      compare(e, o);
      // A kink between x-h and x+h, or x itself on an exceptional point (x == c).
      if (path[0] != path[1] || path[0] != at_x) {
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
  return result;
}

}  // namespace pb::workbench
