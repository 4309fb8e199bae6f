#include "workbench/cli/forward_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "ir/diagnostic.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"

namespace pb::cli {

namespace {

constexpr size_t kWorstShown = 10;

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string on_backend(workbench::Backend b) {
  return b == workbench::Backend::interp ? "" : fmt::format("; on {}", workbench::backend_name(b));
}

int report_jvp(const JvpcheckArgs& a, const workbench::JvpcheckOptions& o, const workbench::JvpcheckResult& r) {
  std::cout << fmt::format(
      "jvpcheck {}: d({}) / d({}); tangent kernel from '{}'; ok when |t - n| <= {:g} + {:g} * max(|t|, |n|); eps "
      "{:g}; f64{}\n",
      a.file, join(r.out), join(r.wrt), o.pipeline, o.abs, o.rel, o.eps,
      o.backend == workbench::Backend::interp
          ? ""
          : fmt::format("; tangents on {}, finite differences on interp", workbench::backend_name(o.backend)));
  std::vector<const workbench::JvpElement*> rows;
  for (const auto& e : r.elements)
    if (e.status != workbench::GradStatus::kink) rows.push_back(&e);
  auto key = [](const workbench::JvpElement* e) { return std::isnan(e->rel_error) ? INFINITY : e->rel_error; };
  std::stable_sort(rows.begin(), rows.end(), [&](auto* x, auto* y) { return key(x) > key(y); });
  size_t width = 7;
  for (const auto* e : rows) width = std::max(width, e->out.size() + e->wrt.size() + 5);
  if (!rows.empty())
    std::cout << fmt::format("  {:<{}}  {:>16}  {:>16}  {:>9}  {:>9}  {}\n", "element", width, "tangent", "numeric",
                             "abs err", "rel err", "status");
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto* e = rows[i];
    if (i >= kWorstShown && e->status != workbench::GradStatus::mismatch) continue;
    std::cout << fmt::format("  {:<{}}  {:>16.10g}  {:>16.10g}  {:>9.2e}  {:>9.2e}  {}\n",
                             fmt::format("d{}/d{}", e->out, e->wrt), width, e->analytic, e->numeric, e->abs_error,
                             e->rel_error, e->status == workbench::GradStatus::mismatch ? "MISMATCH" : "ok");
  }
  std::cout << fmt::format(
      "jvpcheck: {}: {} element(s), {} compared, {} mismatch(es), {} kink(s); max abs err {:.2e}, max rel err {:.2e}\n",
      r.passed() ? "PASS" : "FAIL", r.elements.size(), r.compared, r.mismatches, r.kinks, r.max_abs_error,
      r.max_rel_error);
  if (r.compared == 0)
    std::cout << "jvpcheck: nothing compared, so nothing was checked: choose inputs away from kinks so that some "
                 "element is compared\n";
  return r.passed() ? 0 : 1;
}

int report_adjoint(const AdjointcheckArgs& a, const workbench::AdjointcheckOptions& o,
                   const workbench::AdjointcheckResult& r) {
  std::cout << fmt::format(
      "adjointcheck {}: w . (J v) from '{}' against (J^T w) . v from '{}' over {} ({} element(s)); ok when the "
      "difference <= {:g} + {:g} * scale; seed {}; f64{}\n",
      a.file, o.forward_pipeline, o.reverse_pipeline, join(r.arrays), r.elements, o.abs, o.rel, o.seed,
      on_backend(o.backend));
  for (size_t i = 0; i < r.trials.size(); ++i) {
    const auto& t = r.trials[i];
    std::cout << fmt::format("  trial {}: forward {:.17g}  reverse {:.17g}  difference {:.2e}  scale {:.3g}  {}\n",
                             i + 1, t.forward, t.reverse, std::abs(t.forward - t.reverse), t.scale,
                             t.ok ? "ok" : "MISMATCH");
  }
  std::cout << fmt::format("adjointcheck: {}: {} trial(s), {} touched element(s)\n", r.passed() ? "PASS" : "FAIL",
                           r.trials.size(), r.touched);
  if (r.touched == 0)
    std::cout << "adjointcheck: the kernels changed no tangent and no adjoint, so nothing was checked\n";
  return r.passed() ? 0 : 1;
}

// Loads and verifies the kernel, fills the options' inputs, and runs `check` on each backend.
template <class Args, class Options, class Check>
int check_on_each_backend(const Args& a, Options o, Check check) {
  auto k = workbench::load_source(a.file, a.dump).kernel;
  if (!report_verify(*k, a.file)) return 1;
  workbench::CommandInputs inputs = workbench::command_inputs(a.inputs, a.file);
  if (inputs.json) o.inputs = std::move(*inputs.json);
  o.inputs_name = inputs.name;
  o.kernel_name = a.file;
  return on_each_backend(a.backend, a.file, [&](workbench::Backend b) {
    o.backend = b;
    return check(*k, o);
  });
}

}  // namespace

int cmd_jvpcheck(const JvpcheckArgs& a) {
  return check_on_each_backend(a, a.options, [&](const ir::Kernel& k, const workbench::JvpcheckOptions& o) {
    return report_jvp(a, o, workbench::jvpcheck(k, o));
  });
}

int cmd_adjointcheck(const AdjointcheckArgs& a) {
  return check_on_each_backend(a, a.options, [&](const ir::Kernel& k, const workbench::AdjointcheckOptions& o) {
    return report_adjoint(a, o, workbench::adjointcheck(k, o));
  });
}

}  // namespace pb::cli
