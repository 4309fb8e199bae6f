#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "ir/type_uses.h"
#include "workbench/workspace/fixture_replay.h"
#include "workbench/workspace/forward.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/run.h"

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

namespace pb::workbench::detail {

namespace {

// The request for the primal run beside a tangent run: the fields' "dual" inputs dropped, since
// the kernel as written lacks the dual fields make_dual infers (and no primal value reads one).
RunRequest without_field_duals(RunRequest req) {
  if (req.inputs.contains("fields") && req.inputs["fields"].is_object())
    for (auto& entry : req.inputs["fields"])
      if (entry.is_object()) entry.erase("dual");
  return req;
}

}  // namespace

// Forward-mode fixtures: the pipeline makes a tangent kernel. "dual" runs it with seeded duals
// (values are compared with expect.values, and its primal results must equal the kernel's own);
// "jvpcheck" compares every tangent with finite differences and "adjointcheck" cross-checks it
// with the reverse kernel; both must pass and compare something.
void forward_checks(const ir::Kernel& forward, const std::string& pipeline, const ordered_json& fx, const fs::path& dir,
                    Replay& r) {
  try {
    if (fx.contains("dual")) {
      RunRequest req;
      req.inputs = fixture_inputs(fx, dir);
      std::vector<std::pair<std::string, double>> seeds;
      const ordered_json given = fx["dual"].value("seed", ordered_json::object());
      for (const auto& [name, v] : given.items()) seeds.emplace_back(name, v.get<double>());
      auto out = run_with_duals(forward, pipeline, req, seeds);
      auto plain = run_primal(forward, without_field_duals(req)).values;
      for (const char* group : {"fields", "ndarrays"})
        if (plain.contains(group))
          for (const auto& [name, v] : plain[group].items())
            if (out.values[group][name]["data"] != v["data"])
              r.gradcheck_failures.push_back(fmt::format("the tangent kernel changed the primal values of '{}'", name));
      r.values = out.values;
      r.printed = out.printed;
    }
    if (fx.contains("jvpcheck")) {
      const auto& g = fx["jvpcheck"];
      JvpcheckOptions o;
      if (g.contains("wrt")) o.wrt = g["wrt"].get<std::vector<std::string>>();
      if (g.contains("out")) o.out = g["out"].get<std::vector<std::string>>();
      o.eps = g.value("eps", o.eps);
      o.rel = g.value("rel", o.rel);
      o.abs = g.value("abs", o.abs);
      o.inputs = fixture_inputs(fx, dir);
      o.pipeline = pipeline;
      auto result = jvpcheck(forward, o);
      if (result.compared == 0) {
        r.gradcheck_failures.push_back(fmt::format(
            "jvpcheck: nothing compared ({} element(s), {} kink(s)): a check that compares nothing did not pass",
            result.elements.size(), result.kinks));
      } else if (result.mismatches > 0) {
        std::string msg = fmt::format(
            "jvpcheck: {} of {} tangent elements differ from finite differences:", result.mismatches, result.compared);
        int shown = 0;
        for (const auto& e : result.elements)
          if (e.status == GradStatus::mismatch && shown++ < 5)
            msg += fmt::format("\n  d{}/d{}: tangent {:.9g}, numeric {:.9g} (rel {:.2e})", e.out, e.wrt, e.analytic,
                               e.numeric, e.rel_error);
        r.gradcheck_failures.push_back(msg);
      }
    }
    if (fx.contains("adjointcheck")) {
      const auto& g = fx["adjointcheck"];
      AdjointcheckOptions o;
      o.seed = g.value("seed", o.seed);
      o.trials = g.value("trials", o.trials);
      o.rel = g.value("rel", o.rel);
      o.abs = g.value("abs", o.abs);
      o.reverse_pipeline = g.value("reverse_pipeline", o.reverse_pipeline);
      o.inputs = fixture_inputs(fx, dir);
      o.forward_pipeline = pipeline;
      auto result = adjointcheck(forward, o);
      if (!result.passed()) {
        std::string msg = result.touched == 0
                              ? "adjointcheck: the kernels changed no tangent and no adjoint (nothing checked)"
                              : "adjointcheck: w . (J v) and (J^T w) . v differ:";
        for (const auto& t : result.trials)
          if (!t.ok)
            msg += fmt::format("\n  forward {:.17g}, reverse {:.17g}, scale {:.3g}", t.forward, t.reverse, t.scale);
        r.gradcheck_failures.push_back(msg);
      }
    }
  } catch (const UserError& e) {
    r.error_stage = "run";
    r.error = located_message(e);
  }
}

// "global_access": the global data access rule checked both ways on the kernel as written. Static:
// the check_global_access pass, after scalarize for a tensor kernel, with findings=warn so that the
// verdict tells a kernel reverse mode cannot differentiate ("refused") from a proven finding of the
// reference's rule ("violation", which the pass's default refuses too), "maybe", or "fine". Dynamic: a run with
// check_global_access on the fixture's inputs ("violation" or "fine"). A dynamic violation the
// static check calls fine is a failure.
void global_access_checks(const ir::Kernel& k, const ordered_json& fx, const fs::path& dir, Replay& r) {
  nlohmann::json out;
  passes::RunOptions opts;
  opts.capture = passes::Capture::none;
  bool tensor = ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); }).has_value();
  auto rr = workbench::replay(
      k.clone(), tensor ? "scalarize,check_global_access{findings=warn}" : "check_global_access{findings=warn}", opts);
  if (rr.run.failed && rr.run.records.at(rr.run.failed_index).pass != "check_global_access") {
    throw UserError(rr.run.records.at(rr.run.failed_index).failure);
  } else if (rr.run.failed) {
    out["static"] = "refused";
  } else {
    const auto& stats = rr.run.records.back().stats;
    out["static"] = stats.at("proven") > 0 ? "violation" : stats.at("maybe") > 0 ? "maybe" : "fine";
  }
  RunRequest req;
  req.inputs = fixture_inputs(fx, dir);
  req.options.check_global_access = true;
  if (fx.contains("run")) {
    req.options.shuffle = fx["run"].value("shuffle", false);
    req.options.seed = fx["run"].value("seed", uint64_t{0});
  }
  out["dynamic"] = "fine";
  std::string full_message;
  try {
    run_primal(k, req);
  } catch (const UserError& e) {
    std::string msg = e.diagnostic().message;
    if (msg.find("global data access rule") == std::string::npos) throw;
    out["dynamic"] = "violation";
    out["dynamic_message"] = msg.substr(0, msg.find('\n'));
    full_message = msg;
  }
  // The cpu's check (tasks on one thread, in the interpreter's order) must report the same first
  // violation, word for word, or none. A shuffled order exists on the interpreter only.
  if (!req.options.shuffle) {
    std::string interp = out["dynamic"] == "violation" ? "on cpu: " + full_message : "no violation";
    std::string cpu = "no violation";
    RunRequest on_cpu = req;
    on_cpu.backend = Backend::cpu;
    try {
      run_primal(k, on_cpu);
    } catch (const UserError& e) {
      cpu = e.diagnostic().message;
    }
    if (cpu != interp)
      r.gradcheck_failures.push_back(fmt::format(
          "global access: the cpu's dynamic check disagrees with the interpreter's\n  interp: {}\n  cpu:    {}", interp,
          cpu));
  }
  if (out["dynamic"] == "violation" && out["static"] == "fine")
    r.gradcheck_failures.push_back("global access: the run breaks the rule, but the static check says fine");
  r.global_access = out;
}

}  // namespace pb::workbench::detail
