#include "workbench/cli/replay_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <tuple>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "workbench/cli/commands.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/run.h"

namespace pb::cli {

namespace {

std::string colorize_diff(const std::string& diff, bool color) {
  if (!color) return diff;
  std::string out;
  size_t start = 0;
  while (start < diff.size()) {
    size_t end = diff.find('\n', start);
    if (end == std::string::npos) end = diff.size();
    std::string line = diff.substr(start, end - start);
    const char* c = "";
    if (line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0)
      c = "\033[1m";
    else if (!line.empty() && line[0] == '+')
      c = "\033[32m";
    else if (!line.empty() && line[0] == '-')
      c = "\033[31m";
    else if (line.rfind("@@", 0) == 0)
      c = "\033[36m";
    out += *c ? std::string(c) + line + "\033[0m\n" : line + "\n";
    start = end + 1;
  }
  return out;
}

// What a --print-after, --print-before, --stop-after or --stop-before names: a pass (`dce`), a
// pass with options as dump headers spell it (`replace_locals_with_stacks{ad_stack_size=0}`:
// only that spelling matches), or a named pipeline (`reverse_ad`: its last pass).
struct PassSelector {
  std::string text;
  std::string name;
  std::string spec;  // empty: any options
  bool matches(const passes::PassRecord& r) const { return r.pass == name && (spec.empty() || r.spec == spec); }
  bool matches(const passes::PipelineEntry& e) const {
    return e.info->name == name && (spec.empty() || e.to_string() == spec);
  }
};

PassSelector select_pass(const std::string& text, const char* option) {
  passes::Pipeline p = passes::parse_pipeline(text, option);
  if (p.entries.empty())
    throw UserError(fmt::format("{}: names no pass", option), "`passbench passes` lists the passes");
  std::string base = text.substr(0, text.find('{'));
  bool named = passes::find_named_pipeline(base) != nullptr;
  if (p.entries.size() > 1 && !named)
    throw UserError(fmt::format("{}={}: names several passes", option, text), "name one pass (or one named pipeline)");
  const passes::PipelineEntry& e = p.entries.back();
  bool with_options = text.find('{') != std::string::npos;
  return {text, e.info->name, with_options || named ? e.to_string() : ""};
}

// A selector that matches no pass of the pipeline would be silently ignored: say so instead.
void check_selector_in(const PassSelector& s, const passes::Pipeline& p, const char* option) {
  for (const auto& e : p.entries)
    if (s.matches(e)) return;
  throw UserError(fmt::format("{}={}: no pass of the pipeline '{}' matches", option, s.text, p.to_string()),
                  "`passbench replay FILE --passes=... --print-pipeline-passes` prints the expanded pipeline");
}

// The work of replay outside the passes, timed so that the table sums to the run.
struct Stage {
  std::string name;
  double ms = 0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// `before` runs ahead of the passes (parse, verify the input), `after` behind them (the pass
// manager's verify-each and IR snapshots, printing the result).
void print_time_table(const passes::PipelineRun& run, const std::vector<Stage>& before,
                      const std::vector<Stage>& after) {
  double total = run.total_ms;
  for (const auto& s : before) total += s.ms;
  for (const auto& s : after) total += s.ms;
  std::cerr << "===---------------------------------------------------------------===\n"
            << "                   passbench pass execution timing\n"
            << "===---------------------------------------------------------------===\n";
  std::cerr << fmt::format("  Total: {:.3f} ms (passes {:.3f} ms)\n\n", total, run.total_ms);
  std::cerr << fmt::format("  {:>10}  {:>6}  {:>9}  {:>9}  {}\n", "wall ms", "%", "stmts in", "stmts out", "pass");
  auto pct = [&](double ms) { return total > 0 ? 100.0 * ms / total : 0.0; };
  for (const auto& s : before)
    std::cerr << fmt::format("  {:>10.3f}  {:>5.1f}%  {:>9}  {:>9}  ({})\n", s.ms, pct(s.ms), "", "", s.name);
  for (const auto& r : run.records) {
    if (!r.ran) continue;
    std::cerr << fmt::format("  {:>10.3f}  {:>5.1f}%  {:>9}  {:>9}  {}\n", r.wall_ms, pct(r.wall_ms),
                             r.statements_before, r.statements_after, r.spec);
  }
  for (const auto& s : after)
    std::cerr << fmt::format("  {:>10.3f}  {:>5.1f}%  {:>9}  {:>9}  ({})\n", s.ms, pct(s.ms), "", "", s.name);
}

// Per pass execution, its non-zero counters (all with `all`) and at most a few of its per-item
// notes (one per stack can run to thousands of lines).
void print_stats(const passes::PipelineRun& run, bool all) {
  constexpr size_t kNotesShown = 8;
  std::cerr << "===---------------------------------------------------------------===\n"
            << "                       passbench statistics\n"
            << "===---------------------------------------------------------------===\n";
  size_t hidden = 0;
  for (const auto& r : run.records) {
    if (!r.ran) continue;
    for (const auto& [name, value] : r.stats) {
      if (value == 0 && !all) {
        ++hidden;
        continue;
      }
      std::cerr << fmt::format("  {:>10}  {}.{}\n", value, r.pass, name);
    }
    size_t shown = all ? r.notes.size() : std::min(r.notes.size(), kNotesShown);
    for (size_t i = 0; i < shown; ++i) std::cerr << fmt::format("  {:>10}  {}: {}\n", "", r.pass, r.notes[i]);
    if (shown < r.notes.size())
      std::cerr << fmt::format("  {:>10}  {}: ... {} more\n", "", r.pass, r.notes.size() - shown);
  }
  if (hidden > 0 && !all) std::cerr << fmt::format("  ({} zero counters not shown; --stats-all shows them)\n", hidden);
}

}  // namespace

int cmd_replay(const ReplayArgs& a) {
  std::vector<PassSelector> print_after, print_before;
  for (const auto& p : a.print_after) print_after.push_back(select_pass(p, "--print-after"));
  for (const auto& p : a.print_before) print_before.push_back(select_pass(p, "--print-before"));
  std::optional<PassSelector> stop_after, stop_before;
  if (!a.stop_after.empty()) stop_after = select_pass(a.stop_after, "--stop-after");
  if (!a.stop_before.empty()) stop_before = select_pass(a.stop_before, "--stop-before");
  auto t_parse = std::chrono::steady_clock::now();
  auto source = workbench::load_source(a.file, a.dump);
  std::vector<Stage> before{{"parse the input", ms_since(t_parse)}};
  auto t_verify = std::chrono::steady_clock::now();
  // The input is checked before any pass runs: a broken input is the input's fault, not a pass's.
  if (!report_verify(*source.kernel, a.file)) {
    std::cerr << fmt::format("{}: the input does not verify, so no pass ran; fix the input (`passbench verify {}`)\n",
                             a.file, a.file);
    return 2;
  }
  before.push_back({"verify the input", ms_since(t_verify)});
  std::string pipeline_text = a.passes_given ? a.passes : source.pipeline.value_or("");
  if (!a.passes_given && !source.pipeline)
    throw UserError("no pipeline: give --passes=PIPELINE",
                    "for example --passes='simplify,dce'; `passbench passes` lists the passes");
  std::optional<nlohmann::json> inputs;
  // --inputs runs the result; --run runs it with the fixture's inputs, if FILE is a fixture.
  if (a.run || !a.inputs.empty()) inputs = workbench::command_inputs(a.inputs, a.file).json;
  if (a.run && !inputs) inputs = nlohmann::json::object();

  passes::RunOptions opts;
  passes::Pipeline expanded = passes::parse_pipeline(pipeline_text);
  if (a.print_pipeline_passes) {
    std::cout << expanded.to_string() << "\n";
    return 0;
  }
  for (const auto& s : print_after) check_selector_in(s, expanded, "--print-after");
  for (const auto& s : print_before) check_selector_in(s, expanded, "--print-before");
  opts.verify_each = a.verify_each;
  opts.verify_expanded = a.verify_expanded;
  opts.bisect_limit = a.bisect_limit;
  // --stop-after / --stop-before as a count of pass executions (the first match).
  for (auto [selector, after, option] :
       {std::tuple{&stop_after, 1, "--stop-after"}, {&stop_before, 0, "--stop-before"}}) {
    if (!*selector) continue;
    const PassSelector& stop = **selector;
    check_selector_in(stop, expanded, option);
    for (size_t i = 0; i < expanded.entries.size(); ++i)
      if (stop.matches(expanded.entries[i])) {
        int64_t limit = static_cast<int64_t>(i) + after;
        opts.bisect_limit = opts.bisect_limit < 0 ? limit : std::min(opts.bisect_limit, limit);
        break;
      }
  }
  // Snapshots of every pass only when something prints them; else only the failing pass's.
  bool prints_ir = a.print_after_all || a.print_before_all || !print_after.empty() || !print_before.empty() ||
                   !a.print_changed.empty();
  opts.capture = prints_ir ? passes::Capture::all : passes::Capture::failure;
  // On a failure the input is read again rather than copied up front (stdin cannot be).
  if (a.file != "-") opts.rebuild_input = [&a] { return workbench::load_source(a.file, a.dump).kernel; };
  auto t_replay = std::chrono::steady_clock::now();
  auto result = workbench::replay(std::move(source.kernel), pipeline_text, opts);
  std::vector<Stage> after{
      {std::string(a.verify_each ? "verify" : "pass manager") + (prints_ir ? ", IR snapshots" : ""),
       std::max(0.0, ms_since(t_replay) - result.run.total_ms)}};
  bool color = a.color == "always" || (a.color == "auto" && isatty(STDERR_FILENO) && !std::getenv("NO_COLOR"));

  // With --annotate-ib, IR is printed again from the captured kernels with IB markers.
  auto text_of = [&](const std::shared_ptr<const ir::Kernel>& k, const std::string& plain) {
    if (!a.annotate_ib || !k) return plain;
    return ir::print_kernel(*k, {.header = true, .annotate = passes::independent_block_annotations(*k)});
  };
  for (const auto& rec : result.run.records) {
    if (a.bisect_limit >= 0)
      std::cerr << fmt::format("BISECT: {}running pass ({}) {}\n", rec.ran ? "" : "NOT ", rec.index + 1, rec.spec);
    if (!rec.ran) continue;
    auto selected = [&](const std::vector<PassSelector>& v) {
      return std::any_of(v.begin(), v.end(), [&](const PassSelector& s) { return s.matches(rec); });
    };
    if (a.print_before_all || selected(print_before))
      std::cerr << fmt::format("# *** IR Dump Before {} ***\n{}", rec.spec, text_of(rec.before, rec.before_text));
    bool dump_after = a.print_after_all || selected(print_after);
    if (a.print_changed == "full" && rec.changed) dump_after = true;
    if (dump_after)
      std::cerr << fmt::format("# *** IR Dump After {}{} ***\n{}", rec.spec, rec.changed ? "" : " (no change)",
                               text_of(rec.after, rec.after_text));
    if (a.print_changed == "diff" && rec.changed) {
      std::cerr << fmt::format("# *** IR Diff After {} ***\n", rec.spec);
      std::cerr << colorize_diff(workbench::pass_diff(rec), color);
    }
  }
  bool table_after_output = a.time_passes && !result.run.failed;  // printing is timed too
  if (a.time_passes && !table_after_output) print_time_table(result.run, before, after);
  if (a.stats) print_stats(result.run, a.stats_all);
  for (const auto& rec : result.run.records)
    for (const auto& w : rec.warnings) std::cerr << fmt::format("{}: warning: {}: {}\n", a.file, rec.pass, w);

  if (result.run.failed) {
    const auto& rec = result.run.records[result.run.failed_index];
    if (rec.rule_violation) {
      // A check the pass makes failed (as a verifier error does): exit 1, no reproducer.
      std::cerr << fmt::format("{}: error: pass '{}' (pass {} of the pipeline): {}\n", a.file, rec.pass, rec.index + 1,
                               rec.failure);
      return 1;
    }
    if (!rec.internal_error && rec.verify_errors.empty()) {
      // The pass refused the input (a construct it documents as rejected): a user error.
      std::cerr << fmt::format("{}: pass '{}' (pass {} of the pipeline) rejects this kernel:\n  {}\n", a.file, rec.pass,
                               rec.index + 1, rec.failure);
      return 2;
    }
    std::cerr << fmt::format("{}: pass '{}' (pass {} of the pipeline) failed{}:\n  {}\n", a.file, rec.pass,
                             rec.index + 1, rec.internal_error ? " with an internal error" : "", rec.failure);
    for (size_t i = 1; i < rec.verify_errors.size(); ++i) std::cerr << "  " << rec.verify_errors[i] << "\n";
    std::string diff = workbench::pass_diff(rec);
    if (!diff.empty()) std::cerr << "the change the pass made:\n" << colorize_diff(diff, color);
    std::string dir = a.reproducer_dir.empty() ? std::filesystem::temp_directory_path().string() : a.reproducer_dir;
    std::string path = workbench::write_reproducer(result, dir);
    std::cerr << fmt::format("reproducer written to {}\nreplay it with: passbench replay {}\n", path, path);
    return 1;
  }

  auto t_print = std::chrono::steady_clock::now();
  std::string ir_out =
      a.emit == "json" ? ir::to_json(*result.kernel).dump(2) + "\n"
      : a.annotate_ib
          ? ir::print_kernel(*result.kernel,
                             {.header = true, .annotate = passes::independent_block_annotations(*result.kernel)})
          : ir::print_kernel(*result.kernel);
  after.push_back({"print the result", ms_since(t_print)});
  if (table_after_output) print_time_table(result.run, before, after);
  if (!a.output.empty() && a.output != "-") {
    std::ofstream out(a.output, std::ios::binary | std::ios::trunc);
    out << ir_out;
    if (!out) throw UserError(fmt::format("cannot write '{}'", a.output));
  } else if (!inputs || a.output == "-") {
    std::cout << ir_out;
  }
  if (inputs) {
    workbench::RunRequest req;
    req.inputs = *inputs;
    try {
      auto out = workbench::run_primal(*result.kernel, req);
      std::cerr << out.printed;
      std::cout << out.values.dump(2) << "\n";
    } catch (const workbench::RunFailure& e) {
      std::cerr << a.file << ": after the pipeline: " << e.what() << "\n";
      return 1;
    }
  }
  return 0;
}

int cmd_passes() {
  auto type_name = [](passes::OptionType t) {
    switch (t) {
      case passes::OptionType::Bool:
        return "bool";
      case passes::OptionType::Int:
        return "int";
      case passes::OptionType::Float:
        return "float";
      case passes::OptionType::String:
        return "string";
    }
    return "?";
  };
  std::cout << "Passes:\n";
  for (const auto& p : passes::all_passes()) {
    std::cout << fmt::format("  {:<28} {}\n", p.name, p.summary);
    for (const auto& o : p.options) {
      std::string choices;
      for (const auto& c : o.choices) choices += (choices.empty() ? " {" : "|") + c;
      if (!choices.empty()) choices += "}";
      if (o.type == passes::OptionType::Int && o.min_int != INT64_MIN)
        choices +=
            o.max_int == INT64_MAX ? fmt::format(" >= {}", o.min_int) : fmt::format(" {}..{}", o.min_int, o.max_int);
      std::cout << fmt::format("      {} ({}{}, default {}): {}\n", o.name, type_name(o.type), choices, o.default_value,
                               o.help);
    }
    if (!p.statistics.empty()) {
      std::string s;
      for (const auto& n : p.statistics) s += (s.empty() ? "" : ", ") + n;
      std::cout << fmt::format("      statistics: {}\n", s);
    }
  }
  std::cout << "Named pipelines:\n";
  for (const auto& p : passes::all_named_pipelines()) std::cout << fmt::format("  {:<28} {}\n", p.name, p.summary);
  return 0;
}

}  // namespace pb::cli
