#include "workbench/cli/commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <optional>
#include <thread>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "workbench/cli/progress_line.h"
#include "workbench/workspace/execute.h"
#include "workbench/workspace/fixture.h"
#include "workbench/workspace/fixture_new.h"
#include "workbench/workspace/forward.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/run.h"
#include "workbench/workspace/workspace.h"

namespace pb::cli {

int cmd_print(const PrintArgs& a) {
  auto k = workbench::load_kernel(a.file, a.dump);
  if (a.renumber) k->renumber();
  if (a.emit == "json")
    std::cout << ir::to_json(*k).dump(2) << "\n";
  else
    std::cout << ir::print_kernel(*k);
  return 0;
}

bool report_verify(const ir::Kernel& k, const std::string& file) {
  auto errors = ir::verify(k);
  for (const auto& e : errors) std::cerr << fmt::format("{}: verifier error: {}\n", file, e.format());
  if (!errors.empty())
    std::cerr << fmt::format("{}: {} verifier error(s); the kernel is not valid CHI IR\n", file, errors.size());
  return errors.empty();
}

int cmd_verify(const std::string& file, const std::string& dump) {
  auto k = workbench::load_kernel(file, dump);
  if (!report_verify(*k, file)) return 1;
  std::cout << "ok\n";
  return 0;
}

int cmd_dumps(const std::string& file) {
  auto dumps = workbench::list_dumps(file);
  if (dumps.empty()) throw UserError(fmt::format("{}: no kernel dump found", file), "give a print_ir / QD_DUMP_IR log");
  std::cout << ir::format_dump_list(dumps);
  return 0;
}

std::vector<std::pair<std::string, double>> parse_seeds(const std::vector<std::string>& seeds,
                                                        const std::string& flag) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& s : seeds) {
    auto eq = s.find('=');
    double v = 0;
    bool ok = eq != std::string::npos && eq > 0;
    if (ok) {
      try {
        size_t used = 0;
        v = std::stod(s.substr(eq + 1), &used);
        ok = used == s.size() - eq - 1;
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok)
      throw UserError(fmt::format("{} '{}' is not FIELD=VALUE", flag, s), fmt::format("for example {} y=1", flag));
    out.emplace_back(s.substr(0, eq), v);
  }
  return out;
}

std::string refusal_text(const runtime::Refusal& e) {
  std::string flags;
  for (runtime::RequestPart p : e.parts) {
    const char* flag = p == runtime::RequestPart::shuffle               ? "--shuffle"
                       : p == runtime::RequestPart::f64_mode            ? "--f64"
                       : p == runtime::RequestPart::check_global_access ? "--check-global-access"
                       : p == runtime::RequestPart::stack_usage         ? "--stack-usage"
                                                                        : nullptr;
    if (flag) flags += (flags.empty() ? "" : ", ") + std::string(flag);
  }
  std::string text = e.what();
  if (flags.empty()) return text;
  return fmt::format("{}\n  (the options refused: {})", text, flags);
}

int on_each_backend(const std::string& spec, const std::string& file,
                    const std::function<int(workbench::Backend)>& check) {
  int worst = 0;
  for (workbench::Backend b : workbench::parse_backends(spec)) {
    int code = 0;
    try {
      code = check(b);
    } catch (const runtime::Refusal& e) {
      std::cerr << fmt::format("{}: refused on {}: {}\n", file, workbench::backend_name(b), refusal_text(e));
      code = 2;
    } catch (const workbench::RunFailure& e) {
      std::cerr << file << ": " << e.what() << "\n";
      code = 1;
    }
    worst = std::max(worst, code);
  }
  return worst;
}

workbench::RunRequest make_run_request(const RunArgs& a) {
  workbench::RunRequest req;
  workbench::CommandInputs inputs = workbench::command_inputs(a.inputs, a.file);
  if (inputs.json) req.inputs = std::move(*inputs.json);
  req.inputs_name = inputs.name;
  req.kernel_name = a.file;
  req.seed_grads = parse_seeds(a.seed_grads, "--seed-grad");
  req.seed_duals = parse_seeds(a.seed_duals, "--seed-dual");
  req.options.shuffle = a.shuffle;
  req.options.seed = a.seed;
  req.options.f64 = a.f64;
  req.options.max_steps = a.max_steps;
  req.options.check_global_access = a.check_global_access;
  req.stack_usage = a.stack_usage;
  if (a.dual) {
    req.mode = runtime::Mode::forward;
    req.pipeline = a.dual_passes;
  } else if (a.grad) {
    req.mode = runtime::Mode::reverse;
    req.pipeline = workbench::reverse_pipeline_for_access_rule(a.passes, a.global_access);
  }
  return req;
}

int cmd_fixture_new(const NewFixtureArgs& a) {
  workbench::Workspace ws;
  ws.open(a.file, a.dump);
  if (const auto& error = ws.source_error()) throw UserError(*error);
  if (!a.passes.empty()) ws.set_pipeline(a.passes);
  if (!a.inputs.empty()) ws.set_inputs(workbench::parse_json_text(workbench::read_file(a.inputs), a.inputs), a.inputs);
  workbench::NewFixtureOptions o;
  o.description = a.description;
  o.loss = a.loss;
  o.overwrite = a.force;
  workbench::FixtureOutcome r = workbench::save_new_fixture(ws, a.output, o);
  if (r.passed) {
    std::cout << fmt::format("wrote {}: PASS\n", a.output);
    return 0;
  }
  std::cout << fmt::format("wrote {}: FAIL\n", a.output);
  for (const auto& f : r.failures) std::cout << "  " << f << "\n";
  return 1;
}

int cmd_fixture(const FixtureArgs& a) {
  if (!a.backend.empty() && !a.update) return cmd_fixture_backend(a);
  auto all = workbench::expand_fixture_paths(a.paths);
  std::vector<std::string> files;
  for (const auto& f : all)
    if (a.filter.empty() || f.find(a.filter) != std::string::npos) files.push_back(f);
  if (files.empty())
    throw UserError(all.empty() ? "no fixtures found" : fmt::format("no fixture path contains '{}'", a.filter),
                    "pass fixture files or directories holding *.fixture.json");
  if (a.jobs < 1) throw UserError(fmt::format("-j {}: at least one job", a.jobs), "for example -j 2");
  // Each fixture is independent; results are printed in path order whatever finishes first.
  std::vector<workbench::FixtureOutcome> outcomes(files.size());
  std::atomic<size_t> next{0}, done{0};
  std::optional<ProgressLine> progress(std::in_place, a.update ? "fixture update" : "fixture check");
  auto work = [&] {
    for (size_t i; (i = next++) < files.size();) {
      progress->set(fixture_progress(i, files.size(), done, files[i]));
      // An exception must not leave a worker thread (that terminates the process): it fails the fixture.
      try {
        outcomes[i] = a.update ? workbench::update_fixture(files[i]) : workbench::check_fixture(files[i]);
      } catch (const std::exception& e) {
        outcomes[i] = {files[i], false, {fmt::format("passbench: {}", e.what())}, false};
      }
      ++done;
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::min<int>(a.jobs, static_cast<int>(files.size())); ++j) workers.emplace_back(work);
  work();
  for (auto& t : workers) t.join();
  progress.reset();  // the line is erased before the results are printed
  int passed = 0, failed = 0, changed = 0, unchanged = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& o = outcomes[i];
    const auto& f = files[i];
    bool quiet_line = a.quiet && o.passed;
    if (a.update) {
      changed += o.changed;
      unchanged += o.passed && !o.changed;
      if (!quiet_line || o.changed)
        std::cout << (o.passed ? (o.changed ? "UPDATED " : "unchanged ") : "ERROR ") << f << "\n";
    } else if (!quiet_line) {
      std::cout << (o.passed ? "PASS " : "FAIL ") << f << "\n";
    }
    for (const auto& msg : o.failures) {
      std::string indented = "    " + msg;
      for (size_t p = indented.find('\n'); p != std::string::npos; p = indented.find('\n', p + 1))
        indented.insert(p + 1, "    ");
      std::cout << indented << "\n";
    }
    (o.passed ? passed : failed)++;
  }
  if (a.update)
    std::cout << fmt::format("fixtures: {} updated, {} unchanged, {} with errors\n", changed, unchanged, failed);
  std::cout << fmt::format("fixtures: {} passed, {} failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace pb::cli
