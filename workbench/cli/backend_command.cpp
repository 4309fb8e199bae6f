// `run` and `fixture check --backend`: the CLI face of workbench/workspace/execute.h, compare.h and
// fixture_backends.h.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <optional>
#include <thread>

#include "ir/diagnostic.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/progress_line.h"
#include "workbench/workspace/compare.h"
#include "workbench/workspace/execute.h"
#include "workbench/workspace/fixture.h"
#include "workbench/workspace/fixture_backends.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"

namespace pb::cli {

namespace {

void print_stack_usage(const std::vector<workbench::StackUse>& stacks) {
  for (const auto& s : stacks)
    std::cerr << fmt::format(
        "stack ${}: deepest {} of capacity {}{} ({})\n", s.stack_id, s.deepest,
        s.capacity == 0 ? std::string("unlimited") : std::to_string(s.capacity), s.symbolic ? " (size expression)" : "",
        s.capacity == 0 || s.deepest == 0 ? std::string("-")
                                          : fmt::format("{:.2f}x", double(s.capacity) / double(s.deepest)));
}

void print_times(const std::vector<workbench::TimedLaunch>& launches) {
  for (const auto& t : launches)
    std::cerr << fmt::format(
        "{} on {}{}: compile {:.3f} ms{}, transfer {:.3f} ms, kernel {:.3f} ms ({}), total {:.3f} ms\n", t.kernel,
        workbench::backend_name(t.backend), t.device.empty() ? "" : " (" + t.device + ")", t.times.compile_ms,
        t.times.compile_cached ? " (cached)" : "", t.times.transfer_ms, t.times.kernel_ms,
        t.times.kernel_timed ? "timestamps" : "wall time", t.times.total_ms);
}

}  // namespace

int cmd_run(const RunArgs& a) {
  std::vector<workbench::Backend> backends = workbench::parse_backends(a.backend);
  auto k = workbench::load_source(a.file, a.dump).kernel;  // a kernel file, or a fixture's kernel
  if (!report_verify(*k, a.file)) return 1;
  workbench::RunRequest req = make_run_request(a);
  workbench::BackendOptions o;
  o.device = a.device;
  o.cpu_part_statements = a.part_statements;
  workbench::PreparedRequest p = workbench::prepare_request(*k, req);
  for (const auto& w : p.warnings) std::cerr << fmt::format("{}: warning: {}\n", a.file, w);
  // Every backend named must carry out every part of the request, before anything runs.
  // With "all", a backend that is absent (no device, no module) is listed so and the others compared.
  for (workbench::Backend b : backends) {
    try {
      runtime::require_capabilities(workbench::backend_for(b, o), p.exec.options, p.exec.stack_usage);
    } catch (const runtime::BackendAbsent&) {
      if (a.backend != "all") throw;
    }
  }
  try {
    if (backends.size() == 1) {
      runtime::ExecutionResult x = workbench::execute_on(backends.front(), p, o);
      for (const auto& l : x.launches) std::cerr << l.result.printed;
      if (a.stack_usage) print_stack_usage(workbench::stack_uses(x));
      if (a.time) print_times(workbench::timed_launches(backends.front(), x));
      std::cout << workbench::execution_values(x).dump(2) << "\n";
      return 0;
    }
    workbench::Comparison c = workbench::compare_backends(p, backends, o, {a.rtol_f32, a.rtol_f64});
    std::cout << workbench::format_backend_table(c.rows);
    if (a.time) print_times(c.launches);
    bool refused = std::any_of(c.rows.begin(), c.rows.end(), [](const auto& d) { return d.refused; });
    if (c.passed()) return 0;
    return refused ? 2 : 1;
  } catch (const workbench::RunFailure& e) {
    std::cerr << a.file << ": " << e.what() << "\n";
    return 1;
  }
}

int cmd_fixture_backend(const FixtureArgs& a) {
  std::vector<workbench::Backend> backends = workbench::parse_backends(a.backend);
  std::vector<std::string> files;
  for (const auto& f : workbench::expand_fixture_paths(a.paths))
    if (a.filter.empty() || f.find(a.filter) != std::string::npos) files.push_back(f);
  if (files.empty()) throw UserError("no fixtures found", "pass fixture files or directories holding *.fixture.json");
  if (a.jobs < 1) throw UserError(fmt::format("-j {}: at least one job", a.jobs), "for example -j 2");
  workbench::BackendOptions o;
  o.device = a.device;
  o.cpu_part_statements = a.part_statements;
  workbench::Tolerances tol{a.rtol_f32, a.rtol_f64};
  std::vector<workbench::FixtureBackendOutcome> outcomes(files.size());
  std::atomic<size_t> next{0}, done{0};
  std::optional<ProgressLine> progress(std::in_place, "fixture check --backend " + a.backend);
  auto work = [&] {
    for (size_t i; (i = next++) < files.size(); ++done) {
      progress->set(fixture_progress(i, files.size(), done, files[i]));
      try {
        outcomes[i] = workbench::check_fixture_on_backends(files[i], backends, o, tol);
      } catch (const UserError& e) {
        outcomes[i].passed = false;
        outcomes[i].rows.push_back(workbench::failed_row(workbench::Backend::interp, e.diagnostic().message));
      } catch (const std::exception& e) {  // must not leave the worker thread, which would terminate the process
        outcomes[i].passed = false;
        outcomes[i].rows.push_back(workbench::failed_row(workbench::Backend::interp, e.what()));
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::min<int>(a.jobs, static_cast<int>(files.size())); ++j) workers.emplace_back(work);
  work();
  for (auto& t : workers) t.join();
  progress.reset();  // the line is erased before the results are printed
  int passed = 0, failed = 0, skipped = 0;
  size_t values = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& out = outcomes[i];
    values += out.values_compared;
    bool ran = !out.rows.empty();
    if (!ran) ++skipped;
    for (const auto& why : out.skipped)
      if (!a.quiet || !ran) std::cout << "SKIP " << files[i] << ": " << why << "\n";
    if (!ran) continue;
    (out.passed ? passed : failed)++;
    if (a.quiet && out.passed) continue;
    std::cout << (out.passed ? "PASS " : "FAIL ") << files[i] << "\n";
    if (!out.passed) {
      std::string table = workbench::format_backend_table(out.rows);
      for (size_t at = 0; at < table.size();) {
        size_t e = table.find('\n', at);
        std::cout << "    " << table.substr(at, e - at) << "\n";
        at = e + 1;
      }
    }
  }
  std::cout << fmt::format("fixtures on {}: {} passed, {} failed, {} skipped; {} value(s) compared\n", a.backend,
                           passed, failed, skipped, values);
  return failed || passed == 0 ? 1 : 0;
}

}  // namespace pb::cli
