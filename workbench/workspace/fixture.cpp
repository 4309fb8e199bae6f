#include "workbench/workspace/fixture.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/core/state.h"
#include "runtime/interp/interpreter.h"
#include "workbench/workspace/compile.h"
#include "workbench/workspace/fixture_compare.h"
#include "workbench/workspace/fixture_metrics.h"
#include "workbench/workspace/fixture_replay.h"
#include "workbench/workspace/fixture_schema.h"
#include "workbench/workspace/forward.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/run.h"

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

namespace pb::workbench {

namespace detail {

std::string located_message(const UserError& e) {
  const Diagnostic& d = e.diagnostic();
  return d.line > 0 ? fmt::format("{}:{}: {}", d.line, d.column, d.message) : d.message;
}

nlohmann::json fixture_inputs(const ordered_json& fx, const fs::path& dir) {
  if (fx.contains("inputs_file"))
    return parse_json_text(read_file((dir / fx["inputs_file"].get<std::string>()).string()),
                           fx["inputs_file"].get<std::string>());
  if (fx.contains("inputs")) return nlohmann::json::parse(fx["inputs"].dump());
  return nlohmann::json::object();
}

}  // namespace detail

namespace {

using detail::fixture_inputs;
using detail::forward_checks;
using detail::global_access_checks;
using detail::located_message;
using detail::Replay;

// A fixture whose run leaves a stack empty does not test that stack: a failure, unless the fixture
// says that the empty case is its purpose ("expect_unexercised_stacks": true).
void check_stack_coverage(const std::vector<int>& empty, const ordered_json& fx, Replay& r) {
  bool expected = fx.value("expect_unexercised_stacks", false);
  if (!empty.empty() && !expected) {
    std::string ids;
    for (int id : empty) ids += fmt::format("{}${}", ids.empty() ? "" : ", ", id);
    r.coverage_failures.push_back(fmt::format(
        "stack(s) {} got no push inside a loop or if in this run (only the pushes beside the alloc), so the "
        "fixture does not test them; give inputs with non-zero trip counts, or say \"expect_unexercised_stacks\": true "
        "when the empty case is the purpose",
        ids));
  } else if (empty.empty() && expected) {
    r.coverage_failures.push_back("the fixture says \"expect_unexercised_stacks\", but every stack was pushed");
  }
}

void check_roundtrip(const ir::Kernel& k, const std::string& text, std::vector<std::string>& failures) {
  auto reparsed = ir::parse_kernel(text, "<canonical>");
  std::string again = ir::print_kernel(*reparsed);
  if (again != text)
    failures.push_back("printing is not idempotent:\n" + unified_diff(text, again, "print", "print(parse(print))"));
  auto from_json = ir::from_json(ir::to_json(k));
  std::string via_json = ir::print_kernel(*from_json);
  if (via_json != text)
    failures.push_back("JSON round trip changes the kernel:\n" +
                       unified_diff(text, via_json, "print", "print(from_json(to_json))"));
}

// A pipeline must not change what the kernel computes: the same inputs give bit-identical
// results before and after it. It may remove a run-time failure (dead code that would have
// divided by zero), but never introduce one. f32 runs without --f64 here: folding is exact f32
// arithmetic, which widened f64 execution would not reproduce. Unsized autodiff stacks run
// without a limit here, so a sizing pipeline has a baseline; the fixture's own run checks sizes.
void differential_check(const ir::Kernel& before_k, const ir::Kernel& after_k, RunRequest req, Replay& r) {
  req.options.f64 = false;
  req.options.unsized_stacks_unlimited = true;
  std::optional<RunOutput> before, after;
  std::string before_error, after_error;
  try {
    before = run_primal(before_k, req);
  } catch (const UserError& e) {
    before_error = located_message(e);
  }
  try {
    after = run_primal(after_k, req);
  } catch (const UserError& e) {
    after_error = located_message(e);
  }
  if (before && !after) {
    r.differential_failures.push_back("the pipeline introduced a run-time error:\n  " + after_error);
    return;
  }
  if (!before || !after) return;
  if (before->values.dump() != after->values.dump())
    r.differential_failures.push_back(
        "the pipeline changed the kernel's results:\n" +
        unified_diff(before->values.dump(1), after->values.dump(1), "before the pipeline", "after the pipeline"));
  if (before->printed != after->printed)
    r.differential_failures.push_back("the pipeline changed the printed output:\n" +
                                      unified_diff(before->printed, after->printed, "before", "after"));
}

// Autodiff fixtures: the pipeline makes a reverse kernel, so instead of the differential run,
// "grad" runs forward + reverse with seeds (values are compared with expect.values) and
// "gradcheck" compares every gradient element with finite differences (it must pass).
void gradient_checks(const ir::Kernel& forward, const std::string& pipeline, const ordered_json& fx,
                     const fs::path& dir, Replay& r) {
  try {
    if (fx.contains("grad")) {
      RunRequest req;
      req.inputs = fixture_inputs(fx, dir);
      const ordered_json seeds = fx["grad"].value("seed", ordered_json::object());  // items() must not outlive it
      for (const auto& [name, v] : seeds.items()) req.seed_grads.emplace_back(name, v.get<double>());
      auto out = run_with_gradients(forward, pipeline, req);
      r.values = out.values;
      check_stack_coverage(out.unexercised_stacks, fx, r);
    }
    if (fx.contains("gradcheck")) {
      const auto& g = fx["gradcheck"];
      GradcheckOptions o;
      o.loss = g.at("loss").get<std::string>();
      if (g.contains("wrt")) o.wrt = g["wrt"].get<std::vector<std::string>>();
      o.eps = g.value("eps", o.eps);
      o.rel = g.value("rel", o.rel);
      o.abs = g.value("abs", o.abs);
      o.inputs = fixture_inputs(fx, dir);
      o.pipeline = pipeline;
      auto result = gradcheck(forward, o);
      if (!fx.contains("grad")) check_stack_coverage(result.unexercised_stacks, fx, r);
      bool nothing_expected = g.value("expect_nothing_compared", false);
      if (result.compared == 0 && !nothing_expected) {
        r.gradcheck_failures.push_back(fmt::format(
            "gradcheck: nothing compared ({} element(s), {} kink(s)): a check that compares nothing did not pass; "
            "choose inputs away from kinks with non-zero trip counts, or say \"expect_nothing_compared\": true",
            result.elements.size(), result.kinks));
      } else if (result.compared > 0 && nothing_expected) {
        r.gradcheck_failures.push_back(fmt::format(
            "gradcheck: {} element(s) compared, but the fixture says \"expect_nothing_compared\"", result.compared));
      } else if (result.mismatches > 0) {
        std::string msg =
            fmt::format("gradcheck: {} of {} gradient elements differ from finite differences:", result.mismatches,
                        result.compared);
        int shown = 0;
        for (const auto& e : result.elements)
          if (e.status == GradStatus::mismatch && shown++ < 5)
            msg += fmt::format("\n  {}: analytic {:.9g}, numeric {:.9g} (rel {:.2e})", element_name(e), e.analytic,
                               e.numeric, e.rel_error);
        r.gradcheck_failures.push_back(msg);
      }
    }
  } catch (const UserError& e) {
    r.error_stage = "run";
    r.error = located_message(e);
  }
}

// "expect.metrics": compiles the kernel after the pipeline as "compile" says and checks the bounds.
void check_metrics(const ir::Kernel& k, const ordered_json& fx, Replay& r) {
  if (!fx.contains("expect") || !fx["expect"].contains("metrics")) return;
  try {
    auto bounds = parse_metric_bounds(fx["expect"]["metrics"]);
    auto request = fixture_compile_request(fx.value("compile", ordered_json()), bounds);
    r.metric_failures = check_metric_bounds(bounds, compile_kernel(k, request));
  } catch (const UserError& e) {
    r.metric_failures.push_back(e.what());
  }
}

Replay replay(const fs::path& fixture_path, const ordered_json& fx) {
  Replay r;
  fs::path dir = fixture_path.parent_path();
  std::unique_ptr<ir::Kernel> kernel;
  try {
    if (fx.contains("kernel_text")) {
      kernel =
          parse_kernel_source(fx["kernel_text"].get<std::string>(), fixture_path.filename().string() + ":kernel_text");
    } else {
      auto rel = fx.at("kernel").get<std::string>();
      kernel = parse_kernel_source(read_file((dir / rel).string()), rel);
    }
  } catch (const UserError& e) {
    r.error_stage = "parse";
    r.error = located_message(e);
    return r;
  }
  check_roundtrip(*kernel, ir::print_kernel(*kernel), r.roundtrip_failures);
  for (const auto& e : ir::verify(*kernel)) r.verify_errors.push_back(e.format());
  if (!r.verify_errors.empty()) {
    r.ir = ir::print_kernel(*kernel);
    r.error_stage = "verify";
    r.error = r.verify_errors.front();
    return r;
  }
  if (fx.value("global_access", false)) {
    try {
      global_access_checks(*kernel, fx, dir, r);
    } catch (const UserError& e) {
      r.gradcheck_failures.push_back("global access: " + located_message(e));
    }
  }
  std::string pipeline = fx.value("pipeline", "");
  std::unique_ptr<ir::Kernel> original;
  if (!pipeline.empty()) {
    original = kernel->clone();
    ReplayResult rr;
    try {
      rr = workbench::replay(std::move(kernel), pipeline, passes::RunOptions{});
    } catch (const UserError& e) {
      r.error_stage = "pipeline";
      r.error = e.diagnostic().message;
      return r;
    }
    kernel = std::move(rr.kernel);
    std::map<std::string, int> seen;
    for (const auto& rec : rr.run.records) {
      if (!rec.ran) continue;
      int n = ++seen[rec.pass];
      std::string key = n == 1 ? rec.pass : fmt::format("{}#{}", rec.pass, n);
      r.ir_after[key] = rec.after_text;
      r.stats[key] = rec.stats;
      for (const auto& w : rec.warnings) r.warnings.push_back(rec.pass + ": " + w);
    }
    if (rr.run.failed) {
      const auto& rec = rr.run.records[rr.run.failed_index];
      r.error_stage = "pass";
      r.error_pass = rec.pass;
      r.error = rec.failure;
      r.ir = ir::print_kernel(*kernel);
      return r;
    }
  }
  r.ir = ir::print_kernel(*kernel);
  if (!pipeline.empty()) check_roundtrip(*kernel, *r.ir, r.roundtrip_failures);
  check_metrics(*kernel, fx, r);
  if (original && (fx.contains("dual") || fx.contains("jvpcheck") || fx.contains("adjointcheck"))) {
    forward_checks(*original, pipeline, fx, dir, r);
    return r;
  }
  if (original && (fx.contains("gradcheck") || fx.contains("grad"))) {
    gradient_checks(*original, pipeline, fx, dir, r);
    return r;
  }
  bool wants_run = fx.contains("inputs") || fx.contains("inputs_file") || fx.contains("run");
  if (!wants_run) return r;
  RunRequest req;
  try {
    if (fx.contains("inputs_file"))
      req.inputs = parse_json_text(read_file((dir / fx["inputs_file"].get<std::string>()).string()),
                                   fx["inputs_file"].get<std::string>());
    else if (fx.contains("inputs"))
      req.inputs = nlohmann::json::parse(fx["inputs"].dump());
    if (fx.contains("run")) {
      const auto& run = fx["run"];
      req.options.shuffle = run.value("shuffle", false);
      req.options.seed = run.value("seed", uint64_t{0});
      req.options.f64 = run.value("f64", false);
      if (run.contains("seed_grad"))
        for (const auto& [name, v] : run["seed_grad"].items()) req.seed_grads.emplace_back(name, v.get<double>());
    }
    auto out = run_primal(*kernel, req);
    r.values = out.values;
    r.printed = out.printed;
    check_stack_coverage(out.unexercised_stacks, fx, r);
  } catch (const UserError& e) {
    r.error_stage = "run";
    r.error = located_message(e);
  }
  if (original) differential_check(*original, *kernel, req, r);
  return r;
}

ordered_json read_fixture(const std::string& path) {
  auto text = read_file(path);
  parse_json_text(text, path);  // located syntax errors
  ordered_json fx = ordered_json::parse(text);
  check_fixture_schema(fx, path);
  return fx;
}

// Expected IR is stored as a list of lines, so that a change shows in a diff as the lines that
// changed; a single string (the older form) is read too.
std::string ir_text(const ordered_json& v, const std::string& what) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array())
    throw UserError(fmt::format("{} must be a list of lines (or one string)", what), "see docs/fixtures.md");
  std::string text;
  for (const auto& line : v) {
    if (!line.is_string())
      throw UserError(fmt::format("{} holds a non-string line {}", what, line.dump()), "see docs/fixtures.md");
    text += line.get<std::string>() + "\n";
  }
  return text;
}

ordered_json ir_lines(const std::string& text) {
  ordered_json lines = ordered_json::array();
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

Tolerance tolerance_of(const ordered_json& expect) {
  Tolerance t;
  if (expect.contains("tolerance")) {
    t.rel = expect["tolerance"].value("rel", t.rel);
    t.abs = expect["tolerance"].value("abs", t.abs);
  }
  return t;
}

}  // namespace

namespace {

// expect.warnings: one substring per warning the pipeline gave, in order; a warning not declared
// fails the fixture as an unexpected error does.
void compare_warnings(const ordered_json& expect, const std::vector<std::string>& got, std::vector<std::string>& f) {
  std::vector<std::string> want;
  if (expect.contains("warnings")) {
    if (!expect["warnings"].is_array())
      throw UserError("expect.warnings must be a list of strings", "see docs/fixtures.md");
    for (const auto& w : expect["warnings"]) want.push_back(w.is_string() ? w.get<std::string>() : w.dump());
  }
  bool same = want.size() == got.size();
  for (size_t i = 0; same && i < want.size(); ++i) same = got[i].find(want[i]) != std::string::npos;
  if (same) return;
  std::string text = fmt::format("warnings differ: expected {}, got {}:", want.size(), got.size());
  for (const auto& w : got) text += "\n  " + w;
  f.push_back(text);
}

// What update writes for the warnings: a hand-written substring while it still matches its
// warning, else the warning's first line.
ordered_json fresh_warnings(const ordered_json& expect, const std::vector<std::string>& got) {
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < got.size(); ++i) {
    std::string keep;
    if (expect.contains("warnings") && expect["warnings"].is_array() && i < expect["warnings"].size() &&
        expect["warnings"][i].is_string())
      keep = expect["warnings"][i].get<std::string>();
    out.push_back(!keep.empty() && got[i].find(keep) != std::string::npos ? keep : got[i].substr(0, got[i].find('\n')));
  }
  return out;
}

}  // namespace

FixtureOutcome check_fixture(const std::string& path) {
  FixtureOutcome o;
  o.path = path;
  ordered_json fx;
  try {
    fx = read_fixture(path);
  } catch (const UserError& e) {
    o.failures.push_back(e.what());
    return o;
  }
  Replay r = replay(path, fx);
  const ordered_json expect = fx.value("expect", ordered_json::object());
  auto& f = o.failures;
  f.insert(f.end(), r.roundtrip_failures.begin(), r.roundtrip_failures.end());
  f.insert(f.end(), r.differential_failures.begin(), r.differential_failures.end());
  f.insert(f.end(), r.gradcheck_failures.begin(), r.gradcheck_failures.end());
  f.insert(f.end(), r.metric_failures.begin(), r.metric_failures.end());
  f.insert(f.end(), r.coverage_failures.begin(), r.coverage_failures.end());
  if (expect.contains("ir_after")) {
    for (const auto& [key, text] : expect["ir_after"].items()) {
      auto it = r.ir_after.find(key);
      std::string want = ir_text(text, "expect.ir_after." + key);
      if (it == r.ir_after.end())
        f.push_back(fmt::format("ir_after: pass '{}' did not run", key));
      else if (it->second != want)
        f.push_back(fmt::format("IR after {} differs:\n", key) + unified_diff(want, it->second));
    }
  }
  if (expect.contains("stats")) {
    for (const auto& [key, want] : expect["stats"].items()) {
      auto it = r.stats.find(key);
      if (it == r.stats.end()) {
        f.push_back(fmt::format("stats: pass '{}' did not run", key));
        continue;
      }
      for (const auto& [name, value] : want.items()) {
        auto got = it->second.find(name);
        if (got == it->second.end() || got->second != value.get<int64_t>())
          f.push_back(fmt::format("stats: {}.{} expected {}, got {}", key, name, value.dump(),
                                  got == it->second.end() ? std::string("nothing") : std::to_string(got->second)));
      }
    }
  }
  if (expect.contains("error")) {
    auto stage = expect["error"].value("stage", "");
    auto contains = expect["error"].value("contains", "");
    if (r.error_stage.empty())
      f.push_back(fmt::format("expected a {} error containing \"{}\", but everything succeeded", stage, contains));
    else if (r.error_stage != stage || r.error.find(contains) == std::string::npos)
      f.push_back(fmt::format("expected a {} error containing \"{}\", got a {} error:\n  {}", stage, contains,
                              r.error_stage, r.error));
    else if (expect["error"].contains("pass") && expect["error"]["pass"].get<std::string>() != r.error_pass)
      f.push_back(fmt::format("expected pass '{}' to fail, but '{}' did", expect["error"]["pass"].get<std::string>(),
                              r.error_pass));
  } else if (!r.error_stage.empty()) {
    f.push_back(fmt::format("unexpected {} error:\n  {}", r.error_stage, r.error));
  }
  compare_warnings(expect, r.warnings, f);
  if (expect.contains("ir") && r.ir) {
    auto want = ir_text(expect["ir"], "expect.ir");
    if (want != *r.ir) f.push_back("canonical IR differs:\n" + unified_diff(want, *r.ir));
  }
  if (expect.contains("verify") && r.error_stage != "parse") {
    nlohmann::json got = r.verify_errors.empty() ? nlohmann::json("ok") : nlohmann::json(r.verify_errors);
    if (nlohmann::json::parse(expect["verify"].dump()) != got)
      f.push_back(fmt::format("verifier result differs: expected {}, got {}", expect["verify"].dump(), got.dump()));
  }
  if (expect.contains("values")) {
    if (!r.values)
      f.push_back("expected values, but the kernel did not run");
    else
      compare_values(nlohmann::json::parse(expect["values"].dump()), *r.values, tolerance_of(expect), f);
  }
  if (r.global_access &&
      nlohmann::json::parse(expect.value("global_access", ordered_json()).dump()) != *r.global_access)
    f.push_back(fmt::format("global access verdicts differ: expected {}, got {}",
                            expect.value("global_access", ordered_json()).dump(), r.global_access->dump()));
  if (expect.contains("printed") && r.printed && expect["printed"].get<std::string>() != *r.printed)
    f.push_back("printed output differs:\n" + unified_diff(expect["printed"].get<std::string>(), *r.printed));
  o.passed = f.empty();
  return o;
}

FixtureOutcome update_fixture(const std::string& path) {
  FixtureOutcome o;
  o.path = path;
  ordered_json fx;
  try {
    fx = read_fixture(path);
  } catch (const UserError& e) {
    o.failures.push_back(e.what());
    return o;
  }
  Replay r = replay(path, fx);
  ordered_json expect = fx.value("expect", ordered_json::object());
  ordered_json fresh = ordered_json::object();
  if (r.ir) fresh["ir"] = ir_lines(*r.ir);
  if (expect.contains("ir_after")) {
    ordered_json after = ordered_json::object();
    for (const auto& [key, text] : expect["ir_after"].items())
      if (auto it = r.ir_after.find(key); it != r.ir_after.end()) after[key] = ir_lines(it->second);
    fresh["ir_after"] = after;
  }
  if (!r.stats.empty()) {
    // update compares what check compares: statistics the fixture names keep their names and
    // take the new values; a fixture naming none gets them all.
    ordered_json stats = ordered_json::object();
    if (expect.contains("stats")) {
      for (const auto& [key, want] : expect["stats"].items()) {
        auto it = r.stats.find(key);
        if (it == r.stats.end()) continue;
        ordered_json kept = ordered_json::object();
        for (const auto& [name, value] : want.items())
          if (auto got = it->second.find(name); got != it->second.end()) kept[name] = got->second;
        stats[key] = kept;
      }
    } else {
      for (const auto& [key, values] : r.stats) stats[key] = values;
    }
    fresh["stats"] = stats;
  }
  if (r.error_stage != "parse")
    fresh["verify"] = r.verify_errors.empty() ? ordered_json("ok") : ordered_json(r.verify_errors);
  if (!r.warnings.empty()) fresh["warnings"] = fresh_warnings(expect, r.warnings);
  if (r.values) fresh["values"] = ordered_json::parse(r.values->dump());
  if (r.printed && !r.printed->empty()) fresh["printed"] = *r.printed;
  if (r.global_access) fresh["global_access"] = ordered_json::parse(r.global_access->dump());
  if (!r.error_stage.empty()) {
    // Keep a hand-written substring while it still matches; otherwise pin the whole message.
    std::string keep = expect.contains("error") ? expect["error"].value("contains", "") : "";
    bool still = expect.contains("error") && expect["error"].value("stage", "") == r.error_stage && !keep.empty() &&
                 r.error.find(keep) != std::string::npos;
    std::string first_line = r.error.substr(0, r.error.find('\n'));
    fresh["error"] = {{"stage", r.error_stage}, {"contains", still ? keep : first_line}};
    if (!r.error_pass.empty()) fresh["error"]["pass"] = r.error_pass;
  }
  if (expect.contains("tolerance")) fresh["tolerance"] = expect["tolerance"];
  if (expect.contains("metrics")) fresh["metrics"] = expect["metrics"];  // bounds are written by hand, never updated
  o.changed = fresh != expect;
  fx["expect"] = fresh;
  if (o.changed) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << fx.dump(2) << "\n";
    if (!out) o.failures.push_back("cannot write " + path);
  }
  o.failures.insert(o.failures.end(), r.roundtrip_failures.begin(), r.roundtrip_failures.end());
  o.failures.insert(o.failures.end(), r.differential_failures.begin(), r.differential_failures.end());
  o.failures.insert(o.failures.end(), r.gradcheck_failures.begin(), r.gradcheck_failures.end());
  o.failures.insert(o.failures.end(), r.metric_failures.begin(), r.metric_failures.end());
  o.failures.insert(o.failures.end(), r.coverage_failures.begin(), r.coverage_failures.end());
  o.passed = o.failures.empty();
  return o;
}

}  // namespace pb::workbench
