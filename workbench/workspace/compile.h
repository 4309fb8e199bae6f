// Compiling a kernel to SPIR-V, MSL and GLSL and measuring what each adstack lowering costs: the
// one path the CLI (`compile`, `compare-lowerings`), fixtures (metric bounds) and the benchmark
// share. Runs an optional pass pipeline, emits one module per task, optimizes each (recording the
// optimizer's per-pass report), cross-compiles the modules used and measures everything.
// Failures come back as a value (`KernelCompile::error`), never as an exception, so a table of
// lowerings can show one failing row and go on; metric definitions are in docs/codegen-spirv.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/msl/cross.h"
#include "codegen/spirv/compiled_kernel.h"
#include "codegen/spirv/optimizer.h"
#include "ir/kernel.h"

namespace pb::workbench {

// Where a compile is, for progress displays: `stage` is "pipeline", "emit", "optimize", "msl" or
// "glsl"; counts are 1-based, 0 when not applicable (pass: only when measuring pass by pass).
struct CompileProgress {
  std::string_view stage;
  size_t task = 0, tasks = 0;
  size_t pass = 0, passes = 0;
  size_t lowering = 0, lowerings = 0;  // compare_lowerings
};

// A capability (Float64, Int64) on or off, or on exactly when the kernel uses the type.
enum class Capability : uint8_t { automatic, on, off };

struct CompileRequest {
  std::string pipeline;  // run on a copy of the kernel first ("" = compile the kernel as given)
  codegen::spirv::LoweringOptions lowering;
  Capability float64 = Capability::automatic;  // overrides lowering.float64 unless `off`/`on` agree
  Capability int64 = Capability::automatic;    // likewise; f64 atomics need it too
  codegen::spirv::OptimizerOptions optimizer;
  bool optimize = true;
  bool msl = true;   // cross-compile the modules used to MSL
  bool glsl = true;  // and to GLSL
  // false: a module SPIRV-Cross cannot translate (f64 buffers have no MSL) is noted in
  // KernelCompile::cross_error and the SPIR-V results stand; true: the compile fails.
  bool cross_errors_fatal = true;
  // Called as the compile moves on (never concurrently); empty: no calls.
  std::function<void(const CompileProgress&)> progress;
};

// Sizes of the code of one task or of the whole kernel. Kernel-wide: ID bounds are the maximum
// over the tasks' modules (each module has its own bound), everything else the sum.
struct CompileMetrics {
  uint32_t unoptimized_id_bound = 0;  // of the emitter's module
  // The most IDs any optimizer pass needed (OptimizerReport::peak_id_bound), measured only with
  // optimizer.measure_passes; 0 otherwise (and with optimize off).
  uint32_t peak_id_bound = 0;
  uint32_t final_id_bound = 0;  // of the module used
  uint64_t live_ids = 0;        // distinct result ids of the module used
  uint64_t spirv_bytes = 0;     // of the module used
  uint64_t msl_lines = 0, msl_bytes = 0, msl_local_declarations = 0, msl_alias_copies = 0;
  uint64_t glsl_lines = 0, glsl_bytes = 0;
  uint64_t pushes = 0;  // stack_push statements of the IR compiled (in this task)
  // msl_lines / pushes (nullopt without pushes): the average, fixed code included. The marginal
  // cost of one more push is the slope the benchmark measures over kernels differing in pushes.
  std::optional<double> msl_lines_per_push() const;
};

struct TaskCompile {
  std::string name;
  std::vector<uint32_t> unoptimized;  // the emitter's module
  std::vector<uint32_t> spirv;        // the module used: optimized, or the input on fallback/no optimize
  std::optional<codegen::spirv::OptimizerReport> report;  // when the optimizer ran (also when it failed)
  codegen::msl::CrossCompiled msl, glsl;                  // empty text when not requested
  bool valid = false;                                     // spirv-val accepted the module used
  CompileMetrics metrics;
  double optimize_ms = 0, msl_ms = 0, glsl_ms = 0;
};

struct CompileError {
  std::string stage;      // "pipeline", "codegen", "optimize" or "cross"
  std::string task;       // the task concerned (optimize, cross); "" otherwise
  std::string message;    // the diagnostic with its remedy, as the CLI prints it
  bool internal = false;  // a passbench bug (invalid emitted SPIR-V), not a property of the input
};

struct KernelCompile {
  std::string kernel;                                      // the kernel's name
  std::string lowering;                                    // codegen::spirv::lowering_name of the options used
  codegen::spirv::LoweringOptions lowering_options;        // with capabilities resolved
  std::optional<codegen::spirv::CompiledKernel> compiled;  // metadata; tasks' words moved into `tasks`
  std::vector<TaskCompile> tasks;                          // every task that was emitted, up to the failing one
  std::optional<CompileError> error;
  bool ok() const { return !error; }
  std::optional<CompileError> cross_error;  // the first translation failure when not fatal
  CompileMetrics metrics;                   // kernel-wide (see CompileMetrics), over `tasks`
  bool valid = false;                       // every module used passed spirv-val
  double pipeline_ms = 0, emit_ms = 0, optimize_ms = 0, msl_ms = 0, glsl_ms = 0;
};

KernelCompile compile_kernel(const ir::Kernel& kernel, const CompileRequest& request);

// The kernel compiled under every adstack lowering (codegen::spirv::all_stack_lowerings of
// request.lowering, the defaults first among equals: rows in all_stack_lowerings order). The
// pipeline runs once; a failing lowering is a row with an error, the others still compile.
struct LoweringComparison {
  std::string kernel;
  std::optional<CompileError> pipeline_error;  // then `rows` is empty
  uint64_t pushes = 0;                         // stack_push statements of the compiled kernel
  std::vector<KernelCompile> rows;
};
LoweringComparison compare_lowerings(const ir::Kernel& kernel, const CompileRequest& request);

// The kernel-wide metrics by name ("spirv.final_id_bound", "msl.lines", ...), in a fixed order;
// the names fixtures bound and `compare-lowerings --json` prints. lines_per_push is absent
// without pushes, spirv.peak_id_bound when it was not measured.
std::vector<std::pair<std::string, double>> metric_values(const CompileMetrics& m);
// Every name metric_values can produce, for error messages.
const std::vector<std::string>& metric_names();

// The adstack push statements of `kernel`.
uint64_t count_pushes(const ir::Kernel& kernel);

}  // namespace pb::workbench
