#include "workbench/workspace/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "codegen/spirv/compile.h"
#include "codegen/spirv/validate.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/visitor.h"
#include "workbench/workspace/replay.h"

namespace pb::workbench {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool kernel_uses(const ir::Kernel& k, bool (*pred)(ir::ScalarKind)) {
  for (const auto& f : k.fields())
    if (pred(f.dtype)) return true;
  bool found = false;
  ir::walk(k.root(), [&](ir::Stmt& s) { found = found || pred(s.type.scalar); });
  return found;
}

bool is_f64(ir::ScalarKind s) { return s == ir::ScalarKind::f64; }
bool is_64_bit_integer(ir::ScalarKind s) { return s == ir::ScalarKind::i64 || s == ir::ScalarKind::u64; }

bool has_f64_atomic(const ir::Kernel& k) {
  bool found = false;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    found = found || (ir::isa<ir::AtomicOpStmt>(&s) && s.type.scalar == ir::ScalarKind::f64);
  });
  return found;
}

bool resolve(Capability c, bool requested, bool needed) {
  switch (c) {
    case Capability::on:
      return true;
    case Capability::off:
      return false;
    case Capability::automatic:
      return requested || needed;
  }
  return requested;
}

// Pushes per stack alloc statement id.
std::map<int, uint64_t> pushes_by_stack(const ir::Kernel& k) {
  std::map<int, uint64_t> out;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (auto* push = ir::dyn_cast<ir::AdStackPushStmt>(&s); push && push->stack()) ++out[push->stack()->id];
  });
  return out;
}

void add_task_metrics(CompileMetrics& total, const CompileMetrics& t) {
  total.unoptimized_id_bound = std::max(total.unoptimized_id_bound, t.unoptimized_id_bound);
  total.peak_id_bound = std::max(total.peak_id_bound, t.peak_id_bound);
  total.final_id_bound = std::max(total.final_id_bound, t.final_id_bound);
  total.live_ids += t.live_ids;
  total.spirv_bytes += t.spirv_bytes;
  total.msl_lines += t.msl_lines;
  total.msl_bytes += t.msl_bytes;
  total.msl_local_declarations += t.msl_local_declarations;
  total.msl_alias_copies += t.msl_alias_copies;
  total.glsl_lines += t.glsl_lines;
  total.glsl_bytes += t.glsl_bytes;
  total.pushes += t.pushes;
}

CompileProgress pipeline_progress() {
  CompileProgress p;
  p.stage = "pipeline";
  return p;
}

void report(const CompileRequest& request, CompileProgress progress) {
  if (request.progress) request.progress(progress);
}

// Optimizes and cross-compiles one task; returns false (with `out.error` set) on failure.
bool finish_task(TaskCompile& task, const CompileRequest& request, const std::string& kernel_name, KernelCompile& out,
                 CompileProgress at) {
  CompileMetrics& m = task.metrics;
  m.unoptimized_id_bound = task.unoptimized.size() > 3 ? task.unoptimized[3] : 0;
  if (request.optimize) {
    auto start = Clock::now();
    try {
      codegen::spirv::OptimizerOptions options = request.optimizer;
      options.counts_in_shared_array = request.lowering.count == codegen::spirv::StackCount::shared_array;
      at.stage = "optimize";
      report(request, at);
      if (request.progress && options.measure_passes)
        options.on_pass = [&](size_t index, size_t count) {
          at.pass = index;
          at.passes = count;
          report(request, at);
        };
      codegen::spirv::OptimizeResult r =
          codegen::spirv::optimize_spirv(task.unoptimized, options, kernel_name, task.name);
      task.spirv = std::move(r.words);
      task.report = std::move(r.report);
    } catch (const codegen::spirv::SpirvOptimizerError& e) {
      task.report = e.report();
      task.optimize_ms = ms_since(start);
      m.peak_id_bound = request.optimizer.measure_passes ? e.report().peak_id_bound : 0;
      out.error = CompileError{"optimize", task.name, e.what()};
      return false;
    } catch (const UserError& e) {
      out.error = CompileError{"optimize", task.name, e.what()};
      return false;
    } catch (const InternalError& e) {
      out.error = CompileError{"optimize", task.name, e.what(), true};
      return false;
    }
    task.optimize_ms = ms_since(start);
    m.peak_id_bound = request.optimizer.measure_passes ? task.report->peak_id_bound : 0;
    m.live_ids = task.report->live_ids;
    task.valid = task.report->validated && task.report->valid;
  } else {
    task.spirv = task.unoptimized;
    m.peak_id_bound = m.unoptimized_id_bound;
    // compile() validated every module already (an invalid one is an InternalError there).
    task.valid = request.lowering.validate || codegen::spirv::validate(task.spirv).ok;
  }
  m.final_id_bound = task.spirv.size() > 3 ? task.spirv[3] : 0;
  m.spirv_bytes = task.spirv.size() * 4;
  try {
    at.pass = at.passes = 0;
    if (request.msl) {
      at.stage = "msl";
      report(request, at);
      auto start = Clock::now();
      task.msl = codegen::msl::spirv_to_msl(task.spirv, {}, kernel_name, task.name);
      task.msl_ms = ms_since(start);
      m.msl_lines = task.msl.metrics.lines;
      m.msl_bytes = task.msl.metrics.bytes;
      m.msl_local_declarations = task.msl.metrics.local_declarations;
      m.msl_alias_copies = task.msl.metrics.alias_copies;
    }
    if (request.glsl) {
      at.stage = "glsl";
      report(request, at);
      auto start = Clock::now();
      task.glsl = codegen::msl::spirv_to_glsl(task.spirv, {}, kernel_name, task.name);
      task.glsl_ms = ms_since(start);
      m.glsl_lines = task.glsl.metrics.lines;
      m.glsl_bytes = task.glsl.metrics.bytes;
    }
  } catch (const UserError& e) {
    if (!request.cross_errors_fatal) {
      if (!out.cross_error) out.cross_error = CompileError{"cross", task.name, e.what()};
      return true;
    }
    out.error = CompileError{"cross", task.name, e.what()};
    return false;
  }
  return true;
}

}  // namespace

std::optional<double> CompileMetrics::msl_lines_per_push() const {
  if (pushes == 0) return std::nullopt;
  return static_cast<double>(msl_lines) / static_cast<double>(pushes);
}

uint64_t count_pushes(const ir::Kernel& kernel) {
  uint64_t n = 0;
  ir::walk(kernel.root(), [&](ir::Stmt& s) { n += ir::isa<ir::AdStackPushStmt>(&s); });
  return n;
}

namespace {

std::string kernel_label(const ir::Kernel& k) { return k.name.empty() ? "kernel" : k.name; }

// Runs request.pipeline on a copy of `kernel`; null (and `error` set) when it fails.
std::unique_ptr<ir::Kernel> run_preparation(const ir::Kernel& kernel, const std::string& pipeline,
                                            std::optional<CompileError>& error) {
  passes::RunOptions run_options;
  run_options.capture = passes::Capture::none;
  try {
    ReplayResult rr = replay(kernel.clone(), pipeline, run_options);
    if (!rr.run.failed) return std::move(rr.kernel);
    const auto& rec = rr.run.records[rr.run.failed_index];
    error = CompileError{"pipeline", "", fmt::format("pass '{}' failed: {}", rec.pass, rec.failure)};
  } catch (const UserError& e) {
    error = CompileError{"pipeline", "", e.what()};
  }
  return nullptr;
}

// compile_kernel after the pipeline; `at` carries the lowering's place in a comparison.
KernelCompile compile_prepared(const ir::Kernel& k, const CompileRequest& request, CompileProgress at = {}) {
  KernelCompile out;
  out.kernel = kernel_label(k);
  codegen::spirv::LoweringOptions lowering = request.lowering;
  lowering.float64 = resolve(request.float64, lowering.float64, kernel_uses(k, is_f64));
  lowering.int64 = resolve(request.int64, lowering.int64, kernel_uses(k, is_64_bit_integer) || has_f64_atomic(k));
  out.lowering_options = lowering;
  out.lowering = codegen::spirv::lowering_name(lowering);

  at.stage = "emit";
  report(request, at);
  auto start = Clock::now();
  try {
    out.compiled = codegen::spirv::compile(k, lowering);
  } catch (const UserError& e) {
    out.error = CompileError{"codegen", "", e.what()};
    return out;
  } catch (const InternalError& e) {
    out.error = CompileError{"codegen", "",
                             fmt::format("internal error (a passbench bug; please report it): {}", e.what()), true};
    return out;
  }
  out.emit_ms = ms_since(start);

  std::map<int, uint64_t> pushes = pushes_by_stack(k);
  out.valid = true;
  at.tasks = out.compiled->tasks.size();
  for (auto& info : out.compiled->tasks) {
    ++at.task;
    TaskCompile& task = out.tasks.emplace_back();
    task.name = info.name;
    task.unoptimized = std::move(info.spirv);
    info.spirv.clear();
    for (const auto& stack : info.stacks)
      if (auto it = pushes.find(stack.stmt_id); it != pushes.end()) task.metrics.pushes += it->second;
    bool done = finish_task(task, request, out.kernel, out, at);
    out.optimize_ms += task.optimize_ms;
    out.msl_ms += task.msl_ms;
    out.glsl_ms += task.glsl_ms;
    add_task_metrics(out.metrics, task.metrics);
    out.valid = out.valid && task.valid;
    if (!done) {
      out.valid = false;
      return out;
    }
  }
  return out;
}

}  // namespace

KernelCompile compile_kernel(const ir::Kernel& kernel, const CompileRequest& request) {
  if (request.pipeline.empty()) return compile_prepared(kernel, request);
  report(request, pipeline_progress());
  auto start = Clock::now();
  std::optional<CompileError> error;
  auto prepared = run_preparation(kernel, request.pipeline, error);
  double pipeline_ms = ms_since(start);
  if (!prepared) {
    KernelCompile out;
    out.kernel = kernel_label(kernel);
    out.error = std::move(error);
    out.pipeline_ms = pipeline_ms;
    return out;
  }
  KernelCompile out = compile_prepared(*prepared, request);
  out.pipeline_ms = pipeline_ms;
  return out;
}

LoweringComparison compare_lowerings(const ir::Kernel& kernel, const CompileRequest& request) {
  LoweringComparison out;
  out.kernel = kernel_label(kernel);
  std::unique_ptr<ir::Kernel> prepared;
  if (!request.pipeline.empty()) {
    report(request, pipeline_progress());
    prepared = run_preparation(kernel, request.pipeline, out.pipeline_error);
    if (!prepared) return out;
  }
  const ir::Kernel& k = prepared ? *prepared : kernel;
  out.pushes = count_pushes(k);
  const auto lowerings = codegen::spirv::all_stack_lowerings(request.lowering);
  for (size_t i = 0; i < lowerings.size(); ++i) {
    CompileRequest r = request;
    r.lowering = lowerings[i];
    r.cross_errors_fatal = false;
    CompileProgress at;
    at.lowering = i + 1;
    at.lowerings = lowerings.size();
    out.rows.push_back(compile_prepared(k, r, at));
  }
  return out;
}

std::vector<std::pair<std::string, double>> metric_values(const CompileMetrics& m) {
  auto d = [](auto v) { return static_cast<double>(v); };
  std::vector<std::pair<std::string, double>> out = {
      {"spirv.unoptimized_id_bound", d(m.unoptimized_id_bound)},
      {"spirv.final_id_bound", d(m.final_id_bound)},
      {"spirv.live_ids", d(m.live_ids)},
      {"spirv.bytes", d(m.spirv_bytes)},
      {"msl.lines", d(m.msl_lines)},
      {"msl.bytes", d(m.msl_bytes)},
      {"msl.local_declarations", d(m.msl_local_declarations)},
      {"msl.alias_copies", d(m.msl_alias_copies)},
      {"glsl.lines", d(m.glsl_lines)},
      {"glsl.bytes", d(m.glsl_bytes)},
      {"ir.pushes", d(m.pushes)},
  };
  if (auto lpp = m.msl_lines_per_push()) out.emplace_back("msl.lines_per_push", *lpp);
  if (m.peak_id_bound) out.emplace_back("spirv.peak_id_bound", d(m.peak_id_bound));
  return out;
}

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    CompileMetrics m;
    m.pushes = 1;
    m.peak_id_bound = 1;
    std::vector<std::string> v;
    for (const auto& [name, value] : metric_values(m)) v.push_back(name);
    return v;
  }();
  return names;
}

}  // namespace pb::workbench
