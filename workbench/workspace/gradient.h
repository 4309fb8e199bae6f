// Gradients on a chosen backend (the reference interpreter by default). run_with_gradients turns a forward kernel into
// its reverse kernel with a pipeline (default `reverse_ad`), runs forward, seeds the outputs' gradient fields and runs
// the reverse kernel on the same state. gradcheck compares those gradients with central finite differences of the
// forward kernel. docs/autodiff.md explains the tolerances, the f64 mode and kinks.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ir/kernel.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

inline constexpr const char* kDefaultReversePipeline = "reverse_ad";

// The reverse pipeline under the command line's --global-access: "error" keeps `pipeline`; "warn"
// turns the default pipeline into reverse_ad{global_access=warn} (a violation of the global data
// access rule becomes a warning). Any other pipeline with "warn" is a UserError: it says where the
// option goes in pipeline text.
std::string reverse_pipeline_for_access_rule(const std::string& pipeline, const std::string& global_access);

// The reverse kernel `pipeline` makes from a clone of `forward`. A pass that fails is a
// UserError naming the pass and its message (an InternalError when it broke an invariant).
// `file` names the kernel's file in the remedy of a failing pass (FILE when unknown). A pass that
// refuses the kernel for breaking a rule it checks throws a RuleViolation. The passes' warnings
// go to `warnings` when given. `access_unproven`, when given, tells whether check_global_access
// ran, had findings it could not prove and was not told to warn (see PreparedRequest).
std::unique_ptr<ir::Kernel> make_reverse_kernel(const ir::Kernel& forward, const std::string& pipeline,
                                                const std::string& file = "FILE",
                                                std::vector<std::string>* warnings = nullptr,
                                                bool* access_unproven = nullptr);

struct GradientOutput {
  nlohmann::json values;                // runtime::state_to_json after both runs (gradients under "grad")
  std::string reverse_text;             // the reverse kernel, canonical text
  std::string printed;                  // print statements of the forward run, then of the reverse run
  std::vector<StackUse> stacks;         // every stack whose alloc ran in the reverse run, in program order
  std::vector<int> unexercised_stacks;  // of the reverse kernel (see unexercised_stacks in run.h)
  std::vector<std::string> warnings;    // of the pipeline's passes, "pass: message"
};

// Runs `forward`, then sets every element of each req.seed_grads field's gradient to its value,
// then runs the reverse kernel on the same state with the same options. Gradient fields the
// inputs give start from those values and accumulate. Throws UserError for bad inputs or a
// failing pipeline, RunFailure for a run-time error of either kernel.
GradientOutput run_with_gradients(const ir::Kernel& forward, const std::string& pipeline, const RunRequest& req);

enum class GradStatus { ok, mismatch, kink };
std::string_view status_name(GradStatus s);

struct GradElement {
  std::string field;
  std::vector<int64_t> index;
  double analytic = 0;
  double numeric = 0;
  double abs_error = 0;  // |analytic - numeric|
  double rel_error = 0;  // abs_error / max(|analytic|, |numeric|); 0 when both are 0
  GradStatus status = GradStatus::ok;
};

struct GradcheckOptions {
  std::string loss;              // L = the sum of this field's elements; needs a gradient field
  std::vector<std::string> wrt;  // empty: every float field with a gradient field but the loss
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;           // the inputs file, named in errors about the inputs
  std::string kernel_name = "FILE";  // the kernel's file, named in remedies
  double eps = 1e-6;                 // step h = eps * max(1, |x|)
  double rel = 1e-5;                 // ok when |a - n| <= abs + rel * max(|a|, |n|)
  double abs = 1e-8;
  std::string pipeline = kDefaultReversePipeline;
  uint64_t max_steps = runtime::kDefaultMaxSteps;  // per run; 0: no limit
  Backend backend = Backend::interp;               // where the analytic gradient is computed
};

struct GradcheckResult {
  std::vector<GradElement> elements;  // every element of every wrt field, fields in order, row-major
  std::vector<std::string> wrt;       // the fields checked
  double loss = 0;                    // L at the inputs
  size_t compared = 0;                // elements that are not kinks
  size_t mismatches = 0;
  size_t kinks = 0;
  double max_abs_error = 0;  // over compared elements
  double max_rel_error = 0;
  std::string reverse_text;
  std::vector<int> unexercised_stacks;  // of the reverse kernel, in the analytic run
  std::vector<std::string> warnings;    // of the pipeline's passes, "pass: message"
  // A check that compared nothing (every element a kink, or no element at all) did not pass.
  bool passed() const { return mismatches == 0 && compared > 0; }
};

// Analytic gradient: forward + reverse with the loss gradient seeded 1 and every other gradient
// field starting at 0, on options.backend. Numeric gradient: (L(x+h) - L(x-h)) / 2h per element,
// each run from fresh inputs, always on the interpreter (the only backend that traces decisions).
// Every run computes f32 as f64 (a backend runs the kernel widened to f64). An element whose runs
// at x+h, x-h and x do not take the same decisions (runtime::RunOptions::trace_decisions) is a
// kink and is not compared.
// Throws UserError for bad options, inputs or pipeline; RunFailure for run-time errors.
GradcheckResult gradcheck(const ir::Kernel& forward, const GradcheckOptions& options);

// "x[2, 0]" (or "x" for a 0-d field).
std::string element_name(const GradElement& e);

}  // namespace pb::workbench
