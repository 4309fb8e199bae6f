#include "workbench/cli/gradient_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>

#include "ir/diagnostic.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"

namespace pb::cli {

namespace {

constexpr size_t kWorstShown = 10;
constexpr size_t kKinksNamed = 8;

// Every mismatch plus the kWorstShown compared elements with the largest relative error,
// largest first (NaN errors first of all).
std::vector<const workbench::GradElement*> rows_to_show(const workbench::GradcheckResult& r) {
  std::vector<const workbench::GradElement*> compared;
  for (const auto& e : r.elements)
    if (e.status != workbench::GradStatus::kink) compared.push_back(&e);
  auto key = [](const workbench::GradElement* e) { return std::isnan(e->rel_error) ? INFINITY : e->rel_error; };
  std::stable_sort(compared.begin(), compared.end(), [&](auto* a, auto* b) { return key(a) > key(b); });
  std::vector<const workbench::GradElement*> rows;
  for (size_t i = 0; i < compared.size(); ++i)
    if (i < kWorstShown || compared[i]->status == workbench::GradStatus::mismatch) rows.push_back(compared[i]);
  return rows;
}

void print_table(const std::vector<const workbench::GradElement*>& rows) {
  size_t width = 7;
  for (const auto* e : rows) width = std::max(width, workbench::element_name(*e).size());
  std::cout << fmt::format("  {:<{}}  {:>16}  {:>16}  {:>9}  {:>9}  {}\n", "element", width, "analytic", "numeric",
                           "abs err", "rel err", "status");
  for (const auto* e : rows)
    std::cout << fmt::format("  {:<{}}  {:>16.10g}  {:>16.10g}  {:>9.2e}  {:>9.2e}  {}\n", workbench::element_name(*e),
                             width, e->analytic, e->numeric, e->abs_error, e->rel_error,
                             e->status == workbench::GradStatus::mismatch ? "MISMATCH" : "ok");
}

void print_kinks(const workbench::GradcheckResult& r) {
  if (r.kinks == 0) return;
  std::string names;
  size_t named = 0;
  for (const auto& e : r.elements) {
    if (e.status != workbench::GradStatus::kink || named == kKinksNamed) continue;
    names += (named++ ? ", " : "") + workbench::element_name(e);
  }
  if (r.kinks > named) names += ", ...";
  std::cout << fmt::format("kinks: {} element(s) not compared, their x+h and x-h runs branch differently: {}\n",
                           r.kinks, names);
}

int report(const GradcheckArgs& a, const workbench::GradcheckOptions& o, const workbench::GradcheckResult& r) {
  for (const auto& w : r.warnings) std::cerr << fmt::format("{}: warning: {}\n", a.file, w);
  std::string wrt;
  for (const auto& w : r.wrt) wrt += (wrt.empty() ? "" : ", ") + w;
  std::cout << fmt::format(
      "gradcheck {}: d({} = {:.10g}) / d({}); reverse kernel from '{}'; ok when |a - n| <= {:g} + {:g} * max(|a|, "
      "|n|); eps {:g}; f64{}\n",
      a.file, o.loss, r.loss, wrt, o.pipeline, o.abs, o.rel, o.eps,
      o.backend == workbench::Backend::interp
          ? ""
          : fmt::format("; analytic on {}, finite differences on interp", workbench::backend_name(o.backend)));
  auto rows = rows_to_show(r);
  if (!rows.empty()) print_table(rows);
  print_kinks(r);
  std::cout << fmt::format(
      "gradcheck: {}: {} element(s), {} compared, {} mismatch(es), {} kink(s); max abs err {:.2e}, max rel err "
      "{:.2e}\n",
      r.passed() ? "PASS" : "FAIL", r.elements.size(), r.compared, r.mismatches, r.kinks, r.max_abs_error,
      r.max_rel_error);
  if (r.compared == 0)
    std::cout << "gradcheck: nothing compared, so nothing was checked: choose inputs away from kinks (and with "
                 "non-zero trip counts) so that some element is compared\n";
  return r.passed() ? 0 : 1;
}

}  // namespace

int cmd_gradcheck(const GradcheckArgs& a) {
  auto k = workbench::load_source(a.file, a.dump).kernel;  // a kernel file, or a fixture's kernel
  if (!report_verify(*k, a.file)) return 1;
  workbench::GradcheckOptions o = a.options;
  workbench::CommandInputs inputs = workbench::command_inputs(a.inputs, a.file);
  if (inputs.json) o.inputs = std::move(*inputs.json);
  // A fixture's own loss and wrt, unless given.
  if (inputs.gradcheck && o.loss.empty() && (*inputs.gradcheck)["loss"].is_string())
    o.loss = (*inputs.gradcheck)["loss"].get<std::string>();
  if (inputs.gradcheck && a.options.wrt.empty() && inputs.gradcheck->contains("wrt") &&
      (*inputs.gradcheck)["wrt"].is_array())
    for (const auto& w : (*inputs.gradcheck)["wrt"])
      if (w.is_string()) o.wrt.push_back(w.get<std::string>());
  if (o.loss.empty())
    throw UserError(
        "gradcheck needs a loss: --loss is missing, and the file is not a fixture that names one",
        fmt::format("name the output field whose sum is the loss: passbench gradcheck {} --loss y", a.file));
  o.inputs_name = inputs.name;
  o.kernel_name = a.file;
  o.pipeline = workbench::reverse_pipeline_for_access_rule(o.pipeline, a.global_access);
  return on_each_backend(a.backend, a.file, [&](workbench::Backend b) {
    o.backend = b;
    return report(a, o, workbench::gradcheck(*k, o));
  });
}

}  // namespace pb::cli
