#include "codegen/spirv/optimizer_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <spirv-tools/optimizer.hpp>

#include "codegen/large_stack.h"

namespace pb::codegen::spirv {
namespace {

// Thrown by the consumer at the first ID overflow; caught in run_steps.
struct IdOverflowStop {};

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

}  // namespace

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

PipelineRun run_steps(std::span<const OptimizerStep> steps, std::span<const uint32_t> input, TargetEnv env,
                      uint32_t max_id_bound, std::vector<OptimizerMessage>& messages, std::string_view label) {
  PipelineRun run;
  spvtools::Optimizer optimizer(to_spv_env(env));
  optimizer.SetMessageConsumer(
      [&messages, label](spv_message_level_t level, const char* source, const spv_position_t&, const char* message) {
        const std::string_view text = message ? message : "";
        const std::string full = source && *source ? fmt::format("{}: {}", source, text) : std::string(text);
        record_message(messages, level_name(level), full, label);
        if (text.find("ID overflow") != std::string_view::npos) throw IdOverflowStop{};
      });
  for (const OptimizerStep& step : steps) optimizer.RegisterPass(step.make_pass());
  spvtools::OptimizerOptions options;
  options.set_run_validator(false);  // validated once, at the end
  options.set_max_id_bound(max_id_bound);
  const auto start = std::chrono::steady_clock::now();
  bool ok = false;
  codegen::on_large_stack([&] {
    try {
      ok = optimizer.Run(input.data(), input.size(), &run.output, options);
    } catch (const IdOverflowStop&) {
      run.id_overflow = true;
    }
  });
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  run.succeeded = ok && !run.id_overflow;
  if (!run.succeeded) run.output.clear();
  return run;
}

bool fits(std::span<const OptimizerStep> steps, std::span<const uint32_t> input, TargetEnv env, uint32_t max_id_bound) {
  std::vector<OptimizerMessage> ignored;
  return run_steps(steps, input, env, max_id_bound, ignored, "probe").succeeded;
}

NeedSearch search_need(std::span<const OptimizerStep> steps, std::span<const uint32_t> input, TargetEnv env,
                       uint32_t known_fail, uint32_t known_fit, uint32_t cap) {
  NeedSearch s{known_fail, known_fit, 0};
  while (s.fit == 0) {  // grow: double the margin above the last failure
    const uint64_t next = std::min<uint64_t>(uint64_t{s.fail} * 2, UINT32_MAX);
    if (next > cap || next == s.fail) return s;
    ++s.runs;
    if (fits(steps, input, env, static_cast<uint32_t>(next)))
      s.fit = static_cast<uint32_t>(next);
    else
      s.fail = static_cast<uint32_t>(next);
  }
  while (s.fit - s.fail > 1 && uint64_t{s.fit - s.fail} * 16 > s.fit) {
    const uint32_t mid = s.fail + (s.fit - s.fail) / 2;
    ++s.runs;
    if (fits(steps, input, env, mid))
      s.fit = mid;
    else
      s.fail = mid;
  }
  return s;
}

}  // namespace pb::codegen::spirv
