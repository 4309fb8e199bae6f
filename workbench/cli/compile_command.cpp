#include "workbench/cli/compile_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "codegen/spirv/options.h"
#include "codegen/spirv/validate.h"
#include "ir/diagnostic.h"
#include "workbench/cli/progress_line.h"
#include "workbench/workspace/compile.h"
#include "workbench/workspace/replay.h"

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

namespace pb::cli {

namespace {

workbench::Capability capability(const std::string& v) {
  if (v == "on") return workbench::Capability::on;
  if (v == "off") return workbench::Capability::off;
  return workbench::Capability::automatic;
}

// The request the shared options describe; `with_choices` applies the four --adstack options.
workbench::CompileRequest make_request(const CodegenArgs& a, const std::string& pipeline, bool with_choices) {
  workbench::CompileRequest r;
  r.pipeline = pipeline;
  r.lowering = codegen::spirv::parse_lowering(a.lowering);
  if (with_choices) {
    std::string choices;
    for (const auto& [key, value] : {std::pair<const char*, const std::string&>{"storage", a.storage},
                                     {"count", a.count},
                                     {"push", a.push},
                                     {"bounds", a.bounds}})
      if (!value.empty()) choices += fmt::format("{}{}={}", choices.empty() ? "" : ",", key, value);
    r.lowering = codegen::spirv::parse_lowering(choices, r.lowering);
  }
  r.float64 = capability(a.float64);
  r.int64 = capability(a.int64);
  if (a.max_id_bound == 0 || a.max_id_bound > UINT32_MAX)
    throw UserError(fmt::format("--max-id-bound={} is out of range", a.max_id_bound),
                    "give a bound from 1 to 4294967295");
  r.optimizer.max_id_bound = static_cast<uint32_t>(a.max_id_bound);
  r.optimizer.intermediate_dce = !a.no_intermediate_dce;
  r.optimizer.compact_ids = !a.no_compact_ids;
  r.optimizer.allow_fallback = a.fallback;
  r.optimizer.measure_passes = a.measure_passes;
  return r;
}

// The kernel and the pipeline to run: --passes, else a fixture's pipeline, else none.
std::pair<std::unique_ptr<ir::Kernel>, std::string> load(const CodegenArgs& a) {
  auto source = workbench::load_source(a.file, a.dump);
  std::string pipeline = a.passes_given ? a.passes : source.pipeline.value_or("");
  return {std::move(source.kernel), pipeline};
}

std::string pipeline_note(const std::string& pipeline) {
  return pipeline.empty() ? "" : fmt::format(" after '{}'", pipeline);
}

std::string lines_per_push(const workbench::CompileMetrics& m) {
  auto v = m.msl_lines_per_push();
  return v ? fmt::format("{:.1f}", *v) : "-";
}

// One line per task and one for the kernel, on stderr.
void print_summary(const workbench::KernelCompile& c, const std::string& pipeline) {
  std::cerr << fmt::format("{}: kernel '{}'{}, {}\n", "compile", c.kernel, pipeline_note(pipeline), c.lowering);
  for (const auto& t : c.tasks) {
    const auto& m = t.metrics;
    std::string line = fmt::format("  task {}: ID bound {}", t.name, m.unoptimized_id_bound);
    if (t.report && m.peak_id_bound) line += fmt::format(", needed {}", m.peak_id_bound);
    if (!t.spirv.empty()) line += fmt::format(", final {}", m.final_id_bound);
    if (!t.msl.text.empty()) line += fmt::format("; MSL {} lines, {} bytes", m.msl_lines, m.msl_bytes);
    if (!t.glsl.text.empty()) line += fmt::format("; GLSL {} lines", m.glsl_lines);
    line += fmt::format("; {} push(es)", m.pushes);
    if (!t.spirv.empty()) line += t.valid ? "; spirv-val: valid" : "; spirv-val: INVALID";
    std::cerr << line << "\n";
    if (t.report)
      for (const auto& w : t.report->warnings) std::cerr << w << "\n";
  }
  if (!c.ok()) return;
  const auto& m = c.metrics;
  std::string msl = m.msl_bytes ? fmt::format(", MSL {} lines, {} bytes", m.msl_lines, m.msl_bytes) : "";
  std::string per_push = m.msl_bytes ? fmt::format(", {} MSL lines per push", lines_per_push(m)) : "";
  std::cerr << fmt::format("  kernel: {} task(s), max final ID bound {}{}, {} push(es){}\n", c.tasks.size(),
                           m.final_id_bound, msl, m.pushes, per_push);
}

void write_report(const workbench::KernelCompile& c, const std::string& path) {
  ordered_json reports = ordered_json::array();
  for (const auto& t : c.tasks)
    if (t.report) reports.push_back(codegen::spirv::report_to_json(*t.report));
  ordered_json doc = {{"schema", "passbench.spirv-opt-reports"},
                      {"version", 1},
                      {"kernel", c.kernel},
                      {"lowering", c.lowering},
                      {"tasks", reports}};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << doc.dump(2) << "\n";
  if (!out)
    throw UserError(fmt::format("cannot write the optimizer report to {}", path),
                    "check the folder exists and is writable");
}

struct TargetInfo {
  const char* extension;
  const char* comment;  // line comment of the language, for task separators
  bool binary;
};

TargetInfo target_info(const std::string& target) {
  if (target == "spirv") return {"spv", "", true};
  if (target == "spvasm") return {"spvasm", ";", false};
  if (target == "msl") return {"metal", "//", false};
  return {"comp", "//", false};
}

std::string task_output(const workbench::TaskCompile& t, const std::string& target) {
  if (target == "spirv") return {reinterpret_cast<const char*>(t.spirv.data()), t.spirv.size() * sizeof(uint32_t)};
  if (target == "spvasm") return codegen::spirv::disassemble(t.spirv);
  return target == "msl" ? t.msl.text : t.glsl.text;
}

void write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw UserError(fmt::format("cannot write {}", path.string()), "check the folder exists and is writable");
}

// One task: the text or binary as is. Several: a directory gets TASK.EXT files; a file or stdout
// gets the texts one after the other, each under a `; task NAME` (`// task NAME`) line.
void write_outputs(const workbench::KernelCompile& c, const CompileArgs& a) {
  TargetInfo info = target_info(a.target);
  const std::string out = a.output == "-" ? std::string() : a.output;  // "-": standard output
  bool to_directory = !out.empty() && (fs::is_directory(out) || out.ends_with('/'));
  if (info.binary && out.empty() && isatty(STDOUT_FILENO))
    throw UserError("binary SPIR-V would be written to a terminal",
                    "redirect it (> kernel.spv), give -o FILE, or use --target=spvasm for the text form");
  if (to_directory) {
    fs::create_directories(out);
    for (const auto& t : c.tasks) {
      fs::path p = fs::path(out) / fmt::format("{}.{}", t.name, info.extension);
      write_file(p, task_output(t, a.target));
      std::cerr << "wrote " << p.string() << "\n";
    }
    return;
  }
  if (info.binary && c.tasks.size() > 1)
    throw UserError(
        fmt::format("kernel '{}' has {} tasks, and binary SPIR-V holds one module per file", c.kernel, c.tasks.size()),
        "pass -o DIR/ to write one TASK.spv per task, or --target=spvasm for one text");
  std::string text;
  for (const auto& t : c.tasks) {
    if (c.tasks.size() > 1) text += fmt::format("{}{} task {}\n", text.empty() ? "" : "\n", info.comment, t.name);
    text += task_output(t, a.target);
  }
  if (out.empty())
    std::cout << text << std::flush;
  else
    write_file(out, text);
}

}  // namespace

int cmd_compile(const CompileArgs& a) {
  if (a.target == "llvm") return cmd_compile_llvm(a);
  auto [kernel, pipeline] = load(a.codegen);
  workbench::CompileRequest request = make_request(a.codegen, pipeline, true);
  request.optimize = !a.no_optimize;
  request.optimizer.measure_passes = request.optimizer.measure_passes || a.table || !a.report.empty();
  request.msl = a.target == "msl";  // only the language asked for: f64 modules have no MSL, for one
  request.glsl = a.target == "glsl";
  std::optional<ProgressLine> progress(std::in_place, "compile");
  if (progress->enabled()) request.progress = [&](const workbench::CompileProgress& p) { progress->update(p); };
  workbench::KernelCompile c = workbench::compile_kernel(*kernel, request);
  progress.reset();
  if (a.table)
    for (const auto& t : c.tasks)
      if (t.report) std::cerr << codegen::spirv::format_report_table(*t.report) << "\n";
  if (!a.report.empty()) write_report(c, a.report);
  if (c.error && c.error->stage == "pipeline") {
    std::cerr << fmt::format("{}: the pipeline '{}' failed: {}\n", a.codegen.file, pipeline, c.error->message);
    return 1;
  }
  print_summary(c, pipeline);
  if (c.error) {
    std::cerr << fmt::format("{}: {}\n", a.codegen.file, c.error->message);
    if (c.error->internal) std::cerr << "This is a bug in passbench; please report it with the input.\n";
    return 1;
  }
  write_outputs(c, a);
  return c.valid ? 0 : 1;
}

namespace {

const char* storage_name(codegen::spirv::StackStorage s) {
  return s == codegen::spirv::StackStorage::heap ? "heap" : "function";
}
const char* count_name(codegen::spirv::StackCount c) {
  return c == codegen::spirv::StackCount::shared_array ? "shared-array" : "per-stack";
}
const char* push_name(codegen::spirv::StackPush p) {
  return p == codegen::spirv::StackPush::select ? "select" : "branch";
}

bool is_default(const codegen::spirv::LoweringOptions& o) {
  codegen::spirv::LoweringOptions d;
  return o.storage == d.storage && o.count == d.count && o.push == d.push && o.bounds_check == d.bounds_check;
}

// The IDs the optimizer needed (measured with --measure-passes), else "-".
std::string peak_text(const workbench::CompileMetrics& m) {
  return m.peak_id_bound ? std::to_string(m.peak_id_bound) : std::string("-");
}

// The first line of a diagnostic, without its "error: " prefix.
std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.starts_with("error: ") ? line.substr(7) : line;
}

ordered_json comparison_json(const workbench::LoweringComparison& cmp, const std::string& pipeline) {
  ordered_json rows = ordered_json::array();
  for (const auto& row : cmp.rows) {
    ordered_json metrics = ordered_json::object();
    if (row.ok())
      for (const auto& [name, value] : workbench::metric_values(row.metrics))
        if (!row.cross_error || !(name.starts_with("msl.") || name.starts_with("glsl."))) metrics[name] = value;
    ordered_json error = nullptr;
    if (row.error) error = {{"stage", row.error->stage}, {"task", row.error->task}, {"message", row.error->message}};
    rows.push_back(
        {{"lowering", row.lowering},
         {"default", is_default(row.lowering_options)},
         {"ok", row.ok()},
         {"valid", row.ok() && row.valid},
         {"error", error},
         {"cross_error", row.cross_error ? ordered_json(row.cross_error->message) : ordered_json(nullptr)},
         {"tasks", row.tasks.size()},
         {"metrics", metrics},
         {"ms", {{"emit", row.emit_ms}, {"optimize", row.optimize_ms}, {"msl", row.msl_ms}, {"glsl", row.glsl_ms}}}});
  }
  return {{"schema", "passbench.compare-lowerings"},
          {"version", 1},
          {"kernel", cmp.kernel},
          {"pipeline", pipeline},
          {"pushes", cmp.pushes},
          {"rows", rows}};
}

void print_comparison(const workbench::LoweringComparison& cmp, const std::string& pipeline,
                      const workbench::CompileRequest& r) {
  std::cout << fmt::format("kernel '{}'{}: {} stack push(es); optimizer: max ID bound {}{}{}\n", cmp.kernel,
                           pipeline_note(pipeline), cmp.pushes, r.optimizer.max_id_bound,
                           r.optimizer.intermediate_dce ? "" : ", no intermediate DCE",
                           r.optimizer.compact_ids ? "" : ", no CompactIds");
  const workbench::KernelCompile* reference = nullptr;
  for (const auto& row : cmp.rows)
    if (is_default(row.lowering_options) && row.ok()) reference = &row;
  std::cout << fmt::format("  {:<8} {:<12} {:<6} {:<6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7}\n", "storage", "count",
                           "push", "bounds", "final ID", "peak ID", "MSL lines", "MSL bytes", "lines/push", "MSL x");
  int failed = 0;
  for (const auto& row : cmp.rows) {
    const auto& o = row.lowering_options;
    std::string head = fmt::format("{} {:<8} {:<12} {:<6} {:<6}", is_default(o) ? '*' : ' ', storage_name(o.storage),
                                   count_name(o.count), push_name(o.push), o.bounds_check ? "on" : "off");
    if (const auto& error = row.error) {
      ++failed;
      std::cout << fmt::format("{} error ({}{}): {}\n", head, error->stage,
                               error->task.empty() ? "" : ", task " + error->task, first_line(error->message));
      continue;
    }
    const auto& m = row.metrics;
    std::string ratio = reference && reference->metrics.msl_lines
                            ? fmt::format("{:.2f}", static_cast<double>(m.msl_lines) /
                                                        static_cast<double>(reference->metrics.msl_lines))
                            : "-";
    if (row.cross_error) {
      std::cout << fmt::format("{} {:>9} {:>9}   no MSL: {}{}\n", head, m.final_id_bound, peak_text(m),
                               first_line(row.cross_error->message), row.valid ? "" : "  spirv-val: INVALID");
      continue;
    }
    std::cout << fmt::format("{} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7}{}\n", head, m.final_id_bound, peak_text(m),
                             m.msl_lines, m.msl_bytes, lines_per_push(m), ratio,
                             row.valid ? "" : "  spirv-val: INVALID");
  }
  std::cout << "* the default lowering; ID bounds: the largest over the kernel's tasks (peak: the most any pass "
               "needed, with --measure-passes); MSL: all tasks; MSL x: MSL lines / the default's\n";
  if (failed)
    std::cout << fmt::format(
        "{} lowering(s) failed; `passbench compile FILE --target=msl --adstack-...` with that lowering shows the whole "
        "error\n",
        failed);
}

}  // namespace

int cmd_compare_lowerings(const CompareArgs& a) {
  auto [kernel, pipeline] = load(a.codegen);
  workbench::CompileRequest request = make_request(a.codegen, pipeline, false);
  std::optional<ProgressLine> progress(std::in_place, "compare-lowerings");
  if (progress->enabled()) request.progress = [&](const workbench::CompileProgress& p) { progress->update(p); };
  workbench::LoweringComparison cmp = workbench::compare_lowerings(*kernel, request);
  progress.reset();
  if (cmp.pipeline_error) {
    std::cerr << fmt::format("{}: the pipeline '{}' failed: {}\n", a.codegen.file, pipeline,
                             cmp.pipeline_error->message);
    return 1;
  }
  if (a.json)
    std::cout << comparison_json(cmp, pipeline).dump(2) << "\n";
  else
    print_comparison(cmp, pipeline, request);
  bool bug = false;
  for (const auto& row : cmp.rows) bug = bug || (row.error && row.error->internal) || (row.ok() && !row.valid);
  if (bug)
    std::cerr << "a lowering hit an internal error or produced invalid SPIR-V: a bug in passbench; please report it\n";
  return bug ? 1 : 0;
}

}  // namespace pb::cli
