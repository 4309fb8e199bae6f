// The subcommands of `passbench`. Each returns the process exit code: 0 success, 1 a check,
// verification or run failure, 2 usage error or bad input. They throw UserError for bad input;
// main() prints it and exits 2.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/backend.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/run.h"

namespace pb::cli {

// Prints the verifier's errors for `k` on stderr; returns true when there were none.
bool report_verify(const ir::Kernel& k, const std::string& file);

struct PrintArgs {
  std::string file;
  std::string dump;  // which dump of a multi-dump log (--dump); "" = the last
  std::string emit = "text";
  bool renumber = false;
};
int cmd_print(const PrintArgs& a);

int cmd_verify(const std::string& file, const std::string& dump);
// Lists the dumps a log holds, with their stage titles.
int cmd_dumps(const std::string& file);

struct RunArgs {
  std::string file;
  std::string dump;  // which dump of a multi-dump log (--dump); "" = the last
  std::string inputs;
  std::vector<std::string> seed_grads;  // FIELD=VALUE
  bool shuffle = false;
  uint64_t seed = 0;
  bool f64 = false;
  uint64_t max_steps = runtime::kDefaultMaxSteps;           // 0: no limit
  bool grad = false;                                        // forward + reverse (gradient_command.cpp)
  bool stack_usage = false;                                 // each stack's deepest depth against its capacity (stderr)
  std::string passes = workbench::kDefaultReversePipeline;  // with grad: makes the reverse kernel
  std::string global_access = "error";                      // with grad: --global-access
  bool check_global_access = false;                         // refuse a write to an element read earlier in the launch
  bool dual = false;                                        // the tangent kernel with seeded duals (forward mode)
  std::vector<std::string> seed_duals;                      // FIELD=VALUE, with dual
  std::string dual_passes = "forward_ad";                   // with dual: makes the tangent kernel
  std::string backend = "interp";  // --backend: interp, cpu, vulkan, all, or a comma list (backend_command.cpp)
  std::string device;              // --device: a substring of the Vulkan device's name
  double rtol_f32 = 1e-5, rtol_f64 = 1e-12;  // the comparison table's tolerances
  bool time = false;                         // --time: each launch's kernel and launch time (stderr)
  int64_t part_statements = -1;              // --part-statements: the cpu backend's function size
};
// One backend: its values (JSON on stdout); several: the comparison table, exit 1 on a
// difference or when nothing was compared, 2 when a backend refused part of the request.
int cmd_run(const RunArgs& a);
// A refusal as the CLI prints it: the message with the flags of the parts refused ("a stack-usage
// report (--stack-usage)").
std::string refusal_text(const runtime::Refusal& e);

// Runs `check` on each backend `spec` names (interp, cpu, vulkan, all or a comma list) and returns
// the worst exit code; a backend that refuses the check is printed and counts as 2.
int on_each_backend(const std::string& spec, const std::string& file,
                    const std::function<int(workbench::Backend)>& check);
// FIELD=VALUE pairs of a seed option (`flag` names it in the error).
std::vector<std::pair<std::string, double>> parse_seeds(const std::vector<std::string>& seeds, const std::string& flag);
// The inputs, seeds and options of `run`. Throws UserError for unreadable inputs or bad seeds.
workbench::RunRequest make_run_request(const RunArgs& a);

struct FixtureArgs {
  bool update = false;
  std::vector<std::string> paths;
  std::string filter;   // only fixtures whose path contains this
  int jobs = 1;         // fixtures checked at once
  bool quiet = false;   // print failures and the summary only
  std::string backend;  // check --backend: compare the backends with the interpreter instead
  std::string device;
  double rtol_f32 = 1e-5, rtol_f64 = 1e-12;
  int64_t part_statements = -1;  // check --part-statements: the cpu backend's function size
};
int cmd_fixture(const FixtureArgs& a);

struct NewFixtureArgs {
  std::string file, output, dump, passes, inputs, loss, description;
  bool force = false;
};
// Writes a fixture from FILE (workbench/workspace/fixture_new.h) and checks it: 0 it passes, 1 it
// was written but fails (a gradient that differs from finite differences, ...).
int cmd_fixture_new(const NewFixtureArgs& a);
int cmd_fixture_backend(const FixtureArgs& a);

}  // namespace pb::cli
