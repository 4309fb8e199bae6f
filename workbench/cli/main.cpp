// `passbench`: the command-line face of the workbench. Argument parsing and error reporting
// only; the work happens in workbench/workspace.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "passes/pipeline.h"
#include "workbench/cli/bisect_command.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/compile_command.h"
#include "workbench/cli/difftest_command.h"
#include "workbench/cli/forward_command.h"
#include "workbench/cli/gradient_command.h"
#include "workbench/cli/replay_command.h"

namespace {

// --dump on every command that loads a kernel: which dump of a print_ir log to read.
void add_dump_option(CLI::App* cmd, std::string& dump) {
  cmd->add_option("--dump", dump, "which dump of a log holding one per stage: N or a title (default: the last)");
}

// Options `compile` and `compare-lowerings` share; `with_choices` adds the four adstack choices.
CLI::Option* add_codegen_options(CLI::App* cmd, pb::cli::CodegenArgs& a, bool with_choices) {
  cmd->add_option("FILE", a.file, "kernel file, or a fixture carrying a pipeline (- for stdin)")->required();
  add_dump_option(cmd, a.dump);
  auto* passes = cmd->add_option(
      "--passes", a.passes, "pipeline to run before compiling, e.g. reverse_ad (default: the fixture's, else none)");
  if (with_choices) {
    cmd->add_option("--adstack-storage", a.storage, "where stack entries live (default heap)")
        ->check(CLI::IsMember({"heap", "function"}));
    cmd->add_option("--adstack-count", a.count, "where stack counts live (default shared-array)")
        ->check(CLI::IsMember({"per-stack", "shared-array"}));
    cmd->add_option("--adstack-push", a.push, "how a push guards its store (default select)")
        ->check(CLI::IsMember({"branch", "select"}));
    cmd->add_option("--bounds-check", a.bounds, "record stack overflow in the flags buffer (default on)")
        ->check(CLI::IsMember({"on", "off"}));
  }
  cmd->add_option(
      "--lowering", a.lowering,
      "more lowering options as KEY=VALUE,...: float64 int64 atomic-float-add inf-nan print capacity workgroup");
  cmd->add_option("--float64", a.float64, "Float64 capability; auto: on when the kernel uses f64")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--int64", a.int64, "Int64 capability; auto: on when the kernel uses i64/u64 or f64 atomics")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option(
         "--max-id-bound", a.max_id_bound,
         "no pass may allocate an ID at or above N, nor any module reach an ID bound above N (up to 4294967295)")
      ->capture_default_str();
  cmd->add_flag("--no-intermediate-dce", a.no_intermediate_dce,
                "drop the AggressiveDCE passes between the SSA passes (keep the last)");
  cmd->add_flag("--no-compact-ids", a.no_compact_ids, "leave CompactIds out of the optimizer pipeline");
  cmd->add_flag("--measure-passes", a.measure_passes,
                "run the optimizer one pass at a time and measure the IDs each pass needs (slower; implied by "
                "--spirv-opt-table and --spirv-opt-report)");
  cmd->add_flag("--spirv-opt-fallback", a.fallback,
                "when the optimizer fails, use the UNOPTIMIZED module (with a warning) instead of failing");
  return passes;
}

}  // namespace

// For each unexpected `--option` in CLI11's message, the nearest option of the command that was
// given (or of any command): opt's did-you-mean.
void suggest_options(CLI::App& app, const std::string& message) {
  std::vector<const CLI::App*> commands;
  for (const CLI::App* c = &app;;) {
    auto parsed = c->get_subcommands();
    if (parsed.empty()) break;
    c = parsed.front();
    commands.push_back(c);
  }
  if (commands.empty()) commands.push_back(&app);
  std::vector<std::string> names;
  for (const CLI::App* c : commands)
    for (const CLI::Option* o : c->get_options())
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  std::istringstream words(message.substr(message.find(':') + 1));
  for (std::string w; words >> w;) {
    if (!w.starts_with("--")) continue;
    std::string given = w.substr(0, w.find('='));
    const std::string* best = nullptr;
    size_t best_distance = 4;  // further than this is no suggestion
    for (const std::string& n : names)
      if (size_t d = pb::passes::edit_distance(given, n); d < best_distance) best = &n, best_distance = d;
    if (best) std::cerr << fmt::format("did you mean '{}' (instead of '{}')?\n", *best, given);
  }
}

// The function-try-block catches what building the command line may throw (CLI11 reports a bad
// option table by exception): nothing escapes main.
static int run_command(int argc, char** argv) try {
  CLI::App app{"passbench: a pass workbench for the CHI IR of Taichi-family compilers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "passbench 0.1.0");

  pb::cli::PrintArgs print_args;
  auto* print = app.add_subcommand("print", "Print a kernel in canonical text or JSON");
  print->add_option("FILE", print_args.file, "kernel file (text or JSON; - for stdin)")->required();
  print->add_option("--emit", print_args.emit, "output form")->check(CLI::IsMember({"text", "json"}));
  add_dump_option(print, print_args.dump);
  print->add_flag("--renumber", print_args.renumber, "number statements densely ($0, $1, ...) in pre-order");

  std::string verify_file;
  auto* verify = app.add_subcommand("verify", "Check a kernel with the verifier; prints ok or the errors");
  verify->add_option("FILE", verify_file, "kernel file (- for stdin)")->required();
  std::string verify_dump;
  add_dump_option(verify, verify_dump);

  std::string dumps_file;
  auto* dumps =
      app.add_subcommand("dumps", "List the dumps a print_ir log holds, with their stage titles (for --dump)");
  dumps->add_option("FILE", dumps_file, "log or kernel file (- for stdin)")->required();

  pb::cli::RunArgs run_args;
  auto* run = app.add_subcommand("run", "Run a kernel on the reference interpreter and print the fields as JSON");
  run->add_option("FILE", run_args.file, "kernel file or fixture (- for stdin)")->required();
  add_dump_option(run, run_args.dump);
  run->add_option("--inputs", run_args.inputs,
                  "inputs JSON: {\"fields\": {NAME: {shape, data, grad}}, \"args\": [...]} (default: a "
                  "fixture's own inputs)");
  run->add_option("--seed-grad", run_args.seed_grads,
                  "FIELD=VALUE: set every element of FIELD's gradient before running");
  run->add_flag("--shuffle", run_args.shuffle, "run the parallel loop's iterations in a shuffled order");
  run->add_option("--seed", run_args.seed, "seed for --shuffle");
  run->add_flag("--f64", run_args.f64, "compute every f32 value in f64 (for finite differences)");
  run->add_option("--max-steps", run_args.max_steps,
                  "fail after N executed statements and loop iterations (0: no limit)")
      ->capture_default_str();
  auto* run_grad =
      run->add_flag("--grad", run_args.grad, "run forward, seed the gradients, then run the reverse kernel");
  run->add_flag("--stack-usage", run_args.stack_usage,
                "print each autodiff stack's deepest depth against its capacity (stderr; compared with several "
                "backends)");
  run->add_option("--passes", run_args.passes, "with --grad: the pipeline that makes the reverse kernel")
      ->capture_default_str()
      ->needs(run_grad);
  run->add_option("--global-access", run_args.global_access,
                  "with --grad: a violation of the global data access rule is an error (refused) or a warn(ing); "
                  "warn runs reverse_ad{global_access=warn}")
      ->check(CLI::IsMember({"error", "warn"}))
      ->capture_default_str()
      ->needs(run_grad);
  run->add_option("--backend", run_args.backend,
                  "interp (the reference interpreter), cpu (LLVM JIT), vulkan, or all / a comma list (every output "
                  "against the interpreter; exit 1 beyond tolerance or when nothing compared, 2 when one refuses)")
      ->capture_default_str();
  run->add_flag("--time", run_args.time,
                "print each launch's compile, transfer and kernel time (Vulkan: timestamp queries) to stderr");
  run->add_option("--device", run_args.device, "Vulkan: a substring of the device name (default: the first device)");
  run->add_option("--part-statements", run_args.part_statements,
                  "cpu: emit blocks of more statements than N as functions of about N each, which keeps LLVM's "
                  "compile time linear in the kernel (default 500; 0: one function per task)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  run->add_option("--rtol-f32", run_args.rtol_f32, "with several backends: relative tolerance for f32")
      ->capture_default_str();
  run->add_option("--rtol-f64", run_args.rtol_f64, "with several backends: relative tolerance for f64")
      ->capture_default_str();

  run->add_flag(
      "--check-global-access", run_args.check_global_access,
      "fail at the first write to an element of a differentiable field or ndarray read earlier in the launch");
  auto* run_dual =
      run->add_flag("--dual", run_args.dual, "run the tangent kernel (forward mode) after seeding the duals");
  run->add_option("--seed-dual", run_args.seed_duals, "FIELD=VALUE: with --dual, set every element of FIELD's dual")
      ->needs(run_dual);
  run->add_option("--dual-passes", run_args.dual_passes, "with --dual: the pipeline that makes the tangent kernel")
      ->capture_default_str()
      ->needs(run_dual);
  run_dual->excludes(run_grad);

  pb::cli::JvpcheckArgs jvp_args;
  auto* jvpcheck = app.add_subcommand("jvpcheck", "Compare forward-mode tangents with central finite differences");
  jvpcheck->add_option("FILE", jvp_args.file, "kernel file (- for stdin)")->required();
  add_dump_option(jvpcheck, jvp_args.dump);
  jvpcheck->add_option("--wrt", jvp_args.options.wrt,
                       "an input array (repeatable; default: every differentiable array)");
  jvpcheck->add_option("--out", jvp_args.options.out, "an output array (repeatable; default: every other one)");
  jvpcheck->add_option("--inputs", jvp_args.inputs, "inputs JSON, as for run (default: a fixture's own)");
  jvpcheck
      ->add_option(
          "--backend", jvp_args.backend,
          "where the tangents run: interp, cpu, vulkan, all or a comma list (finite differences stay on interp)")
      ->capture_default_str();
  jvpcheck->add_option("--eps", jvp_args.options.eps, "finite-difference step, relative: h = eps * max(1, |x|)")
      ->capture_default_str();
  jvpcheck->add_option("--rel", jvp_args.options.rel, "relative tolerance")->capture_default_str();
  jvpcheck->add_option("--abs", jvp_args.options.abs, "absolute tolerance")->capture_default_str();
  jvpcheck->add_option("--passes", jvp_args.options.pipeline, "the pipeline that makes the tangent kernel")
      ->capture_default_str();
  jvpcheck
      ->add_option("--max-steps", jvp_args.options.max_steps,
                   "fail a run after N executed statements and loop iterations (0: no limit)")
      ->capture_default_str();

  pb::cli::AdjointcheckArgs adj_args;
  auto* adjointcheck =
      app.add_subcommand("adjointcheck", "Cross-check forward and reverse mode: w . (J v) == (J^T w) . v");
  adjointcheck->add_option("FILE", adj_args.file, "kernel file (- for stdin)")->required();
  add_dump_option(adjointcheck, adj_args.dump);
  adjointcheck->add_option("--inputs", adj_args.inputs, "inputs JSON, as for run (default: a fixture's own)");
  adjointcheck
      ->add_option("--backend", adj_args.backend,
                   "where the tangent and reverse runs happen: interp, cpu, vulkan, all or a comma list")
      ->capture_default_str();
  adjointcheck->add_option("--seed", adj_args.options.seed, "seed of the random directions")->capture_default_str();
  adjointcheck->add_option("--trials", adj_args.options.trials, "random (v, w) pairs")->capture_default_str();
  adjointcheck->add_option("--rel", adj_args.options.rel, "relative tolerance")->capture_default_str();
  adjointcheck->add_option("--abs", adj_args.options.abs, "absolute tolerance")->capture_default_str();
  adjointcheck
      ->add_option("--forward-passes", adj_args.options.forward_pipeline, "the pipeline that makes the tangent kernel")
      ->capture_default_str();
  adjointcheck
      ->add_option("--reverse-passes", adj_args.options.reverse_pipeline, "the pipeline that makes the reverse kernel")
      ->capture_default_str();
  adjointcheck
      ->add_option("--max-steps", adj_args.options.max_steps,
                   "fail a run after N executed statements and loop iterations (0: no limit)")
      ->capture_default_str();

  pb::cli::GradcheckArgs gc_args;
  auto* gradcheck = app.add_subcommand("gradcheck", "Compare reverse-mode gradients with central finite differences");
  gradcheck->add_option("FILE", gc_args.file, "kernel file (- for stdin)")->required();
  add_dump_option(gradcheck, gc_args.dump);
  gradcheck->add_option("--loss", gc_args.options.loss,
                        "the output field; the loss is the sum of its elements (default: a fixture's gradcheck.loss)");
  gradcheck->add_option("--wrt", gc_args.options.wrt,
                        "a field to differentiate by (repeatable; default: a fixture's gradcheck.wrt, else every field "
                        "with a gradient field but the loss)");
  gradcheck->add_option("--inputs", gc_args.inputs, "inputs JSON, as for run (default: a fixture's own)");
  gradcheck->add_option("--eps", gc_args.options.eps, "finite-difference step, relative: h = eps * max(1, |x|)")
      ->capture_default_str();
  gradcheck->add_option("--rel", gc_args.options.rel, "relative tolerance")->capture_default_str();
  gradcheck->add_option("--abs", gc_args.options.abs, "absolute tolerance")->capture_default_str();
  gradcheck->add_option("--passes", gc_args.options.pipeline, "the pipeline that makes the reverse kernel")
      ->capture_default_str();
  gradcheck
      ->add_option("--global-access", gc_args.global_access,
                   "a violation of the global data access rule is an error (refused) or a warn(ing); warn runs "
                   "reverse_ad{global_access=warn}")
      ->check(CLI::IsMember({"error", "warn"}))
      ->capture_default_str();
  gradcheck
      ->add_option("--backend", gc_args.backend,
                   "where the analytic gradient runs: interp, cpu, vulkan, all or a comma list (finite differences "
                   "stay on interp)")
      ->capture_default_str();
  gradcheck
      ->add_option("--max-steps", gc_args.options.max_steps,
                   "fail a run after N executed statements and loop iterations (0: no limit)")
      ->capture_default_str();

  pb::cli::DifftestArgs difftest_args;
  auto* difftest =
      app.add_subcommand("difftest",
                         "Check a kernel, or kernels generated from seeds, against every oracle: backends, gradients, "
                         "forward mode, pipelines, the global access check");
  difftest->add_option("FILE", difftest_args.file, "kernel file or fixture (or give --seeds)");
  add_dump_option(difftest, difftest_args.dump);
  difftest->add_option("--inputs", difftest_args.inputs,
                       "with FILE: inputs JSON, as for run (default: a fixture's own)");
  difftest->add_option("--loss", difftest_args.loss,
                       "gradcheck's loss field (default: a fixture's, else the first written field with a gradient)");
  difftest->add_option("--seeds", difftest_args.seeds, "A:B: check the kernels generated from seeds A to B-1");
  difftest->add_option("--shard", difftest_args.shard, "I/N: of the seeds, only those with seed % N == I");
  difftest->add_option("--out", difftest_args.out,
                       "write each finding here: NAME.chi (reduced), NAME.original.chi, NAME.inputs.json, NAME.out");
  difftest->add_flag("!--no-reduce", difftest_args.reduce, "write findings as found, without removing statements");
  difftest->add_option("--backend", difftest_args.backend, "the backends compared (the interpreter always runs)")
      ->capture_default_str();
  difftest->add_option("--device", difftest_args.device, "Vulkan: a substring of the device name");
  difftest->add_option("--rtol-f32", difftest_args.rtol_f32, "relative tolerance for f32 (backends, pipelines)")
      ->capture_default_str();
  difftest->add_option("--rtol-f64", difftest_args.rtol_f64, "relative tolerance for f64 (backends, pipelines)")
      ->capture_default_str();
  difftest->add_option("-j,--jobs", difftest_args.jobs, "with --seeds: kernels checked at once")->capture_default_str();
  difftest->add_flag("-v,--verbose", difftest_args.verbose, "with --seeds: every oracle's line for every kernel");

  pb::cli::ReplayArgs replay_args;
  std::string print_changed;
  bool no_verify_each = false;
  auto* replay = app.add_subcommand("replay", "Run a kernel through a pipeline of passes and show what each pass did");
  replay->add_option("FILE", replay_args.file, "kernel file, or a fixture/reproducer carrying a pipeline (- for stdin)")
      ->required();
  add_dump_option(replay, replay_args.dump);
  auto* passes_opt = replay->add_option("--passes", replay_args.passes,
                                        "pipeline, e.g. 'simplify,dce' or 'simplify{max_rounds=4},dce'");
  replay->add_flag("--print-after-all", replay_args.print_after_all, "print the IR after every pass (stderr)");
  replay->add_flag("--print-before-all", replay_args.print_before_all, "print the IR before every pass (stderr)");
  replay->add_flag("--print-pipeline-passes", replay_args.print_pipeline_passes,
                   "print the pipeline with named pipelines expanded (as --passes takes it), then exit");
  replay->add_flag("--annotate-ib", replay_args.annotate_ib,
                   "mark each independent block (where autodiff puts forward and reverse code) in printed IR");
  replay->add_option("--print-after", replay_args.print_after, "print the IR after each run of PASS (repeatable)");
  replay->add_option("--print-before", replay_args.print_before, "print the IR before each run of PASS (repeatable)");
  auto* pc = replay
                 ->add_option("--print-changed", print_changed,
                              "print the IR after passes that changed it; =diff for a unified diff")
                 ->expected(0, 1)
                 ->check(CLI::IsMember({"", "full", "diff"}));
  replay->add_flag("--time-passes", replay_args.time_passes, "print a table of pass wall times and statement counts");
  replay->add_flag("--stats", replay_args.stats, "print the passes' non-zero statistics");
  replay->add_flag("--stats-all", replay_args.stats_all, "with --stats: zero counters and every per-item note too");
  replay->add_flag("--verify-each", replay_args.verify_each, "verify the IR after every pass as written (the default)");
  replay->add_flag("--no-verify-each", no_verify_each, "do not verify after every pass");
  replay->add_flag("--verify-expanded", replay_args.verify_expanded,
                   "verify after each pass a named pipeline (reverse_ad) expands to, not only after its last");
  replay->add_option("--emit", replay_args.emit, "form of the resulting IR")->check(CLI::IsMember({"text", "json"}));
  replay->add_option("-o,--output", replay_args.output, "write the resulting IR here instead of stdout");
  replay->add_option("--inputs", replay_args.inputs,
                     "inputs JSON: run the result on the interpreter with them (--run alone: a fixture's own)");
  replay->add_flag("--run", replay_args.run,
                   "run the resulting kernel on the interpreter and print the fields as JSON");
  replay->add_option("--stop-after", replay_args.stop_after, "stop after the first run of PASS");
  replay->add_option("--stop-before", replay_args.stop_before, "stop before the first run of PASS");
  replay->add_option("--bisect-limit", replay_args.bisect_limit,
                     "run only the first N pass executions (like opt-bisect-limit)");
  replay->add_option("--reproducer-dir", replay_args.reproducer_dir,
                     "where to write a reproducer when a pass fails (default: the temp folder)");
  replay->add_option("--color", replay_args.color, "colour diffs")->check(CLI::IsMember({"auto", "always", "never"}));

  pb::cli::CompileArgs compile_args;
  auto* compile = app.add_subcommand(
      "compile", "Compile a kernel to SPIR-V, SPIR-V assembly, MSL or GLSL, with the optimizer's ID growth");
  auto* compile_passes = add_codegen_options(compile, compile_args.codegen, true);
  compile
      ->add_option("--target", compile_args.target,
                   "what to write: spirv (binary), spvasm, msl, glsl, or llvm (LLVM IR before and after optimization)")
      ->required()
      ->check(CLI::IsMember({"spirv", "spvasm", "msl", "glsl", "llvm"}));
  compile->add_option("--opt-level", compile_args.opt_level, "with --target=llvm: LLVM's optimization level, 0 to 3")
      ->capture_default_str()
      ->check(CLI::Range(0, 3));
  compile
      ->add_option("--part-statements", compile_args.part_statements,
                   "with --target=llvm: as run --part-statements (blocks of more than N statements in functions "
                   "of their own; default 500, 0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  compile->add_flag("--no-optimize", compile_args.no_optimize, "write the emitter's module without running spirv-opt");
  compile->add_option("--spirv-opt-report", compile_args.report, "write every task's optimizer report (JSON) to FILE");
  compile->add_flag("--spirv-opt-table", compile_args.table, "print every task's per-pass ID growth table (stderr)");
  compile->add_option("-o,--output", compile_args.output,
                      "output file, or a directory (existing or ending in /) for one file per task");

  pb::cli::CompareArgs compare_args;
  auto* compare = app.add_subcommand(
      "compare-lowerings", "Compile a kernel under all 16 adstack lowerings and tabulate ID bounds and MSL size");
  auto* compare_passes = add_codegen_options(compare, compare_args.codegen, false);
  compare->add_flag("--json", compare_args.json, "print the table as JSON");

  auto* passes_cmd = app.add_subcommand("passes", "List every pass with its options and statistics");

  pb::cli::BisectArgs bisect_args;
  auto* bisect = app.add_subcommand("bisect-result",
                                    "Run the kernel after every pass and name the first pass that changed the answer");
  bisect->add_option("FILE", bisect_args.file, "kernel file, or a fixture carrying a pipeline and inputs")->required();
  add_dump_option(bisect, bisect_args.dump);
  bisect->add_option("--passes", bisect_args.passes, "pipeline (default: the fixture's)");
  bisect->add_option("--inputs", bisect_args.inputs,
                     "inputs JSON, as for run (default: the fixture's, or FILE.inputs.json)");
  bisect->add_option("--rel", bisect_args.rel, "relative tolerance")->capture_default_str();
  bisect->add_option("--abs", bisect_args.abs, "absolute tolerance")->capture_default_str();

  pb::cli::FixtureArgs fixture_args;
  auto* fixture = app.add_subcommand("fixture", "Regression fixtures");
  fixture->require_subcommand(1);
  auto* check = fixture->add_subcommand("check", "Replay fixtures and compare with their expectations");
  auto* update = fixture->add_subcommand("update", "Rewrite fixtures' expectations from the current output");
  for (auto* c : {check, update}) {
    c->add_option("PATH", fixture_args.paths, "fixture files or directories")->required();
    c->add_option("--filter", fixture_args.filter, "only the fixtures whose path contains this text");
    c->add_option("-j,--jobs", fixture_args.jobs, "fixtures handled at once")->capture_default_str();
    c->add_flag("-q,--quiet", fixture_args.quiet, "print only failures (and updates) and the summary");
    if (c == check) {
      c->add_option(
          "--backend", fixture_args.backend,
          "run each fixture with inputs on these backends (cpu, vulkan, all) and compare with the interpreter");
      c->add_option("--device", fixture_args.device, "Vulkan: a substring of the device name");
      c->add_option("--part-statements", fixture_args.part_statements,
                    "with --backend=cpu: the largest function in statements (as run --part-statements)")
          ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
      c->add_option("--rtol-f32", fixture_args.rtol_f32, "with --backend: relative tolerance for f32")
          ->capture_default_str();
      c->add_option("--rtol-f64", fixture_args.rtol_f64, "with --backend: relative tolerance for f64")
          ->capture_default_str();
    }
  }

  pb::cli::NewFixtureArgs new_args;
  auto* fixture_new = fixture->add_subcommand(
      "new", "Write a new fixture: a kernel, its pipeline and inputs, with expectations from the current build");
  fixture_new->add_option("FILE", new_args.file, "kernel file, dump log or fixture")->required();
  fixture_new->add_option("-o,--output", new_args.output, "the fixture to write (NAME.fixture.json)")->required();
  fixture_new->add_option("--dump", new_args.dump, "which dump of a log (number or title; default: the last)");
  fixture_new->add_option("--passes", new_args.passes, "pipeline (default: the fixture's, else none)");
  fixture_new->add_option("--inputs", new_args.inputs, "inputs JSON (default: the fixture's, or FILE.inputs.json)");
  fixture_new->add_option("--loss", new_args.loss,
                          "a float field with a gradient field: pin the gradients of its sum and check them against "
                          "finite differences (the pipeline defaults to reverse_ad)");
  fixture_new->add_option("--description", new_args.description, "the fixture's one-line description");
  fixture_new->add_flag("--force", new_args.force, "overwrite the output if it exists");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    app.exit(e);
    suggest_options(app, e.what());
    return 2;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*print) return pb::cli::cmd_print(print_args);
    if (*verify) return pb::cli::cmd_verify(verify_file, verify_dump);
    if (*dumps) return pb::cli::cmd_dumps(dumps_file);
    if (*run) return pb::cli::cmd_run(run_args);
    if (*gradcheck) return pb::cli::cmd_gradcheck(gc_args);
    if (*jvpcheck) return pb::cli::cmd_jvpcheck(jvp_args);
    if (*adjointcheck) return pb::cli::cmd_adjointcheck(adj_args);
    if (*difftest) return pb::cli::cmd_difftest(difftest_args);
    if (*replay) {
      replay_args.passes_given = passes_opt->count() > 0;
      if (pc->count() > 0) replay_args.print_changed = print_changed.empty() ? "full" : print_changed;
      if (no_verify_each) replay_args.verify_each = false;
      return pb::cli::cmd_replay(replay_args);
    }
    if (*compile) {
      compile_args.codegen.passes_given = compile_passes->count() > 0;
      return pb::cli::cmd_compile(compile_args);
    }
    if (*compare) {
      compare_args.codegen.passes_given = compare_passes->count() > 0;
      return pb::cli::cmd_compare_lowerings(compare_args);
    }
    if (*passes_cmd) return pb::cli::cmd_passes();
    if (*bisect) return pb::cli::cmd_bisect_result(bisect_args);
    if (*fixture_new) return pb::cli::cmd_fixture_new(new_args);
    if (*check || *update) {
      fixture_args.update = update->parsed();
      return pb::cli::cmd_fixture(fixture_args);
    }
  } catch (const pb::runtime::Refusal& e) {
    std::cerr << pb::cli::refusal_text(e) << "\n";
    return 2;
  } catch (const pb::RuleViolation& e) {
    std::cerr << e.what() << "\n";
    return 1;  // a check failed, as a verifier error
  } catch (const pb::UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const pb::InternalError& e) {
    std::cerr << "passbench: " << e.what() << "\nThis is a bug in passbench; please report it with the input.\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "passbench: unexpected error: " << e.what() << "\n";
    return 1;
  }
  return 2;
} catch (const std::exception& e) {
  std::cerr << "passbench: internal error: " << e.what() << "\n";
  return 1;
}

// A check that failed where it could not throw (in a destructor) is reported when the command ends.
int main(int argc, char** argv) {
  int rc = run_command(argc, argv);
  try {
    pb::raise_deferred_internal_error();
  } catch (const pb::InternalError& e) {
    std::cerr << "passbench: " << e.what() << "\nThis is a bug in passbench; please report it with the input.\n";
    return 1;
  }
  return rc;
}
