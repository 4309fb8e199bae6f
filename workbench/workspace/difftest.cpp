#include "workbench/workspace/difftest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <variant>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/visitor.h"
#include "workbench/workspace/fixture_backends.h"
#include "workbench/workspace/forward.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/workspace.h"

namespace pb::workbench {

namespace {

constexpr size_t kElementsListed = 10;  // in a finding's report

OracleOutcome outcome(const std::string& oracle, Verdict v, size_t compared, std::string summary,
                      std::string report = {}) {
  return OracleOutcome{oracle, v, compared, std::move(summary), std::move(report)};
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

RunRequest base_request(const DifftestSubject& s) {
  RunRequest req;
  req.inputs = s.inputs;
  req.inputs_name = s.inputs_name;
  req.kernel_name = s.kernel_name;
  return req;
}

bool has_gradient_fields(const ir::Kernel& k) {
  for (const ir::Field& f : k.fields())
    if (f.grad && !f.primal && ir::is_float(f.dtype)) return true;
  return false;
}

// The loss gradcheck differentiates: the subject's, else the first field with a gradient that a
// store or atomic writes.
std::string loss_field(const DifftestSubject& s) {
  if (!s.loss.empty()) return s.loss;
  const ir::Kernel& k = *s.kernel;
  std::string found;
  ir::walk(k.root(), [&](const ir::Stmt& st) {
    if (!found.empty() || (st.kind() != ir::StmtKind::GlobalStore && st.kind() != ir::StmtKind::AtomicOp)) return;
    const ir::Stmt* dest = st.operand(0);
    if (!dest || dest->kind() != ir::StmtKind::GlobalPtr) return;
    const ir::Field& f = k.field(static_cast<const ir::GlobalPtrStmt*>(dest)->field);
    if (f.grad && !f.primal && ir::is_float(f.dtype)) found = f.name;
  });
  return found;
}

// What a backend's trouble means for an oracle: absent, refused by declaration, or a failure.
OracleOutcome guarded(const std::string& oracle, const std::function<OracleOutcome()>& body) {
  try {
    return body();
  } catch (const runtime::BackendAbsent& e) {
    return outcome(oracle, Verdict::absent, 0, first_line(e.diagnostic().message));
  } catch (const runtime::Refusal& e) {
    return outcome(oracle, Verdict::refused, 0, first_line(e.diagnostic().message));
  } catch (const RunFailure& e) {
    return outcome(oracle, Verdict::fail, 0, "run failed: " + first_line(e.diagnostic().message),
                   e.diagnostic().message);
  } catch (const UserError& e) {
    // A pipeline that refuses the kernel (reverse_ad on a kernel it cannot differentiate, ...).
    return outcome(oracle, Verdict::refused, 0, first_line(e.diagnostic().message));
  } catch (const InternalError& e) {
    return outcome(oracle, Verdict::fail, 0, std::string("internal error: ") + first_line(e.what()), e.what());
  }
}

// The interpreter's primal run must succeed before anything is compared with it.
std::optional<OracleOutcome> primal_refusal(const std::string& oracle, const DifftestSubject& s) {
  try {
    run_primal(*s.kernel, base_request(s));
    return std::nullopt;
  } catch (const RunFailure& e) {
    return outcome(oracle, Verdict::refused, 0,
                   "the kernel fails on the interpreter: " + first_line(e.diagnostic().message));
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The arrays of `p` whose values depend on the order of parallel iterations: a race, where no
// backend's answer is wrong and none is the answer.
std::vector<std::string> order_dependent(const PreparedRequest& p, const DifftestOptions& o) {
  return order_dependent_arrays(p, execute_on(Backend::interp, p), o.tolerances);
}

// A gradient oracle has nothing to check when the kernel races: with a racing primal the loss has
// no derivative; with a racing reverse kernel (several iterations store one element, and each
// store's adjoint reads and clears its gradient) a parallel backend's gradient depends on timing.
std::optional<OracleOutcome> race_refusal(const std::string& oracle, Backend b, const DifftestSubject& s,
                                          const DifftestOptions& o) {
  RunRequest req = base_request(s);
  std::vector<std::string> racing = order_dependent(prepare_request(*s.kernel, req), o);
  if (!racing.empty())
    return outcome(oracle, Verdict::refused, 0,
                   fmt::format("the result depends on the order of parallel iterations ({})", joined(racing)));
  if (b == Backend::interp) return std::nullopt;
  req.mode = runtime::Mode::reverse;
  for (const ir::Field& f : s.kernel->fields())
    if (f.grad && !f.primal && ir::is_float(f.dtype)) req.seed_grads.emplace_back(f.name, 1.0);
  racing = order_dependent(prepare_request(*s.kernel, req), o);
  if (!racing.empty())
    return outcome(
        oracle, Verdict::refused, 0,
        fmt::format("the reverse kernel's result depends on the order of parallel iterations ({})", joined(racing)));
  return std::nullopt;
}

OracleOutcome backends_oracle(const std::string& oracle, Backend b, const DifftestSubject& s,
                              const DifftestOptions& o) {
  if (auto r = primal_refusal(oracle, s)) return *r;
  PreparedRequest p = prepare_request(*s.kernel, base_request(s));
  std::vector<std::string> racing = order_dependent(p, o);
  Comparison c = compare_backends(p, {b}, o.backend_options, o.tolerances);
  for (const BackendDiff& d : c.rows) {
    if (!d.note.empty()) return outcome(oracle, Verdict::absent, 0, d.note);
    if (d.refused) return outcome(oracle, Verdict::refused, 0, first_line(d.error));
  }
  // A racing array has no one answer to compare: it is left out, and said so.
  std::erase_if(c.rows,
                [&](const BackendDiff& d) { return std::find(racing.begin(), racing.end(), d.array) != racing.end(); });
  c.values_compared = 0;
  for (const BackendDiff& d : c.rows) c.values_compared += d.elements;
  std::string table = format_backend_table(c.rows);
  std::string summary = comparison_summary(c.rows);
  if (!racing.empty()) summary += fmt::format("; not compared, racing between parallel iterations: {}", joined(racing));
  Verdict v = c.passed() ? Verdict::pass : c.values_compared == 0 ? Verdict::empty : Verdict::fail;
  for (const BackendDiff& d : c.rows)
    if (!d.error.empty()) v = Verdict::fail;
  return outcome(oracle, v, c.values_compared, summary, table);
}

// Runs a finite-difference check. A run at x + h or x - h that fails where the run at x did not
// (an integer division by a value cast from x, say) left the kernel's domain: finite differences
// have nothing to say there, as at a kink.
template <class Check>
auto finite_differences(const std::string& oracle, Check check) -> std::variant<decltype(check()), OracleOutcome> {
  try {
    return check();
  } catch (const RunFailure& e) {
    const std::string& m = e.diagnostic().message;
    if (!m.starts_with("in the forward run at ")) throw;
    return outcome(oracle, Verdict::refused, 0,
                   "a finite-difference step leaves the kernel's domain: " + first_line(m));
  }
}

bool finite(double a, double b) { return std::isfinite(a) && std::isfinite(b); }

// Elements whose analytic or numeric value is not finite are not compared: the loss is not
// differentiable there (sqrt or log of a negative, an overflow), and finite differences say nothing.
template <class Element>
OracleOutcome element_verdict(const std::string& oracle, const std::vector<Element>& elements,
                              const std::function<std::string(const Element&)>& name) {
  size_t compared = 0, mismatches = 0, non_finite = 0, kinks = 0;
  std::string report;
  for (const Element& e : elements) {
    if (e.status == GradStatus::kink) {
      ++kinks;
      continue;
    }
    if (!finite(e.analytic, e.numeric)) {
      ++non_finite;
      continue;
    }
    ++compared;
    if (e.status != GradStatus::mismatch) continue;
    if (mismatches++ < kElementsListed)
      report += fmt::format("  {}: analytic {:.10g}, numeric {:.10g}, rel err {:.2e}\n", name(e), e.analytic, e.numeric,
                            e.rel_error);
  }
  std::string summary =
      fmt::format("{} compared, {} mismatch(es), {} kink(s), {} not finite", compared, mismatches, kinks, non_finite);
  Verdict v = mismatches ? Verdict::fail : compared ? Verdict::pass : Verdict::empty;
  return outcome(oracle, v, compared, summary, report);
}

OracleOutcome gradcheck_oracle(const std::string& oracle, Backend b, const DifftestSubject& s,
                               const DifftestOptions& o) {
  if (!has_gradient_fields(*s.kernel)) return outcome(oracle, Verdict::refused, 0, "no float field has a gradient");
  std::string loss = loss_field(s);
  if (loss.empty()) return outcome(oracle, Verdict::refused, 0, "no field with a gradient is written (no loss)");
  if (auto r = primal_refusal(oracle, s)) return *r;
  if (auto r = race_refusal(oracle, b, s, o)) return *r;
  GradcheckOptions go;
  go.loss = loss;
  go.inputs = s.inputs;
  go.inputs_name = s.inputs_name;
  go.kernel_name = s.kernel_name;
  go.backend = b;
  auto checked = finite_differences(oracle, [&] { return gradcheck(*s.kernel, go); });
  if (auto* refused = std::get_if<OracleOutcome>(&checked)) return *refused;
  const GradcheckResult& r = std::get<GradcheckResult>(checked);
  OracleOutcome out = element_verdict<GradElement>(
      oracle, r.elements, [](const GradElement& e) { return fmt::format("d{}/d{}", "loss", element_name(e)); });
  out.summary = fmt::format("d(sum {})/d({} field(s)): {}", loss, r.wrt.size(), out.summary);
  return out;
}

OracleOutcome jvpcheck_oracle(const std::string& oracle, Backend b, const DifftestSubject& s,
                              const DifftestOptions& o) {
  if (!has_gradient_fields(*s.kernel)) return outcome(oracle, Verdict::refused, 0, "no float field has a gradient");
  std::string loss = loss_field(s);
  if (loss.empty()) return outcome(oracle, Verdict::refused, 0, "no field with a gradient is written (no output)");
  if (auto r = primal_refusal(oracle, s)) return *r;
  if (auto r = race_refusal(oracle, b, s, o)) return *r;
  JvpcheckOptions jo;
  jo.out = {loss};
  jo.inputs = s.inputs;
  jo.inputs_name = s.inputs_name;
  jo.kernel_name = s.kernel_name;
  jo.backend = b;
  auto checked = finite_differences(oracle, [&] { return jvpcheck(*s.kernel, jo); });
  if (auto* refused = std::get_if<OracleOutcome>(&checked)) return *refused;
  const JvpcheckResult& r = std::get<JvpcheckResult>(checked);
  OracleOutcome out = element_verdict<JvpElement>(
      oracle, r.elements, [](const JvpElement& e) { return fmt::format("d{}/d{}", e.out, e.wrt); });
  out.summary = fmt::format("d({})/d({} array(s)): {}", loss, r.wrt.size(), out.summary);
  return out;
}

OracleOutcome adjointcheck_oracle(const std::string& oracle, Backend b, const DifftestSubject& s,
                                  const DifftestOptions& o) {
  if (!has_gradient_fields(*s.kernel)) return outcome(oracle, Verdict::refused, 0, "no float field has a gradient");
  if (auto r = primal_refusal(oracle, s)) return *r;
  if (auto r = race_refusal(oracle, b, s, o)) return *r;
  AdjointcheckOptions ao;
  ao.inputs = s.inputs;
  ao.inputs_name = s.inputs_name;
  ao.kernel_name = s.kernel_name;
  ao.backend = b;
  AdjointcheckResult r = adjointcheck(*s.kernel, ao);
  size_t compared = 0, mismatches = 0, non_finite = 0;
  std::string report;
  for (size_t i = 0; i < r.trials.size(); ++i) {
    const AdjointTrial& t = r.trials[i];
    if (!finite(t.forward, t.reverse)) {
      ++non_finite;
      continue;
    }
    ++compared;
    if (t.ok) continue;
    ++mismatches;
    report += fmt::format("  trial {}: w.(Jv) {:.17g}, (J^T w).v {:.17g}, scale {:.3g}\n", i + 1, t.forward, t.reverse,
                          t.scale);
  }
  if (r.touched == 0) compared = 0;  // nothing moved: the identity held trivially
  std::string summary =
      fmt::format("{} trial(s) compared, {} mismatch(es), {} not finite, {} touched element(s){}", compared, mismatches,
                  non_finite, r.touched, r.touched ? "" : " (the kernels changed no tangent and no adjoint)");
  Verdict v = mismatches ? Verdict::fail : compared ? Verdict::pass : Verdict::empty;
  return outcome(oracle, v, compared, summary, report);
}

OracleOutcome pipeline_oracle(const std::string& oracle, const std::string& pipeline, const DifftestSubject& s,
                              const DifftestOptions& o) {
  if (auto r = primal_refusal(oracle, s)) return *r;
  RunRequest req = base_request(s);
  RunOutput before = run_primal(*s.kernel, req);
  passes::RunOptions ro;
  ro.capture = passes::Capture::none;
  ReplayResult r = replay(s.kernel->clone(), pipeline, ro);
  if (r.run.failed) {
    const passes::PassRecord& rec = r.run.records[r.run.failed_index];
    bool broke = rec.internal_error || !rec.verify_errors.empty();
    std::string why = fmt::format("{} {}: {}", rec.spec, broke ? "broke the kernel" : "refuses it",
                                  first_line(rec.verify_errors.empty() ? rec.failure : rec.verify_errors.front()));
    return outcome(oracle, broke ? Verdict::fail : Verdict::refused, 0, why, rec.failure);
  }
  RunOutput after;
  try {
    after = run_primal(*r.kernel, req);
  } catch (const RunFailure& e) {
    return outcome(oracle, Verdict::fail, 0, "the kernel after it fails: " + first_line(e.diagnostic().message),
                   e.diagnostic().message);
  }
  BisectRow row;
  compare_run_values(before.values, after.values, Tolerance{o.tolerances.f32, 1e-8}, row);
  if (row.compared == 0) return outcome(oracle, Verdict::empty, 0, "no field or ndarray value to compare");
  std::string summary = row.differing ? fmt::format("{} of {} value(s) differ; first {}", row.differing, row.compared,
                                                    row.first_difference)
                                      : fmt::format("{} value(s) equal", row.compared);
  return outcome(oracle, row.differing ? Verdict::fail : Verdict::pass, row.compared, summary, summary + "\n");
}

bool has_differentiable_arrays(const ir::Kernel& k) {
  if (has_gradient_fields(k)) return true;
  for (const ir::ArgDecl& a : k.args)
    if (a.ndarray && ir::is_float(a.dtype)) return true;
  return false;
}

// The static check must not call a kernel fine whose run breaks the rule.
OracleOutcome global_access_oracle(const std::string& oracle, const DifftestSubject& s) {
  if (!has_differentiable_arrays(*s.kernel))
    return outcome(oracle, Verdict::refused, 0, "no differentiable field or ndarray: the rule covers only those");
  if (auto r = primal_refusal(oracle, s)) return *r;
  passes::RunOptions ro;
  ro.capture = passes::Capture::none;
  ReplayResult r = replay(s.kernel->clone(), "check_global_access", ro);
  std::string static_verdict = "fine";
  if (r.run.failed) {
    const passes::PassRecord& rec = r.run.records[r.run.failed_index];
    if (rec.internal_error) return outcome(oracle, Verdict::fail, 0, "check_global_access: " + first_line(rec.failure));
    static_verdict = "refused";
  } else if (auto f = r.run.records.front().stats.find("findings");
             f != r.run.records.front().stats.end() && f->second > 0) {
    static_verdict = fmt::format("{} finding(s)", f->second);
  }
  RunRequest req = base_request(s);
  req.options.check_global_access = true;
  std::string dynamic_verdict = "fine", message;
  try {
    run_primal(*s.kernel, req);
  } catch (const RunFailure& e) {
    message = e.diagnostic().message;
    if (message.find("global data access rule") == std::string::npos)
      return outcome(oracle, Verdict::fail, 0, "the checked run fails otherwise: " + first_line(message), message);
    dynamic_verdict = "violation";
  }
  std::string summary = fmt::format("static {}, dynamic {}", static_verdict, dynamic_verdict);
  bool missed = dynamic_verdict == "violation" && static_verdict == "fine";
  return outcome(oracle, missed ? Verdict::fail : Verdict::pass, 1,
                 missed ? summary + ": the static check missed a violation" : summary, message);
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "PASS";
    case Verdict::fail:
      return "FAIL";
    case Verdict::refused:
      return "REFUSED";
    case Verdict::absent:
      return "ABSENT";
    case Verdict::empty:
      return "EMPTY";
  }
  PB_ASSERT(false, "a verdict without a name");
  return "";
}

void VerdictCounts::add(Verdict v) {
  switch (v) {
    case Verdict::pass:
      ++pass;
      break;
    case Verdict::fail:
      ++fail;
      break;
    case Verdict::refused:
      ++refused;
      break;
    case Verdict::absent:
      ++absent;
      break;
    case Verdict::empty:
      ++empty;
      break;
  }
}

const std::vector<std::string>& difftest_pipelines() {
  static const std::vector<std::string> pipelines = {
      "simplify",
      "dce",
      "demote_atomics",
      "scalarize",
      "lower_access",
      "offload",
      "simplify,dce",
      "simplify,demote_atomics,dce",
      "scalarize,lower_access,offload",
      "cleanup,offload,simplify,dce",
  };
  return pipelines;
}

std::vector<std::string> oracle_names(const std::vector<Backend>& backends) {
  std::vector<std::string> names;
  for (Backend b : backends)
    if (b != Backend::interp) names.push_back(fmt::format("backends:{}", backend_name(b)));
  for (const char* check : {"gradcheck", "adjointcheck"})
    for (Backend b : backends) names.push_back(fmt::format("{}:{}", check, backend_name(b)));
  names.push_back("jvpcheck:interp");
  for (const std::string& p : difftest_pipelines()) names.push_back("pipeline:" + p);
  names.push_back("global-access");
  return names;
}

OracleOutcome run_oracle(const std::string& oracle, const DifftestSubject& s, const DifftestOptions& o) {
  PB_ASSERT(s.kernel, "run_oracle needs a kernel");
  auto colon = oracle.find(':');
  std::string kind = oracle.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : oracle.substr(colon + 1);
  std::optional<Backend> b = backend_from_name(arg);
  std::function<OracleOutcome()> body;
  if (kind == "backends" && b && *b != Backend::interp)
    body = [&] { return backends_oracle(oracle, *b, s, o); };
  else if (kind == "gradcheck" && b)
    body = [&] { return gradcheck_oracle(oracle, *b, s, o); };
  else if (kind == "adjointcheck" && b)
    body = [&] { return adjointcheck_oracle(oracle, *b, s, o); };
  else if (kind == "jvpcheck" && b)
    body = [&] { return jvpcheck_oracle(oracle, *b, s, o); };
  else if (kind == "pipeline" && !arg.empty())
    body = [&] { return pipeline_oracle(oracle, arg, s, o); };
  else if (kind == "global-access" && arg.empty())
    body = [&] { return global_access_oracle(oracle, s); };
  else
    throw UserError(fmt::format("difftest: no oracle '{}'", oracle), "the oracles are listed in docs/testing.md");
  return guarded(oracle, body);
}

std::vector<OracleOutcome> run_oracles(const DifftestSubject& s, const DifftestOptions& o) {
  std::vector<OracleOutcome> out;
  for (const std::string& name : oracle_names(o.backends)) out.push_back(run_oracle(name, s, o));
  return out;
}

}  // namespace pb::workbench
