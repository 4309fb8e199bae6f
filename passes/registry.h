// Every pass and named pipeline passbench knows. Built-in passes are listed in registry.cpp;
// tests may add their own (for example a deliberately broken pass) with register_pass.
#pragma once

#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace pb::passes {

const std::vector<PassInfo>& all_passes();
const std::vector<NamedPipelineInfo>& all_named_pipelines();
const PassInfo* find_pass(std::string_view name);
const NamedPipelineInfo* find_named_pipeline(std::string_view name);
void register_pass(PassInfo info);
void register_named_pipeline(NamedPipelineInfo info);

}  // namespace pb::passes
