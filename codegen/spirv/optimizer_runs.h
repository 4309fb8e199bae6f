// Running SPIRV-Tools passes safely under an ID bound, and measuring what a pass needs.
//
// Contract: every run hands SPIRV-Tools exactly the bound given. The message consumer stops the
// run (by throwing through SPIRV-Tools, caught here) at the first "ID overflow" message, i.e. the
// first time IRContext::TakeNextId has no ID left, before any pass can use the 0 it returns, so
// hitting the bound never reaches the passes' broken overflow paths (endless recursion, null
// constants, freed memory) and a pass repeating the message cannot flood the consumer.
#pragma once

#include <spirv-tools/libspirv.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "codegen/spirv/optimizer_pipeline.h"
#include "codegen/spirv/optimizer_report.h"

namespace pb::codegen::spirv {

struct PipelineRun {
  bool succeeded = false;  // Run() returned true and no ID ran out
  bool id_overflow = false;
  std::vector<uint32_t> output;  // empty unless succeeded
  double ms = 0;                 // wall time of Optimizer::Run (parse, passes, serialise)
};

// Runs `steps` in one spvtools::Optimizer on `input` under `max_id_bound`; messages are recorded
// under `label`.
PipelineRun run_steps(std::span<const OptimizerStep> steps, std::span<const uint32_t> input, TargetEnv env,
                      uint32_t max_id_bound, std::vector<OptimizerMessage>& messages, std::string_view label);

// True when `steps` run on `input` under `max_id_bound` without running out of IDs.
bool fits(std::span<const OptimizerStep> steps, std::span<const uint32_t> input, TargetEnv env, uint32_t max_id_bound);

// The smallest bound under which `steps` run, searched in (known_fail, known_fit]: `known_fit` is a
// bound that fits (nullopt: none known yet; then the bound grows by doubling from known_fail,
// stopping above `cap`). The search stops once the interval is within 1/16 of the answer, so the
// result is an upper bound `fit` with the need in (fail, fit]; exact when fit == fail + 1.
struct NeedSearch {
  uint32_t fail = 0;  // a bound known too small
  uint32_t fit = 0;   // a bound known to fit; 0 when none up to `cap` did
  int runs = 0;       // extra runs spent
};
NeedSearch search_need(std::span<const OptimizerStep> steps, std::span<const uint32_t> input, TargetEnv env,
                       uint32_t known_fail, uint32_t known_fit, uint32_t cap);

spv_target_env to_spv_env(TargetEnv env);

}  // namespace pb::codegen::spirv
