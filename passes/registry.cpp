#include "passes/registry.h"

#include <set>
#include <string>
#include <utility>

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
#include "passes/demote_atomics.h"
#include "passes/determine_ad_stack_size.h"
#include "passes/lower_access.h"
#include "passes/offload.h"
#include "passes/relayout.h"
#include "passes/renumber.h"
#include "passes/scalarize.h"
#include "passes/simplify.h"

namespace pb::passes {

namespace {

const std::vector<PassInfo>& builtin_passes() {
  static const std::vector<PassInfo> list = {
      BackupSsaPass::info(),
      CheckGlobalAccessPass::info(),
      CoalesceStackLoadsPass::info(),
      DcePass::info(),
      DemoteAtomicsPass::info(),
      DetermineAdStackSizePass::info(),
      EliminateRecomputablePushesPass::info(),
      IdentifyIndependentBlocksPass::info(),
      LowerAccessPass::info(),
      MakeAdjointPass::info(),
      MakeDualPass::info(),
      OffloadPass::info(),
      PromoteSsaToLocalPass::info(),
      ReplaceLocalsWithStacksPass::info(),
      ReverseOuterLoopsPass::info(),
      RelayoutPass::info(),
      RenumberPass::info(),
      ScalarizePass::info(),
      SimplifyPass::info(),
  };
  return list;
}

const std::vector<NamedPipelineInfo>& builtin_pipelines() {
  static const std::vector<NamedPipelineInfo> list = {
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
             .min_int = 0},
            {.name = "global_access",
             .type = OptionType::String,
             .default_value = "error",
             .help = "a kernel in violation of the global data access rule (an element written after it was read): "
                     "error refuses it, warn differentiates it with a warning (check_global_access{findings=warn})",
             .choices = {"error", "warn"}}},
       .expand =
           [](const PassOptions& o) {
             std::string stages =
                 o.get_string("global_access") == "warn" ? "check_global_access{findings=warn}" : "check_global_access";
             stages += ",demote_atomics{locals_only=true},identify_independent_blocks,reverse_outer_loops";
             if (o.get_bool("use_stack"))
               stages += ",promote_ssa_to_local,replace_locals_with_stacks{ad_stack_size=" +
                         std::to_string(o.get_int("ad_stack_size")) + "},eliminate_recomputable_pushes";
             return stages +
                    ",relayout,make_adjoint,backup_ssa,coalesce_stack_loads,simplify,dce,determine_ad_stack_size";
           }},
  };
  return list;
}

// The live scopes, innermost last.
std::vector<const ScopedRegistry*>& scopes() {
  static std::vector<const ScopedRegistry*> list;
  return list;
}

template <class Info>
const Info* find_in(const std::vector<Info>& list, std::string_view name) {
  for (const auto& i : list)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace

const std::vector<PassInfo>& all_passes() { return builtin_passes(); }
const std::vector<NamedPipelineInfo>& all_named_pipelines() { return builtin_pipelines(); }

const PassInfo* find_pass(std::string_view name) {
  if (const PassInfo* p = find_in(builtin_passes(), name)) return p;
  for (const ScopedRegistry* s : scopes())
    if (const PassInfo* p = find_in(s->passes_, name)) return p;
  return nullptr;
}

const NamedPipelineInfo* find_named_pipeline(std::string_view name) {
  if (const NamedPipelineInfo* p = find_in(builtin_pipelines(), name)) return p;
  for (const ScopedRegistry* s : scopes())
    if (const NamedPipelineInfo* p = find_in(s->pipelines_, name)) return p;
  return nullptr;
}

ScopedRegistry::ScopedRegistry(std::vector<PassInfo> passes, std::vector<NamedPipelineInfo> pipelines)
    : passes_(std::move(passes)), pipelines_(std::move(pipelines)) {
  std::set<std::string_view> seen;
  auto check = [&](const std::string& name) {
    PB_ASSERT(!find_pass(name) && !find_named_pipeline(name) && seen.insert(name).second,
              "pass or pipeline '" + name + "' declared twice");
  };
  for (const PassInfo& p : passes_) check(p.name);
  for (const NamedPipelineInfo& p : pipelines_) check(p.name);
  scopes().push_back(this);
}

ScopedRegistry::~ScopedRegistry() {
  PB_ASSERT(!scopes().empty() && scopes().back() == this, "registry scopes must end in reverse order");
  scopes().pop_back();
}

}  // namespace pb::passes
