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

namespace pb::codegen::spirv {
namespace {

constexpr std::string_view kValidatorName = "spirv-val";

spv_target_env to_spv_env(TargetEnv env) {
  switch (env) {
    case TargetEnv::kVulkan1_0:
      return SPV_ENV_VULKAN_1_0;
    case TargetEnv::kVulkan1_1:
      return SPV_ENV_VULKAN_1_1;
    case TargetEnv::kVulkan1_2:
      return SPV_ENV_VULKAN_1_2;
    case TargetEnv::kVulkan1_3:
      return SPV_ENV_VULKAN_1_3;
  }
  return SPV_ENV_VULKAN_1_1;
}

std::string_view level_name(spv_message_level_t level) {
  switch (level) {
    case SPV_MSG_FATAL:
      return "fatal";
    case SPV_MSG_INTERNAL_ERROR:
      return "internal_error";
    case SPV_MSG_ERROR:
      return "error";
    case SPV_MSG_WARNING:
      return "warning";
    case SPV_MSG_INFO:
      return "info";
    case SPV_MSG_DEBUG:
      return "debug";
  }
  return "unknown";
}

// A message consumer that feeds `messages` under `pass` and notices SPIRV-Tools' ID overflow text.
spvtools::MessageConsumer collecting_consumer(std::vector<OptimizerMessage>& messages, std::string_view pass,
                                              bool* id_overflow) {
  return [&messages, pass, id_overflow](spv_message_level_t level, const char* source, const spv_position_t&,
                                        const char* message) {
    const std::string_view text = message ? message : "";
    if (id_overflow && text.find("ID overflow") != std::string_view::npos) *id_overflow = true;
    const std::string full = source && *source ? fmt::format("{}: {}", source, text) : std::string(text);
    record_message(messages, level_name(level), full, pass);
  };
}

struct PassRun {
  bool succeeded = false;  // Run() returned true and no ID overflow was reported
  bool id_overflow = false;
  std::vector<uint32_t> output;
  double ms = 0;
};

PassRun run_pass(const OptimizerStep& step, std::span<const uint32_t> input, const OptimizerOptions& options,
                 std::vector<OptimizerMessage>& messages) {
  PassRun run;
  spvtools::Optimizer optimizer(to_spv_env(options.target_env));
  optimizer.SetMessageConsumer(collecting_consumer(messages, step.name, &run.id_overflow));
  optimizer.RegisterPass(step.make_pass());
  spvtools::OptimizerOptions spv_options;
  spv_options.set_run_validator(false);  // validated once, at the end
  spv_options.set_max_id_bound(effective_spirv_tools_max_id_bound(options));
  const auto start = std::chrono::steady_clock::now();
  bool ok = false;
  codegen::on_large_stack([&] { ok = optimizer.Run(input.data(), input.size(), &run.output, spv_options); });
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  run.succeeded = ok && !run.id_overflow;
  return run;
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
  tools.SetMessageConsumer(collecting_consumer(messages, label, nullptr));
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

Diagnostic id_overflow_diagnostic(const OptimizerReport& report, const OptimizerFailure& failure, size_t steps) {
  std::string message =
      failure.pass_index == 0
          ? fmt::format(
                "SPIR-V optimization of {} cannot start: the input's ID bound {} already exceeds the maximum "
                "ID bound {}",
                module_name(report), failure.id_bound_before, failure.max_id_bound)
          : fmt::format(
                "SPIR-V optimization of {} ran out of IDs: pass {} ({} of {}) needed an ID beyond the maximum "
                "ID bound {} (the module's ID bound was {} before that pass{})",
                module_name(report), failure.pass, failure.pass_index, steps, failure.max_id_bound,
                failure.id_bound_before,
                failure.id_bound_reached ? fmt::format(" and {} after it", failure.id_bound_reached) : "");
  std::vector<std::string> remedies;
  if (failure.max_id_bound < std::numeric_limits<uint32_t>::max())
    remedies.push_back("raise the maximum ID bound (--max-id-bound, up to 4294967295)");
  if (!report.options.intermediate_dce)
    remedies.push_back("keep the intermediate AggressiveDCE passes (drop --no-intermediate-dce)");
  if (!report.options.counts_in_shared_array)
    remedies.push_back("lower autodiff stacks with the shared-array count lowering, which needs far fewer IDs");
  std::string remedy = "either " + remedies.front();
  for (size_t i = 1; i < remedies.size(); ++i) remedy += (i + 1 == remedies.size() ? ", or " : ", ") + remedies[i];
  remedy += "; --spirv-opt-fallback runs the unoptimized module instead";
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

// Fills the summary; `used` is the module returned, or null when the failure is thrown.
void summarize(OptimizerReport& report, const ModuleStats* used) {
  report.peak_id_bound = 0;
  report.total_ms = 0;
  for (const OptimizerPassRow& row : report.rows) {
    if (row.id_bound > report.peak_id_bound) {
      report.peak_id_bound = row.id_bound;
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
  if (!report.options.allow_fallback) {
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

OptimizeResult optimize_spirv(std::span<const uint32_t> words, const OptimizerOptions& options, std::string_view kernel,
                              std::string_view task) {
  OptimizerReport report;
  report.kernel = kernel;
  report.task = task;
  report.options = options;

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
    OptimizerFailure failure;
    failure.kind = OptimizerFailureKind::kIdOverflow;
    failure.pass = "input";
    failure.max_id_bound = options.max_id_bound;
    failure.id_bound_before = input_stats->id_bound;
    Diagnostic diagnostic = id_overflow_diagnostic(report, failure, steps.size());
    return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
  }

  std::vector<uint32_t> current(words.begin(), words.end());
  ModuleStats current_stats = *input_stats;
  for (size_t i = 0; i < steps.size(); ++i) {
    const OptimizerStep& step = steps[i];
    PassRun run = run_pass(step, current, options, report.messages);
    std::optional<ModuleStats> stats;
    if (run.succeeded) stats = measure_module(run.output);
    // Either SPIRV-Tools hit its own limit, or the pass went past ours (see spirv_tools_max_id_bound).
    const bool over_limit = stats && stats->id_bound > options.max_id_bound;
    if (!stats || over_limit) {
      OptimizerFailure failure;
      failure.kind =
          run.id_overflow || over_limit ? OptimizerFailureKind::kIdOverflow : OptimizerFailureKind::kPassFailed;
      failure.id_bound_reached = over_limit ? stats->id_bound : 0;
      failure.pass = step.name;
      failure.pass_index = static_cast<int>(i + 1);
      failure.max_id_bound = options.max_id_bound;
      failure.id_bound_before = current_stats.id_bound;
      Diagnostic diagnostic = failure.kind == OptimizerFailureKind::kIdOverflow
                                  ? id_overflow_diagnostic(report, failure, steps.size())
                                  : pass_failed_diagnostic(report, failure, steps.size());
      return fail(std::move(report), failure, std::move(diagnostic), words, *input_stats);
    }
    const bool changed = run.output != current;
    report.rows.push_back(make_row(static_cast<int>(i + 1), step.name, step.flag, *stats, run.ms, changed));
    current = std::move(run.output);
    current_stats = *stats;
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
