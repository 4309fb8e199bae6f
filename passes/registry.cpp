#include "passes/registry.h"

#include "ir/assert.h"
#include "passes/dce.h"
#include "passes/renumber.h"
#include "passes/simplify.h"

namespace pb::passes {

namespace {

std::vector<PassInfo>& passes() {
  static std::vector<PassInfo> list = {
      DcePass::info(),
      RenumberPass::info(),
      SimplifyPass::info(),
  };
  return list;
}

std::vector<NamedPipelineInfo>& pipelines() {
  static std::vector<NamedPipelineInfo> list = {
      {.name = "cleanup", .summary = "simplify then dce", .options = {}, .expand = [](const PassOptions&) { return std::string("simplify,dce"); }},
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
