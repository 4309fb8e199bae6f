// The workspace both faces read (docs/architecture in /work/shared is mirrored in docs/workbench.md):
// a kernel source, the inputs, a pipeline and compile settings, and everything computed from
// them (per-pass records, compiles per lowering, runs per backend, gradient checks, the
// which-pass-changed-the-answer bisection) as plain data. Each result is computed once, on
// request, and kept until an input it depends on changes. Long work takes a WorkControl: it
// reports progress and may be cancelled from another thread; a cancelled computation leaves no
// result. Errors come back as values (a Diagnostic in the result), never as exceptions, except
// for setters given bad input (UserError) and Cancelled.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "passes/pass_manager.h"
#include "workbench/workspace/compare.h"
#include "workbench/workspace/compile.h"
#include "workbench/workspace/fixture_compare.h"
#include "workbench/workspace/gradient.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

// Thrown out of a computation whose WorkControl was cancelled.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

struct WorkProgress {
  std::string stage;   // "replay", "compile", "run", ...
  std::string detail;  // the pass or task at work
  size_t done = 0, total = 0;
  double fraction() const { return total ? static_cast<double>(done) / static_cast<double>(total) : 0.0; }
};

// Progress and cancellation of one computation. cancel() and progress() may be called from any
// thread while the computation runs on another.
class WorkControl {
 public:
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  // Throws Cancelled when cancel() was called.
  void check() const {
    if (cancelled_) throw Cancelled();
  }
  void report(std::string stage, std::string detail, size_t done, size_t total);
  WorkProgress progress() const;

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;
  WorkProgress progress_;
};

// What replaying the pipeline on the kernel gave: one record per pass (IR before/after, time,
// statistics, verifier verdict) and the kernel at the end.
struct ReplayRecords {
  passes::Pipeline pipeline;
  passes::PipelineRun run;
  std::shared_ptr<const ir::Kernel> result;  // after the last pass that ran
  std::optional<Diagnostic> error;           // the pipeline text did not parse
};

struct CompileSettings {
  codegen::spirv::LoweringOptions lowering;
  uint32_t max_id_bound = codegen::spirv::kDefaultMaxIdBound;
  // One optimizer row per pass with each pass's ID need (the SPIR-V panel's per-pass chart), several
  // times slower; off: one optimizer for all passes (the normal path), a row for the pipeline.
  bool measure_passes = false;
  bool after_pipeline = true;  // compile the kernel after the pipeline, else the source kernel
};

// One run of the kernel on one backend.
struct RunRecord {
  std::string backend;              // "interp"
  std::optional<RunOutput> output;  // when it ran
  std::optional<Diagnostic> error;  // bad inputs or a run-time error
  bool run_failure = false;         // the error is the kernel's own (stack overflow, assert...)
  double ms = 0;
};

// The kernel run from the same inputs on the interpreter and on other backends, forward or (with
// a loss) forward + reverse seeded with 1 on the loss's gradient; every array compared with the
// interpreter's (compare.h, compare_backends).
struct BackendsRecord {
  std::vector<BackendDiff> rows;      // one per array and backend, or a failed row per backend
  std::vector<TimedLaunch> launches;  // every launch, the interpreter's first
  std::optional<Diagnostic> error;    // the interpreter's run or the reverse pipeline failed
  size_t values_compared = 0;
  double ms = 0;
  bool ok() const {
    return !error && values_compared > 0 &&
           std::all_of(rows.begin(), rows.end(), [](const BackendDiff& d) { return d.ok; });
  }
};

struct GradcheckRecord {
  std::optional<GradcheckResult> result;
  std::optional<Diagnostic> error;
  double ms = 0;
};

// One row of the bisection: the kernel after pass `index` run on the inputs and compared with
// the kernel before the pipeline.
struct BisectRow {
  size_t index = 0;
  std::string pass;
  bool ran = false;      // the pass ran (a skipped or failed pass has no kernel to run)
  std::string error;     // the run failed (a run-time error the input kernel did not have)
  size_t compared = 0;   // elements compared
  size_t differing = 0;  // elements beyond tolerance
  double max_abs_difference = 0;
  std::string first_difference;  // "x[3]: 1.5 vs 1.25"
  bool differs() const { return !error.empty() || differing > 0; }
};

struct BisectResult {
  std::vector<BisectRow> rows;
  std::optional<size_t> first_differing;  // index into rows
  std::optional<Diagnostic> error;        // the input kernel could not run, or nothing compared
  Tolerance tolerance;
};

// The first pass whose results differ from the input kernel's, computed from rows; nullopt when
// none does. Pure, for tests and for the CLI.
std::optional<size_t> first_differing_row(const std::vector<BisectRow>& rows);

// Compares the float/int "data" arrays of every field and ndarray in `baseline` (state_to_json
// form) with `actual`, element by element, filling row.compared/differing/max/first.
void compare_run_values(const nlohmann::json& baseline, const nlohmann::json& actual, const Tolerance& tol,
                        BisectRow& row);

class Workspace {
 public:
  // --- inputs (each invalidates what depends on it) ---

  // Opens a kernel (text dump, print_ir log, JSON) or a fixture, which may also set the pipeline
  // and inputs. Throws UserError when the file cannot be read; a parse error is kept as
  // source_error() with the text, so the Source panel can show it at its line.
  void open(const std::string& path, const std::string& dump = {});
  // Replaces the source text (an edit) and re-parses it. Returns the parse error, if any.
  std::optional<Diagnostic> set_source_text(std::string text, std::string name = {});
  void set_pipeline(const std::string& text);  // parsed lazily: a bad pipeline is ReplayRecords::error
  void set_inputs(nlohmann::json inputs, std::string name = "inputs");
  // Parses JSON text as the inputs; returns the located error (the inputs are left unchanged).
  std::optional<Diagnostic> set_inputs_text(const std::string& text, const std::string& name = "inputs");
  void set_compile_settings(const CompileSettings& settings);
  void set_bisect_tolerance(const Tolerance& tol);

  const std::string& source_path() const { return source_path_; }
  const std::string& source_name() const { return source_name_; }
  const std::string& source_text() const { return source_text_; }
  const std::optional<Diagnostic>& source_error() const { return source_error_; }
  const ir::Kernel* kernel() const { return kernel_.get(); }  // null without a parsed kernel
  const std::string& pipeline_text() const { return pipeline_text_; }
  const nlohmann::json& inputs() const { return inputs_; }
  const std::string& inputs_name() const { return inputs_name_; }
  const CompileSettings& compile_settings() const { return compile_settings_; }

  // --- computed on request; each call after the first returns the kept result ---
  // Every function needs a kernel (PB_ASSERT otherwise: check kernel() first).

  const ReplayRecords& replay(WorkControl* control = nullptr);
  // The kernel the compile and the "after pipeline" run use: the pipeline's result when it ran
  // without failing, else the source kernel.
  const ir::Kernel& pipeline_result(WorkControl* control = nullptr);
  const KernelCompile& compile(WorkControl* control = nullptr);
  const LoweringComparison& lowerings(WorkControl* control = nullptr);
  // A forward run of the source kernel (after_pipeline false) or of the pipeline's result.
  const RunRecord& run(bool after_pipeline, WorkControl* control = nullptr);
  // Forward + reverse (`reverse_pipeline`) against central finite differences, loss = the sum
  // of `loss`'s elements.
  const GradcheckRecord& gradcheck(const std::string& loss,
                                   const std::string& reverse_pipeline = kDefaultReversePipeline,
                                   WorkControl* control = nullptr);
  // The source kernel on the interpreter and on `backends` (Vulkan: the first device), compared;
  // forward, or with `loss` forward + reverse (kDefaultReversePipeline) seeded on its gradient.
  const BackendsRecord& compare_backends(const std::vector<Backend>& backends, const std::string& loss,
                                         WorkControl* control = nullptr);
  // Runs the kernel before the pipeline and after every pass on the inputs; marks the first pass
  // whose results differ beyond the tolerance.
  const BisectResult& bisect(WorkControl* control = nullptr);

  // The kept results, without computing (null when not computed yet): what the GUI draws.
  const ReplayRecords* replay_if_ready() const { return replay_ ? &*replay_ : nullptr; }
  const KernelCompile* compile_if_ready() const;
  const LoweringComparison* lowerings_if_ready() const { return lowerings_ ? &*lowerings_ : nullptr; }
  const RunRecord* run_if_ready(bool after_pipeline) const;
  const GradcheckRecord* gradcheck_if_ready(const std::string& loss,
                                            const std::string& reverse_pipeline = kDefaultReversePipeline) const;
  const BisectResult* bisect_if_ready() const { return bisect_ ? &*bisect_ : nullptr; }
  const BackendsRecord* backends_if_ready(const std::vector<Backend>& backends, const std::string& loss) const;

  // Float fields with a gradient field (the losses a gradient check can take).
  std::vector<std::string> loss_candidates() const;
  // The loss to offer first: the opened fixture's gradcheck loss, else the last candidate (kernels
  // declare their outputs after their inputs); "" without candidates.
  std::string suggested_loss() const;

 private:
  void drop_derived();         // kernel changed
  void drop_after_pipeline();  // pipeline changed
  void drop_compiles();        // compile settings changed
  void drop_runs();            // inputs changed
  CompileRequest compile_request(WorkControl* control) const;
  RunRequest run_request() const;

  std::string source_path_, source_name_, source_text_, dump_;
  std::string fixture_loss_;
  std::optional<Diagnostic> source_error_;
  std::unique_ptr<ir::Kernel> kernel_;
  std::string pipeline_text_;
  nlohmann::json inputs_ = nlohmann::json::object();
  std::string inputs_name_ = "inputs";
  CompileSettings compile_settings_;
  Tolerance bisect_tolerance_{1e-5, 1e-8};

  std::optional<ReplayRecords> replay_;
  std::map<std::string, KernelCompile> compiles_;  // by compile_key()
  std::optional<LoweringComparison> lowerings_;
  std::map<bool, RunRecord> runs_;  // by after_pipeline
  std::optional<GradcheckRecord> gradcheck_;
  std::string gradcheck_key_;
  std::optional<BisectResult> bisect_;
  std::map<std::string, BackendsRecord> backend_runs_;  // by the backends and the loss
  std::string compile_key() const;
};

}  // namespace pb::workbench
