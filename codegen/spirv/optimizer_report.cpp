#include "codegen/spirv/optimizer_report.h"

#include <fmt/format.h>

#include <algorithm>

namespace pb::codegen::spirv {

std::string_view target_env_name(TargetEnv env) {
  switch (env) {
    case TargetEnv::kVulkan1_0:
      return "vulkan1.0";
    case TargetEnv::kVulkan1_1:
      return "vulkan1.1";
    case TargetEnv::kVulkan1_2:
      return "vulkan1.2";
    case TargetEnv::kVulkan1_3:
      return "vulkan1.3";
  }
  return "unknown";
}

std::string_view failure_kind_name(OptimizerFailureKind kind) {
  switch (kind) {
    case OptimizerFailureKind::kIdOverflow:
      return "id_overflow";
    case OptimizerFailureKind::kPassFailed:
      return "pass_failed";
    case OptimizerFailureKind::kInvalidOutput:
      return "invalid_output";
  }
  return "unknown";
}

void record_message(std::vector<OptimizerMessage>& messages, std::string_view level, std::string_view text,
                    std::string_view pass) {
  for (OptimizerMessage& m : messages) {
    if (m.level == level && m.text == text) {
      ++m.count;
      return;
    }
  }
  if (messages.size() + 1 >= kMaxDistinctMessages) {
    if (messages.size() + 1 == kMaxDistinctMessages)
      messages.push_back({"info", "more distinct messages (not kept)", std::string(pass), 0});
    ++messages.back().count;
    return;
  }
  messages.push_back({std::string(level), std::string(text), std::string(pass), 1});
}

namespace {
// "optimized", "input" (fallback) or "none" (the failure was thrown).
const char* used_name(const OptimizerReport& report) {
  if (!report.module_used()) return "none";
  return report.used_fallback ? "input" : "optimized";
}
}  // namespace

nlohmann::ordered_json report_to_json(const OptimizerReport& report) {
  using json = nlohmann::ordered_json;
  const OptimizerOptions& o = report.options;
  json options = {{"max_id_bound", o.max_id_bound},
                  {"intermediate_dce", o.intermediate_dce},
                  {"compact_ids", o.compact_ids},
                  {"allow_fallback", o.allow_fallback},
                  {"validate", o.validate},
                  {"target_env", target_env_name(o.target_env)},
                  {"measure_passes", o.measure_passes}};
  json passes = json::array();
  for (const OptimizerPassRow& r : report.rows) {
    passes.push_back({{"index", r.index},
                      {"pass", r.pass},
                      {"flag", r.flag},
                      {"id_bound", r.id_bound},
                      {"peak_id_bound", r.peak_id_bound ? json(r.peak_id_bound) : json(nullptr)},
                      {"peak_exact", r.peak_exact},
                      {"probe_runs", r.probe_runs},
                      {"instructions", r.instructions},
                      {"phis", r.phis},
                      {"function_variables", r.function_variables},
                      {"bytes", r.bytes},
                      {"ms", r.ms},
                      {"changed", r.changed}});
  }
  const bool used = report.module_used();
  json summary = {{"input_id_bound", report.rows.empty() ? 0u : report.rows.front().id_bound},
                  {"peak_id_bound", report.peak_id_bound},
                  {"peak_pass", report.peak_pass},
                  {"final_id_bound", used ? json(report.final_id_bound) : json(nullptr)},
                  {"live_ids", used ? json(report.live_ids) : json(nullptr)},
                  {"total_ms", report.total_ms},
                  {"used", used_name(report)}};
  json failure = nullptr;
  if (report.failure) {
    const OptimizerFailure& f = *report.failure;
    failure = {{"kind", failure_kind_name(f.kind)},
               {"pass", f.pass},
               {"pass_index", f.pass_index},
               {"max_id_bound", f.max_id_bound},
               {"id_bound_before", f.id_bound_before},
               {"need_above", f.need_above ? json(f.need_above) : json(nullptr)},
               {"need_at_most", f.need_at_most ? json(f.need_at_most) : json(nullptr)}};
  }
  json messages = json::array();
  for (const OptimizerMessage& m : report.messages)
    messages.push_back({{"level", m.level}, {"text", m.text}, {"first_pass", m.first_pass}, {"count", m.count}});
  json validation = {{"ran", report.validated},
                     {"valid", report.validated ? json(report.valid) : json(nullptr)},
                     {"target_env", target_env_name(o.target_env)}};
  return {{"schema", "passbench.spirv-opt-report"},
          {"version", 2},
          {"kernel", report.kernel},
          {"task", report.task},
          {"options", std::move(options)},
          {"passes", std::move(passes)},
          {"summary", std::move(summary)},
          {"failure", std::move(failure)},
          {"validation", std::move(validation)},
          {"warnings", report.warnings},
          {"messages", std::move(messages)}};
}

std::string format_report_table(const OptimizerReport& report) {
  std::string out =
      fmt::format("SPIR-V optimizer: kernel '{}', task '{}' (max ID bound {}{}{})\n", report.kernel, report.task,
                  report.options.max_id_bound, report.options.intermediate_dce ? "" : ", no intermediate DCE",
                  report.options.compact_ids ? "" : ", no CompactIds");
  out += fmt::format("{:>3}  {:<30} {:>10} {:>11} {:>8} {:>6} {:>7} {:>9} {:>9}\n", "#", "pass", "id bound", "needed",
                     "instrs", "phis", "fn vars", "bytes", "ms");
  for (const OptimizerPassRow& r : report.rows) {
    const std::string needed =
        r.peak_id_bound ? fmt::format("{}{}", r.peak_exact ? "" : "<=", r.peak_id_bound) : std::string("-");
    out += fmt::format("{:>3}  {:<30} {:>10} {:>11} {:>8} {:>6} {:>7} {:>9} {:>9.3f}{}\n", r.index, r.pass, r.id_bound,
                       needed, r.instructions, r.phis, r.function_variables, r.bytes, r.ms,
                       r.index > 0 && !r.changed ? "  (unchanged)" : "");
  }
  if (report.failure) {
    const OptimizerFailure& f = *report.failure;
    std::string need;
    if (f.need_at_most)
      need = fmt::format(", needs {} to {}", f.need_above + 1, f.need_at_most);
    else if (f.need_above)
      need = fmt::format(", needs more than {}", f.need_above);
    out += fmt::format("{:>3}  {:<30} FAILED: {} (ID bound before {}, max {}{})\n", f.pass_index, f.pass,
                       failure_kind_name(f.kind), f.id_bound_before, f.max_id_bound, need);
  }
  out += fmt::format("peak ID bound {} (after {}{}); {:.3f} ms; ", report.peak_id_bound, report.peak_pass,
                     report.options.measure_passes ? ", needed in the pass" : ", surviving", report.total_ms);
  if (!report.module_used())
    out += "no module used (failed)\n";
  else
    out += fmt::format("final ID bound {}; live IDs {}; used: {}\n", report.final_id_bound, report.live_ids,
                       report.used_fallback ? "UNOPTIMIZED input (fallback)" : "optimized module");
  if (report.validated)
    out += fmt::format("spirv-val ({}): {}\n", target_env_name(report.options.target_env),
                       report.valid ? "valid" : "INVALID");
  for (const std::string& w : report.warnings) out += w + "\n";
  for (const OptimizerMessage& m : report.messages)
    out += fmt::format("{} [{}]{}: {}\n", m.level, m.first_pass, m.count > 1 ? fmt::format(" (x{})", m.count) : "",
                       m.text);
  return out;
}

}  // namespace pb::codegen::spirv
