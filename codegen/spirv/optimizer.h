// Runs the reference compiler's spirv-opt pipeline (optimizer_pipeline.h) on one task's module: in
// one spvtools::Optimizer (the normal path), or one pass at a time measuring the IDs each pass
// needs (options.measure_passes). Every run gets exactly options.max_id_bound and stops at the
// first ID it cannot have (optimizer_runs.h). Fails closed: an ID overflow (located: the pass, the
// measured need), a failing pass or an invalid result throws SpirvOptimizerError (a UserError that
// carries the report) unless options.allow_fallback, which returns the unoptimised input and
// records a warning. The returned words are always the module actually used, never the output of
// a failed pass.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/spirv/optimizer_report.h"
#include "ir/diagnostic.h"

namespace pb::codegen::spirv {

struct OptimizeResult {
  std::vector<uint32_t> words;  // the module to hand to the driver / cross-compiler
  OptimizerReport report;
};

class SpirvOptimizerError : public UserError {
 public:
  SpirvOptimizerError(Diagnostic diagnostic, OptimizerReport report)
      : UserError(std::move(diagnostic)), report_(std::move(report)) {}
  const OptimizerReport& report() const { return report_; }

 private:
  OptimizerReport report_;
};

// `kernel` and `task` only name the module in the report and in errors. Throws UserError when the
// input is not a SPIR-V binary at all (no fallback applies).
OptimizeResult optimize_spirv(std::span<const uint32_t> words, const OptimizerOptions& options, std::string_view kernel,
                              std::string_view task);

// The report names of the passes `options` selects, in order.
std::vector<std::string> optimizer_pass_names(const OptimizerOptions& options);

}  // namespace pb::codegen::spirv
