#include "passes/registry.h"

#include "ir/assert.h"
#include "passes/autodiff/backup_ssa.h"
#include "passes/autodiff/check_global_raw.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/autodiff/make_adjoint.h"
#include "passes/autodiff/reverse_outer_loops.h"
#include "passes/dce.h"
#include "passes/determine_ad_stack_size.h"
#include "passes/renumber.h"
#include "passes/simplify.h"

namespace pb::passes {

namespace {

std::vector<PassInfo>& passes() {
  static std::vector<PassInfo> list = {
      BackupSsaPass::info(),
      CheckGlobalRawPass::info(),
      DcePass::info(),
      DetermineAdStackSizePass::info(),
      IdentifyIndependentBlocksPass::info(),
      MakeAdjointPass::info(),
      ReverseOuterLoopsPass::info(),
      RenumberPass::info(),
      SimplifyPass::info(),
  };
  return list;
}

std::vector<NamedPipelineInfo>& pipelines() {
  static std::vector<NamedPipelineInfo> list = {
      {.name = "cleanup", .summary = "simplify then dce", .options = {}, .expand = [](const PassOptions&) { return std::string("simplify,dce"); }},
      {.name = "reverse_ad",
       .summary = "Reverse-mode autodiff: the forward kernel becomes the reverse kernel (docs/autodiff.md)",
       .options = {},
       .expand = [](const PassOptions&) {
         return std::string("check_global_raw,identify_independent_blocks,reverse_outer_loops,make_adjoint,backup_ssa,simplify,dce");
       }},
  };
  return list;
}

}  // namespace

const std::vector<PassInfo>& all_passes() { return passes(); }
const std::vector<NamedPipelineInfo>& all_named_pipelines() { return pipelines(); }

const PassInfo* find_pass(std::string_view name) {
  for (const auto& p : passes())
    if (p.name == name) return &p;
  return nullptr;
}

const NamedPipelineInfo* find_named_pipeline(std::string_view name) {
  for (const auto& p : pipelines())
    if (p.name == name) return &p;
  return nullptr;
}

void register_pass(PassInfo info) {
  PB_ASSERT(!find_pass(info.name) && !find_named_pipeline(info.name), "pass '" + info.name + "' registered twice");
  passes().push_back(std::move(info));
}

void register_named_pipeline(NamedPipelineInfo info) {
  PB_ASSERT(!find_pass(info.name) && !find_named_pipeline(info.name), "pipeline '" + info.name + "' registered twice");
  pipelines().push_back(std::move(info));
}

}  // namespace pb::passes
