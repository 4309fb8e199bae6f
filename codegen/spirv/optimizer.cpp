#include "codegen/spirv/optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include "codegen/large_stack.h"
#include "codegen/spirv/module_stats.h"
#include "codegen/spirv/optimizer_pipeline.h"
#include "codegen/spirv/optimizer_runs.h"

namespace pb::codegen::spirv {
namespace {

constexpr std::string_view kValidatorName = "spirv-val";

// Measuring an overflowing run's need runs it again under bounds doubling up to 8 times the bound
// given, and never above 2^24: a run's memory grows with the IDs it allocates.
constexpr uint64_t kNeedProbeFactor = 8;
constexpr uint64_t kNeedProbeCap = uint64_t{1} << 24;

uint32_t need_probe_cap(uint32_t max_id_bound) {
  return static_cast<uint32_t>(
      std::max<uint64_t>(max_id_bound, std::min<uint64_t>(uint64_t{max_id_bound} * kNeedProbeFactor, kNeedProbeCap)));
}

OptimizerPassRow make_row(int index, std::string_view pass, std::string_view flag, const ModuleStats& stats, double ms,
                          bool changed) {
  OptimizerPassRow row;
  row.index = index;
  row.pass = pass;
  row.flag = flag;
  row.id_bound = stats.id_bound;
  row.instructions = stats.instructions;
  row.phis = stats.phis;
  row.function_variables = stats.function_variables;
  row.bytes = stats.bytes;
  row.ms = ms;
  row.changed = changed;
  return row;
}

bool validate(std::span<const uint32_t> words, TargetEnv env, std::vector<OptimizerMessage>& messages,
              std::string_view label) {
  spvtools::SpirvTools tools(to_spv_env(env));
  tools.SetMessageConsumer(
      [&messages, label](spv_message_level_t level, const char*, const spv_position_t&, const char* message) {
        record_message(messages, level <= SPV_MSG_ERROR ? "error" : "warning", message ? message : "", label);
      });
  return tools.Validate(words.data(), words.size(), spvtools::ValidatorOptions());
}

// First error-level text recorded for `pass`, for one-line diagnostics.
std::string first_error_of(const std::vector<OptimizerMessage>& messages, std::string_view pass) {
  for (const OptimizerMessage& m : messages)
    if (m.first_pass == pass && (m.level == "error" || m.level == "fatal" || m.level == "internal_error"))
      return m.text;
  return {};
}

std::string module_name(const OptimizerReport& report) {
  return fmt::format("kernel '{}', task '{}'", report.kernel, report.task);
}

std::string need_text(const OptimizerFailure& f) {
  if (f.need_at_most == f.need_above + 1) return fmt::format("{} IDs", f.need_at_most);
  if (f.need_at_most) return fmt::format("between {} and {} IDs", f.need_above + 1, f.need_at_most);
  return fmt::format("more than {} IDs (not measured further)", f.need_above);
}

Diagnostic id_overflow_diagnostic(const OptimizerReport& report, const OptimizerFailure& failure, size_t steps) {
  const bool pipeline = !report.options.measure_passes;
  std::string message =
      failure.pass_index == 0
          ? fmt::format(
                "SPIR-V optimization of {} cannot start: the input's ID bound {} already exceeds the maximum "
                "ID bound {}",
                module_name(report), failure.id_bound_before, failure.max_id_bound)
          : fmt::format(
                "SPIR-V optimization of {} ran out of IDs: pass {} ({} of {}) needed an ID beyond the maximum ID "
                "bound {}; measured: {} {} needs {} (the module's ID bound was {} before {})",
                module_name(report), failure.pass, failure.pass_index, steps, failure.max_id_bound,
                pipeline ? "the pipeline up to that pass," : "that pass,",
                pipeline ? "run as one optimizer," : "alone,", need_text(failure), failure.id_bound_before,
                pipeline ? "the pipeline" : "that pass");
  std::vector<std::string> remedies;
  if (failure.need_at_most)
    remedies.push_back(fmt::format("raise the maximum ID bound to at least {} (--max-id-bound)", failure.need_at_most));
  else if (failure.max_id_bound < std::numeric_limits<uint32_t>::max())
    // Unmeasured (the need is past the probe cap): going on costs memory, in proportion to the IDs.
    remedies.push_back(
        "raise the maximum ID bound (--max-id-bound, up to 4294967295) if the machine has the memory: a pass "
        "holds about half a kilobyte per ID it allocates");
  if (!report.options.counts_in_shared_array)
    remedies.push_back("lower autodiff stacks with the shared-array count lowering, which needs far fewer IDs");
  std::string remedy = remedies.empty() ? std::string() : "either " + remedies.front();
  for (size_t i = 1; i < remedies.size(); ++i) remedy += (i + 1 == remedies.size() ? ", or " : ", ") + remedies[i];
  remedy += remedy.empty() ? "--spirv-opt-fallback runs the unoptimized module instead"
                           : "; --spirv-opt-fallback runs the unoptimized module instead";
  return Diagnostic::plain(std::move(message), std::move(remedy));
}

Diagnostic pass_failed_diagnostic(const OptimizerReport& report, const OptimizerFailure& failure, size_t steps) {
  const std::string cause = first_error_of(report.messages, failure.pass);
  return Diagnostic::plain(
      fmt::format("SPIR-V optimization of {} failed in pass {} ({} of {}){}", module_name(report), failure.pass,
                  failure.pass_index, steps, cause.empty() ? "" : ": " + cause),
      "--spirv-opt-fallback runs the unoptimized module instead; the optimizer report lists SPIRV-Tools' messages");
}

Diagnostic invalid_output_diagnostic(const OptimizerReport& report, bool input_valid) {
  const std::string cause = first_error_of(report.messages, kValidatorName);
  const std::string_view env = target_env_name(report.options.target_env);
  if (!input_valid)
    return Diagnostic::plain(fmt::format("the SPIR-V module of {} fails spirv-val ({}) before optimization{}",
                                         module_name(report), env, cause.empty() ? "" : ": " + cause),
                             "this is a SPIR-V emitter bug: report it with the module (--target=spvasm)");
  return Diagnostic::plain(
      fmt::format("the optimized SPIR-V module of {} fails spirv-val ({}) although its input passed{}",
                  module_name(report), env, cause.empty() ? "" : ": " + cause),
      "--spirv-opt-fallback runs the unoptimized module instead; --no-intermediate-dce or --no-compact-ids may "
      "avoid the faulty pass");
}

// The module left a bound above what every driver must accept; `compact_ids` and the lowering say
// which remedies are still open.
Diagnostic over_universal_limit_diagnostic(const OptimizerReport& report, const ModuleStats& out) {
  std::vector<std::string> remedies;
  if (!report.options.compact_ids) remedies.emplace_back("keep CompactIds (drop --no-compact-ids)");
  if (!report.options.counts_in_shared_array)
    remedies.emplace_back("lower autodiff stacks with the shared-array count lowering, which leaves fewer IDs");
  remedies.emplace_back("split the kernel into smaller tasks (the bound grows with a task's statements)");
  std::string remedy = "either " + remedies.front();
  for (size_t i = 1; i < remedies.size(); ++i) remedy += (i + 1 == remedies.size() ? ", or " : ", ") + remedies[i];
  return Diagnostic::plain(
      fmt::format("the optimized SPIR-V module of {} has ID bound {} ({} live IDs), above {}, the SPIR-V "
                  "specification's universal limit (spirv-val rejects it; drivers need not accept it)",
                  module_name(report), out.id_bound, out.live_ids, kSpirvUniversalIdBound),
      std::move(remedy));
}

// Fills the summary; `used` is the module returned, or null when the failure is thrown.
void summarize(OptimizerReport& report, const ModuleStats* used) {
  report.peak_id_bound = 0;
  report.total_ms = 0;
  for (const OptimizerPassRow& row : report.rows) {
    const uint32_t peak = std::max(row.id_bound, row.peak_id_bound);
    if (peak > report.peak_id_bound) {
      report.peak_id_bound = peak;
      report.peak_pass = row.pass;
    }
    report.total_ms += row.ms;
  }
  report.final_id_bound = used ? used->id_bound : 0;
  report.live_ids = used ? used->live_ids : 0;
}

// Applies the fail-closed rule: throws, or (allow_fallback) returns the input with a warning.
OptimizeResult fail(OptimizerReport report, const OptimizerFailure& failure, Diagnostic diagnostic,
                    std::span<const uint32_t> input, const ModuleStats& input_stats) {
  report.failure = failure;
  if (!report.options.allow_fallback || input_stats.id_bound > kSpirvUniversalIdBound) {
    summarize(report, nullptr);
    throw SpirvOptimizerError(std::move(diagnostic), std::move(report));
  }
  report.used_fallback = true;
  summarize(report, &input_stats);
  report.warnings.push_back(fmt::format("WARNING: SPIR-V optimizer fallback: {} uses the UNOPTIMIZED module: {}",
                                        module_name(report), diagnostic.message));
  if (report.options.validate) {
    report.validated = true;
    report.valid = validate(input, report.options.target_env, report.messages, kValidatorName);
    if (!report.valid) {
      report.used_fallback = false;  // nothing valid is left to use
      summarize(report, nullptr);
      Diagnostic invalid = invalid_output_diagnostic(report, false);  // before `report` is moved from
      throw SpirvOptimizerError(std::move(invalid), std::move(report));
    }
  }
  return {std::vector<uint32_t>(input.begin(), input.end()), std::move(report)};
}

}  // namespace

std::vector<std::string> optimizer_pass_names(const OptimizerOptions& options) {
  std::vector<std::string> names;
  for (const OptimizerStep& step : optimizer_steps(options.intermediate_dce, options.compact_ids))
    names.emplace_back(step.name);
  return names;
}

namespace {

OptimizerFailure overflow_failure(const OptimizerOptions& options, std::string_view pass, size_t index,
                                  uint32_t bound_before) {
  OptimizerFailure failure;
  failure.kind = OptimizerFailureKind::kIdOverflow;
  failure.pass = pass;
  failure.pass_index = static_cast<int>(index);
  failure.max_id_bound = options.max_id_bound;
  failure.id_bound_before = bound_before;
  return failure;
}

// The shortest prefix of `steps` that fails on `input` (the whole list is known to fail): the pass
// that failed in the one-optimizer run, since each prefix runs exactly as the pipeline's start.
size_t failing_prefix(std::span<const OptimizerStep> steps, std::span<const uint32_t> input,
                      const OptimizerOptions& options) {
  size_t ok = 0, bad = steps.size();
  while (bad - ok > 1) {
    const size_t mid = ok + (bad - ok) / 2;
    std::vector<OptimizerMessage> ignored;
    if (run_steps(steps.first(mid), input, options.target_env, options.max_id_bound, ignored, "probe").succeeded)
      ok = mid;
    else
      bad = mid;
  }
  return bad;
}

// The per-pass path: one optimizer per pass, each pass's need measured. Returns false (with
// `failure` set) when a pass fails; `current` and `current_stats` follow the module.
bool run_pass_by_pass(std::span<const OptimizerStep> steps, const OptimizerOptions& options, OptimizerReport& report,
                      std::vector<uint32_t>& current, ModuleStats& current_stats, OptimizerFailure& failure) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::span<const OptimizerStep> step = steps.subspan(i, 1);
    if (options.on_pass) options.on_pass(i + 1, steps.size());
    PipelineRun run = run_steps(step, current, options.target_env, options.max_id_bound, report.messages, step[0].name);
    std::optional<ModuleStats> stats;
    if (run.succeeded) stats = measure_module(run.output);
    if (!stats) {
      if (run.id_overflow) {
        failure = overflow_failure(options, step[0].name, i + 1, current_stats.id_bound);
        const NeedSearch need = search_need(step, current, options.target_env, options.max_id_bound, 0,
                                            need_probe_cap(options.max_id_bound));
        failure.need_above = need.fail;
        failure.need_at_most = need.fit;
      } else {
        failure.kind = OptimizerFailureKind::kPassFailed;
        failure.pass = step[0].name;
        failure.pass_index = static_cast<int>(i + 1);
        failure.max_id_bound = options.max_id_bound;
        failure.id_bound_before = current_stats.id_bound;
      }
      return false;
    }
    OptimizerPassRow row =
        make_row(static_cast<int>(i + 1), step[0].name, step[0].flag, *stats, run.ms, run.output != current);
    // The bound only grows while a pass runs, so it needed at least max(in, out); one run under
    // that bound tells whether it needed more.
    const uint32_t floor = std::max(current_stats.id_bound, stats->id_bound);
    row.peak_id_bound = floor;
    row.peak_exact = true;
    if (floor < options.max_id_bound) {
      row.probe_runs = 1;
      if (!fits(step, current, options.target_env, floor)) {
        const NeedSearch need = search_need(step, current, options.target_env, floor, options.max_id_bound, 0);
        row.peak_id_bound = need.fit;
        row.peak_exact = need.fit == need.fail + 1;
        row.probe_runs += need.runs;
      }
    }
    report.rows.push_back(std::move(row));
    current = std::move(run.output);
    current_stats = *stats;
  }
  return true;
}

}  // namespace

OptimizeResult optimize_spirv(std::span<const uint32_t> words, const OptimizerOptions& options, std::string_view kernel,
                              std::string_view task) {
  OptimizerReport report;
  report.kernel = kernel;
  report.task = task;
  report.options = options;
  report.options.on_pass = nullptr;  // the callback may not outlive this call

  std::string parse_error;
  const std::optional<ModuleStats> input_stats = measure_module(words, &parse_error);
  if (!input_stats)
    throw UserError(fmt::format("the input of the SPIR-V optimizer for kernel '{}', task '{}' is not a SPIR-V "
                                "module: {}",
                                kernel, task, parse_error),
                    "pass the words produced by the SPIR-V emitter");
  report.rows.push_back(make_row(0, "input", "", *input_stats, 0, false));
  const std::vector<OptimizerStep> steps = optimizer_steps(options.intermediate_dce, options.compact_ids);
  if (input_stats->id_bound > options.max_id_bound) {
    OptimizerFailure failure = overflow_failure(options, "input", 0, input_stats->id_bound);
    Diagnostic diagnostic = id_overflow_diagnostic(report, failure, steps.size());
    return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
  }

  std::vector<uint32_t> current(words.begin(), words.end());
  ModuleStats current_stats = *input_stats;
  if (options.measure_passes) {
    OptimizerFailure failure;
    if (!run_pass_by_pass(steps, options, report, current, current_stats, failure)) {
      Diagnostic diagnostic = failure.kind == OptimizerFailureKind::kIdOverflow
                                  ? id_overflow_diagnostic(report, failure, steps.size())
                                  : pass_failed_diagnostic(report, failure, steps.size());
      return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
    }
  } else {
    PipelineRun run = run_steps(steps, words, options.target_env, options.max_id_bound, report.messages, "pipeline");
    std::optional<ModuleStats> stats;
    if (run.succeeded) stats = measure_module(run.output);
    if (!stats) {
      const size_t index = failing_prefix(steps, words, options);
      const std::span<const OptimizerStep> prefix = std::span(steps).first(index);
      OptimizerFailure failure;
      if (run.id_overflow) {
        failure = overflow_failure(options, steps[index - 1].name, index, input_stats->id_bound);
        const NeedSearch need = search_need(prefix, words, options.target_env, options.max_id_bound, 0,
                                            need_probe_cap(options.max_id_bound));
        failure.need_above = need.fail;
        failure.need_at_most = need.fit;
      } else {
        failure.kind = OptimizerFailureKind::kPassFailed;
        failure.pass = steps[index - 1].name;
        failure.pass_index = static_cast<int>(index);
        failure.max_id_bound = options.max_id_bound;
        failure.id_bound_before = input_stats->id_bound;
        for (OptimizerMessage& m : report.messages)
          if (m.first_pass == "pipeline") m.first_pass = failure.pass;
      }
      Diagnostic diagnostic = failure.kind == OptimizerFailureKind::kIdOverflow
                                  ? id_overflow_diagnostic(report, failure, steps.size())
                                  : pass_failed_diagnostic(report, failure, steps.size());
      return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
    }
    report.rows.push_back(
        make_row(static_cast<int>(steps.size()), "pipeline", "", *stats, run.ms, run.output != current));
    current = std::move(run.output);
    current_stats = *stats;
  }

  // Fails closed even unvalidated: a raised max_id_bound must never leak into the module used.
  if (current_stats.id_bound > kSpirvUniversalIdBound) {
    OptimizerFailure failure;
    failure.kind = OptimizerFailureKind::kInvalidOutput;
    failure.pass = "universal ID limit";
    failure.max_id_bound = options.max_id_bound;
    failure.id_bound_before = current_stats.id_bound;
    Diagnostic diagnostic = over_universal_limit_diagnostic(report, current_stats);
    return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
  }
  if (options.validate) {
    report.validated = true;
    report.valid = validate(current, options.target_env, report.messages, kValidatorName);
    if (!report.valid) {
      std::vector<OptimizerMessage> input_messages;
      const bool input_valid = validate(words, options.target_env, input_messages, "spirv-val (input)");
      OptimizerFailure failure;
      failure.kind = OptimizerFailureKind::kInvalidOutput;
      failure.pass = kValidatorName;
      failure.max_id_bound = options.max_id_bound;
      failure.id_bound_before = current_stats.id_bound;
      Diagnostic diagnostic = invalid_output_diagnostic(report, input_valid);
      for (OptimizerMessage& m : input_messages) report.messages.push_back(std::move(m));
      report.validated = false;
      if (!input_valid) {  // no module worth falling back to
        report.failure = failure;
        summarize(report, nullptr);
        throw SpirvOptimizerError(std::move(diagnostic), std::move(report));
      }
      return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
    }
  }
  summarize(report, &current_stats);
  return {std::move(current), std::move(report)};
}

}  // namespace pb::codegen::spirv
