// Replaying a kernel through a pipeline: the workspace keeps the pipeline, the per-pass records
// and the final kernel as plain data; the CLI prints from them and the GUI draws them.
// When a pass fails, a reproducer (a fixture holding the IR just before that pass and the
// remaining pipeline) can be written; replaying it reproduces the failure.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ir/kernel.h"
#include "passes/pass_manager.h"

namespace pb::workbench {

// A kernel file, or a fixture/reproducer (which may carry a pipeline).
struct LoadedSource {
  std::unique_ptr<ir::Kernel> kernel;
  std::optional<std::string> pipeline;  // from a fixture's "pipeline"
};
LoadedSource load_source(const std::string& path, const std::string& dump = {});

struct ReplayResult {
  passes::Pipeline pipeline;
  passes::PipelineRun run;
  std::unique_ptr<ir::Kernel> kernel;  // the kernel after the pipeline (or where it stopped)
};

// Parses `pipeline_text` (UserError on a bad pipeline) and runs it on `kernel`.
ReplayResult replay(std::unique_ptr<ir::Kernel> kernel, const std::string& pipeline_text,
                    const passes::RunOptions& options);

// The unified diff a pass record made ("" when unchanged or IR was not captured).
std::string pass_diff(const passes::PassRecord& rec);

// Writes the reproducer of a failed run into `dir`; returns its path.
std::string write_reproducer(const ReplayResult& r, const std::string& dir);

}  // namespace pb::workbench
