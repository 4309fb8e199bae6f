// Forward-mode autodiff on a chosen backend (the reference interpreter by default). run_with_duals turns a kernel into
// its Jacobian-vector-product kernel with a pipeline (default `forward_ad`), seeds dual arrays and runs it once.
// jvpcheck compares the tangents with central finite differences; adjointcheck cross-checks forward and reverse mode: w
// . (J v) == (J^T w) . v. docs/autodiff.md explains both.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

inline constexpr const char* kDefaultForwardPipeline = "forward_ad";

// The tangent kernel `pipeline` makes from a clone of `forward` (UserError naming a failing pass).
std::unique_ptr<ir::Kernel> make_dual_kernel(const ir::Kernel& forward, const std::string& pipeline,
                                             const std::string& file = "FILE");

struct DualOutput {
  nlohmann::json values;  // runtime::state_to_json of the tangent kernel (tangents under "dual")
  std::string dual_text;  // the tangent kernel, canonical text
  std::string printed;
};

// Runs the tangent kernel once, after setting every element of each seeded array's dual to its
// value; duals the inputs give start from those values, all others at 0.
DualOutput run_with_duals(const ir::Kernel& forward, const std::string& pipeline, const RunRequest& req,
                          const std::vector<std::pair<std::string, double>>& seed_duals);

struct JvpElement {
  std::string out, wrt;  // element names: "y[2]", "x[0]"
  double analytic = 0, numeric = 0;
  double abs_error = 0, rel_error = 0;
  GradStatus status = GradStatus::ok;
};

struct JvpcheckOptions {
  std::vector<std::string> wrt;  // inputs (a dual each); empty: every float field with a dual/grad and ndarray
  std::vector<std::string> out;  // outputs; empty: every such array not in wrt
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;
  std::string kernel_name = "FILE";
  double eps = 1e-6, rel = 1e-5, abs = 1e-8;
  std::string pipeline = kDefaultForwardPipeline;
  uint64_t max_steps = runtime::kDefaultMaxSteps;
  Backend backend = Backend::interp;  // where the tangents are computed (finite differences: the interpreter)
};

struct JvpcheckResult {
  std::vector<JvpElement> elements;  // every (out element, wrt element) pair
  std::vector<std::string> wrt, out;
  size_t compared = 0, mismatches = 0, kinks = 0;
  double max_abs_error = 0, max_rel_error = 0;
  std::string dual_text;
  bool passed() const { return mismatches == 0 && compared > 0; }
};

// For each element x_i of each wrt array: the tangent kernel with dual(x_i) = 1 and every other
// dual 0 gives column i of the Jacobian in the out arrays' duals; the forward kernel at x_i +- h
// gives (y(x+h) - y(x-h)) / 2h, h = eps * max(1, |x_i|). Everything runs in f64; an element
// whose three runs branch differently is a kink and is not compared.
JvpcheckResult jvpcheck(const ir::Kernel& forward, const JvpcheckOptions& options);

struct AdjointcheckOptions {
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;
  std::string kernel_name = "FILE";
  uint64_t seed = 1;
  int trials = 3;
  double rel = 1e-9, abs = 1e-12;
  std::string forward_pipeline = kDefaultForwardPipeline;
  std::string reverse_pipeline = kDefaultReversePipeline;
  uint64_t max_steps = runtime::kDefaultMaxSteps;
  Backend backend = Backend::interp;  // where both the tangent and the reverse runs happen
};

struct AdjointTrial {
  double forward = 0;  // w . (J v)
  double reverse = 0;  // (J^T w) . v
  double scale = 0;    // the larger sum of absolute terms, the tolerance's scale
  bool ok = false;
};

struct AdjointcheckResult {
  std::vector<std::string> arrays;  // the differentiable arrays (fields with a gradient, float ndarrays)
  std::vector<AdjointTrial> trials;
  size_t elements = 0;  // in all arrays
  size_t touched = 0;   // elements whose tangent or adjoint the kernels changed, over all trials
  bool passed() const;
};

// The state map F of one launch over every differentiable array: random v and w in [-1, 1]
// (seeded), tangent run with duals = v gives J v, forward + reverse run with gradients = w gives
// J^T w. Fails when nothing was touched (the kernels changed no tangent and no adjoint).
AdjointcheckResult adjointcheck(const ir::Kernel& forward, const AdjointcheckOptions& options);

}  // namespace pb::workbench
