#include "workbench/cli/replay_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/registry.h"
#include "workbench/cli/commands.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"
#include "workbench/workspace/run.h"

namespace pb::cli {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

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

void check_pass_name(const std::string& name, const char* option) {
  if (!passes::find_pass(name))
    throw UserError(fmt::format("{}={}: unknown pass '{}'", option, name, name), "`passbench passes` lists the passes");
}

void print_time_table(const passes::PipelineRun& run) {
  std::cerr << "===---------------------------------------------------------------===\n"
            << "                   passbench pass execution timing\n"
            << "===---------------------------------------------------------------===\n";
  std::cerr << fmt::format("  Total: {:.3f} ms\n\n", run.total_ms);
  std::cerr << fmt::format("  {:>10}  {:>6}  {:>9}  {:>9}  {}\n", "wall ms", "%", "stmts in", "stmts out", "pass");
  for (const auto& r : run.records) {
    if (!r.ran) continue;
    double pct = run.total_ms > 0 ? 100.0 * r.wall_ms / run.total_ms : 0.0;
    std::cerr << fmt::format("  {:>10.3f}  {:>5.1f}%  {:>9}  {:>9}  {}\n", r.wall_ms, pct, r.statements_before, r.statements_after, r.spec);
  }
}

void print_stats(const passes::PipelineRun& run) {
  std::cerr << "===---------------------------------------------------------------===\n"
            << "                       passbench statistics\n"
            << "===---------------------------------------------------------------===\n";
  for (const auto& r : run.records) {
    if (!r.ran) continue;
    for (const auto& [name, value] : r.stats) std::cerr << fmt::format("  {:>10}  {}.{}\n", value, r.pass, name);
    for (const auto& note : r.notes) std::cerr << fmt::format("  {:>10}  {}: {}\n", "", r.pass, note);
  }
}

}  // namespace

int cmd_replay(const ReplayArgs& a) {
  for (const auto& p : a.print_after) check_pass_name(p, "--print-after");
  for (const auto& p : a.print_before) check_pass_name(p, "--print-before");
  if (!a.stop_after.empty()) check_pass_name(a.stop_after, "--stop-after");
  auto source = workbench::load_source(a.file);
  // The input is checked before any pass runs: a broken input is the input's fault, not a pass's.
  if (!report_verify(*source.kernel, a.file)) {
    std::cerr << fmt::format("{}: the input does not verify, so no pass ran; fix the input (`passbench verify {}`)\n",
                             a.file, a.file);
    return 2;
  }
  std::string pipeline_text = a.passes_given ? a.passes : source.pipeline.value_or("");
  if (!a.passes_given && !source.pipeline)
    throw UserError("no pipeline: give --passes=PIPELINE", "for example --passes='simplify,dce'; `passbench passes` lists the passes");
  std::optional<nlohmann::json> inputs;
  if (!a.inputs.empty()) inputs = workbench::parse_json_text(workbench::read_file(a.inputs), a.inputs);
  if (a.run && !inputs) inputs = nlohmann::json::object();

  passes::RunOptions opts;
  opts.verify_each = a.verify_each;
  opts.bisect_limit = a.bisect_limit;
  opts.stop_after = a.stop_after;
  opts.capture_ir = true;
  auto result = workbench::replay(std::move(source.kernel), pipeline_text, opts);
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
    if (contains(a.print_before, rec.pass)) std::cerr << fmt::format("# *** IR Dump Before {} ***\n{}", rec.spec, text_of(rec.before, rec.before_text));
    bool after = a.print_after_all || contains(a.print_after, rec.pass);
    if (a.print_changed == "full" && rec.changed) after = true;
    if (after) std::cerr << fmt::format("# *** IR Dump After {}{} ***\n{}", rec.spec, rec.changed ? "" : " (no change)", text_of(rec.after, rec.after_text));
    if (a.print_changed == "diff" && rec.changed) {
      std::cerr << fmt::format("# *** IR Diff After {} ***\n", rec.spec);
      std::cerr << colorize_diff(workbench::pass_diff(rec), color);
    }
  }
  if (a.time_passes) print_time_table(result.run);
  if (a.stats) print_stats(result.run);

  if (result.run.failed) {
    const auto& rec = result.run.records[result.run.failed_index];
    if (!rec.internal_error && rec.verify_errors.empty()) {
      // The pass refused the input (a construct it documents as rejected): a user error.
      std::cerr << fmt::format("{}: pass '{}' (pass {} of the pipeline) rejects this kernel:\n  {}\n", a.file, rec.pass,
                               rec.index + 1, rec.failure);
      return 2;
    }
    std::cerr << fmt::format("{}: pass '{}' (pass {} of the pipeline) failed{}:\n  {}\n", a.file, rec.pass, rec.index + 1,
                             rec.internal_error ? " with an internal error" : "", rec.failure);
    for (size_t i = 1; i < rec.verify_errors.size(); ++i) std::cerr << "  " << rec.verify_errors[i] << "\n";
    std::string diff = workbench::pass_diff(rec);
    if (!diff.empty()) std::cerr << "the change the pass made:\n" << colorize_diff(diff, color);
    std::string dir = a.reproducer_dir.empty() ? std::filesystem::temp_directory_path().string() : a.reproducer_dir;
    std::string path = workbench::write_reproducer(result, dir);
    std::cerr << fmt::format("reproducer written to {}\nreplay it with: passbench replay {}\n", path, path);
    return 1;
  }

  std::string ir_out = a.emit == "json" ? ir::to_json(*result.kernel).dump(2) + "\n"
                       : a.annotate_ib ? ir::print_kernel(*result.kernel, {.header = true, .annotate = passes::independent_block_annotations(*result.kernel)})
                                       : ir::print_kernel(*result.kernel);
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
      auto out = workbench::run_on_interpreter(*result.kernel, req);
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
        choices += o.max_int == INT64_MAX ? fmt::format(" >= {}", o.min_int) : fmt::format(" {}..{}", o.min_int, o.max_int);
      std::cout << fmt::format("      {} ({}{}, default {}): {}\n", o.name, type_name(o.type), choices, o.default_value, o.help);
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
