#include "passes/registry.h"

#include "ir/assert.h"
#include "passes/autodiff/backup_ssa.h"
#include "passes/autodiff/check_global_access.h"
#include "passes/autodiff/coalesce_stack_loads.h"
#include "passes/autodiff/eliminate_recomputable_pushes.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/autodiff/make_adjoint.h"
#include "passes/autodiff/make_dual.h"
#include "passes/autodiff/promote_ssa_to_local.h"
#include "passes/autodiff/replace_locals_with_stacks.h"
#include "passes/autodiff/reverse_outer_loops.h"
#include "passes/dce.h"
#include "passes/determine_ad_stack_size.h"
#include "passes/relayout.h"
#include "passes/renumber.h"
#include "passes/simplify.h"

namespace pb::passes {

namespace {

std::vector<PassInfo>& passes() {
  static std::vector<PassInfo> list = {
      BackupSsaPass::info(),
      CheckGlobalAccessPass::info(),
      CoalesceStackLoadsPass::info(),
      DcePass::info(),
      DetermineAdStackSizePass::info(),
      EliminateRecomputablePushesPass::info(),
      IdentifyIndependentBlocksPass::info(),
      MakeAdjointPass::info(),
      MakeDualPass::info(),
      PromoteSsaToLocalPass::info(),
      ReplaceLocalsWithStacksPass::info(),
      ReverseOuterLoopsPass::info(),
      RelayoutPass::info(),
      RenumberPass::info(),
      SimplifyPass::info(),
  };
  return list;
}

std::vector<NamedPipelineInfo>& pipelines() {
  static std::vector<NamedPipelineInfo> list = {
      {.name = "cleanup",
       .summary = "simplify then dce",
       .options = {},
       .expand = [](const PassOptions&) { return std::string("simplify,dce"); }},
      {.name = "forward_ad",
       .summary = "Forward-mode autodiff: the kernel also computes the tangents of its values (docs/autodiff.md)",
       .options = {},
       .expand = [](const PassOptions&) { return std::string("make_dual,simplify,dce"); }},
      {.name = "reverse_ad",
       .summary = "Reverse-mode autodiff: the forward kernel becomes the reverse kernel (docs/autodiff.md)",
       .options =
           {{.name = "use_stack",
             .type = OptionType::Bool,
             .default_value = "true",
             .help = "back per-iteration values with autodiff stacks; false: no stacks (kernels that need them fail)",
             .choices = {}},
            {.name = "ad_stack_size",
             .type = OptionType::Int,
             .default_value = "0",
             .help = "capacity of every stack; 0 = adaptive (determine_ad_stack_size computes exact bounds)",
             .choices = {},
             .min_int = 0}},
       .expand =
           [](const PassOptions& o) {
             std::string stages = "check_global_access,identify_independent_blocks,reverse_outer_loops";
             if (o.get_bool("use_stack"))
               stages += ",promote_ssa_to_local,replace_locals_with_stacks{ad_stack_size=" +
                         std::to_string(o.get_int("ad_stack_size")) + "},eliminate_recomputable_pushes";
             return stages +
                    ",relayout,make_adjoint,backup_ssa,coalesce_stack_loads,simplify,dce,determine_ad_stack_size";
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
