// `run --backend` and `fixture check --backend`: the CLI face of workbench/workspace/backend.h.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <optional>
#include <thread>

#include "ir/diagnostic.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/progress_line.h"
#include "workbench/workspace/backend.h"
#include "workbench/workspace/fixture.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"

namespace pb::cli {

int cmd_run_backend(const RunArgs& a) {
  std::vector<workbench::Backend> backends = workbench::parse_backends(a.backend);
  auto k = workbench::load_source(a.file, a.dump).kernel;
  if (!report_verify(*k, a.file)) return 1;
  workbench::RunRequest req = make_run_request(a);
  bool vulkan = std::find(backends.begin(), backends.end(), workbench::Backend::vulkan) != backends.end();
  if (a.shuffle || (a.f64 && vulkan))
    throw UserError("--shuffle applies to the interpreter only, --f64 to the interpreter and the cpu",
                    "drop them, or use --backend=interp or cpu");
  if (a.check_global_access && vulkan)
    throw UserError(
        "--check-global-access runs on the interpreter and the cpu, which can run a launch's iterations in the "
        "interpreter's order; vulkan cannot",
        "use --backend=interp or --backend=cpu (and `passbench replay FILE --passes=check_global_access` for the "
        "static check)");
  if (a.stack_usage)
    throw UserError("--stack-usage reports the interpreter's or the cpu's stack depths",
                    "use --backend=interp or --backend=cpu (without --time)");
  workbench::BackendOptions o;
  o.device = a.device;
  o.interp = req.options;
  const std::string* pipeline = a.grad ? &a.passes : nullptr;
  try {
    if (backends.size() == 1) {
      workbench::BackendRun run = workbench::run_on_backend(backends.front(), *k, req, pipeline, o);
      for (const auto& t : run.launches) std::cerr << t.printed;
      if (a.time)
        for (const auto& t : run.launches)
          std::cerr << fmt::format(
              "{} on {}{}: kernel {:.3f} ms{}, launch {:.3f} ms\n", t.kernel, workbench::backend_name(backends.front()),
              t.device.empty() ? "" : " (" + t.device + ")", t.kernel_ms, t.timed ? " (timestamps)" : "", t.launch_ms);
      std::cout << run.values.dump(2) << "\n";
      return 0;
    }
    auto rows = workbench::compare_backends(*k, req, pipeline, backends, o, {a.rtol_f32, a.rtol_f64});
    std::cout << workbench::format_backend_table(rows);
    bool ok = !rows.empty();
    for (const auto& r : rows) ok = ok && r.ok;
    if (rows.empty()) std::cout << "nothing compared: name a backend besides interp\n";
    return ok ? 0 : 1;
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
  o.interp.max_steps = 20'000'000;
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
        outcomes[i].rows.push_back({});
        outcomes[i].rows.back().ok = false;
        outcomes[i].rows.back().array = "-";
        outcomes[i].rows.back().error = e.diagnostic().message;
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::min<int>(a.jobs, static_cast<int>(files.size())); ++j) workers.emplace_back(work);
  work();
  for (auto& t : workers) t.join();
  progress.reset();  // the line is erased before the results are printed
  int passed = 0, failed = 0, skipped = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& o2 = outcomes[i];
    if (!o2.skipped.empty()) {
      ++skipped;
      if (!a.quiet) std::cout << "SKIP " << files[i] << ": " << o2.skipped << "\n";
      continue;
    }
    (o2.passed ? passed : failed)++;
    if (a.quiet && o2.passed) continue;
    std::cout << (o2.passed ? "PASS " : "FAIL ") << files[i] << "\n";
    if (!o2.passed) {
      std::string table = workbench::format_backend_table(o2.rows);
      for (size_t p = 0; p < table.size();) {
        size_t e = table.find('\n', p);
        std::cout << "    " << table.substr(p, e - p) << "\n";
        p = e + 1;
      }
    }
  }
  std::cout << fmt::format("fixtures on {}: {} passed, {} failed, {} skipped\n", a.backend, passed, failed, skipped);
  return failed || passed == 0 ? 1 : 0;
}

}  // namespace pb::cli
