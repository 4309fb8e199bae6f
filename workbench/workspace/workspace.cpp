#include "workbench/workspace/workspace.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "ir/assert.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "workbench/workspace/load.h"

namespace fs = std::filesystem;

namespace pb::workbench {

void WorkControl::report(std::string stage, std::string detail, size_t done, size_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  progress_.stage = std::move(stage);
  progress_.detail = std::move(detail);
  progress_.done = done;
  progress_.total = total;
}

WorkProgress WorkControl::progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return progress_;
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

void check(WorkControl* control) {
  if (control) control->check();
}
void report(WorkControl* control, std::string stage, std::string detail, size_t done, size_t total) {
  if (control) control->report(std::move(stage), std::move(detail), done, total);
}

bool is_json_text(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

// Flattens the numbers of a state_to_json "data" array (nested for multi-dimensional fields).
void flatten(const nlohmann::json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten(e, out);
  } else if (j.is_number()) {
    out.push_back(j.get<double>());
  } else if (j.is_boolean()) {
    out.push_back(j.get<bool>() ? 1.0 : 0.0);
  }
}

void compare_arrays(const std::string& name, const nlohmann::json& expected, const nlohmann::json* actual,
                    const Tolerance& tol, BisectRow& row) {
  std::vector<double> a, b;
  flatten(expected, a);
  if (actual) flatten(*actual, b);
  for (size_t i = 0; i < a.size(); ++i) {
    ++row.compared;
    bool missing = i >= b.size();
    double diff = missing ? INFINITY : std::fabs(a[i] - b[i]);
    bool same = !missing && ((std::isnan(a[i]) && std::isnan(b[i])) ||
                             diff <= tol.abs + tol.rel * std::max(std::fabs(a[i]), std::fabs(b[i])));
    if (same) continue;
    ++row.differing;
    row.max_abs_difference = std::max(row.max_abs_difference, diff);
    if (row.first_difference.empty())
      row.first_difference = missing ? fmt::format("{}[{}]: {} vs (missing)", name, i, a[i])
                                     : fmt::format("{}[{}]: {} vs {}", name, i, a[i], b[i]);
  }
}

}  // namespace

std::optional<size_t> first_differing_row(const std::vector<BisectRow>& rows) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].ran && rows[i].differs()) return i;
  return std::nullopt;
}

void compare_run_values(const nlohmann::json& baseline, const nlohmann::json& actual, const Tolerance& tol,
                        BisectRow& row) {
  for (const char* group : {"fields", "ndarrays"}) {
    if (!baseline.contains(group)) continue;
    for (const auto& [name, value] : baseline[group].items()) {
      if (!value.contains("data")) continue;
      const nlohmann::json* other = nullptr;
      if (actual.contains(group) && actual[group].contains(name) && actual[group][name].contains("data"))
        other = &actual[group][name]["data"];
      compare_arrays(name, value["data"], other, tol, row);
    }
  }
}

// --- inputs ---

void Workspace::open(const std::string& path, const std::string& dump) {
  std::string text = read_file(path);
  source_path_ = path;
  dump_ = dump;
  fixture_loss_.clear();
  std::string name = path;
  // A fixture: the kernel it names (or holds) becomes the source; its pipeline and inputs load too.
  if (is_json_text(text)) {
    std::optional<nlohmann::json> j;
    try {
      j = parse_json_text(text, path);
    } catch (const UserError& e) {
      source_text_ = text;
      source_name_ = path;
      source_error_ = e.diagnostic();
      kernel_.reset();
      drop_derived();
      return;
    }
    if (j->is_object() && !j->contains("format") && (j->contains("kernel_text") || j->contains("kernel"))) {
      fs::path dir = fs::path(path).parent_path();
      if (j->contains("kernel_text")) {
        text = (*j)["kernel_text"].get<std::string>();
        name = path + ":kernel_text";
      } else {
        fs::path kernel_path = dir / (*j)["kernel"].get<std::string>();
        text = read_file(kernel_path.string());
        name = kernel_path.string();
      }
      pipeline_text_ = j->value("pipeline", std::string());
      if (j->contains("gradcheck") && (*j)["gradcheck"].is_object())
        fixture_loss_ = (*j)["gradcheck"].value("loss", std::string());
      if (j->contains("inputs_file")) {
        std::string inputs_path = (dir / (*j)["inputs_file"].get<std::string>()).string();
        set_inputs(parse_json_text(read_file(inputs_path), inputs_path), inputs_path);
      } else {
        set_inputs(j->value("inputs", nlohmann::json::object()), path + ":inputs");
      }
      set_source_text(std::move(text), std::move(name));
      return;
    }
  } else {
    // kernel.chi next to kernel.inputs.json: the inputs the bundled dumps come with.
    fs::path inputs_path = fs::path(path).replace_extension(".inputs.json");
    if (fs::exists(inputs_path))
      set_inputs(parse_json_text(read_file(inputs_path.string()), inputs_path.string()), inputs_path.string());
  }
  set_source_text(std::move(text), std::move(name));
}

std::optional<Diagnostic> Workspace::set_source_text(std::string text, std::string name) {
  source_text_ = std::move(text);
  if (!name.empty()) source_name_ = std::move(name);
  if (source_name_.empty()) source_name_ = "<edited>";
  source_error_.reset();
  kernel_.reset();
  drop_derived();
  try {
    kernel_ = parse_kernel_source(source_text_, source_name_, dump_);
  } catch (const UserError& e) {
    source_error_ = e.diagnostic();
  }
  return source_error_;
}

void Workspace::set_pipeline(const std::string& text) {
  if (text == pipeline_text_) return;
  pipeline_text_ = text;
  drop_after_pipeline();
}

void Workspace::set_inputs(nlohmann::json inputs, std::string name) {
  inputs_ = std::move(inputs);
  inputs_name_ = std::move(name);
  drop_runs();
}

std::optional<Diagnostic> Workspace::set_inputs_text(const std::string& text, const std::string& name) {
  try {
    set_inputs(parse_json_text(text, name), name);
  } catch (const UserError& e) {
    return e.diagnostic();
  }
  return std::nullopt;
}

void Workspace::set_compile_settings(const CompileSettings& settings) {
  compile_settings_ = settings;
  lowerings_.reset();  // the kept compiles are keyed by their settings and stay
}

void Workspace::set_bisect_tolerance(const Tolerance& tol) {
  bisect_tolerance_ = tol;
  bisect_.reset();
}

void Workspace::drop_derived() {
  drop_after_pipeline();
  compiles_.clear();
  lowerings_.reset();
  drop_runs();
}

void Workspace::drop_after_pipeline() {
  replay_.reset();
  std::erase_if(compiles_, [](const auto& entry) { return entry.first.starts_with("after:"); });
  lowerings_.reset();
  runs_.erase(true);
  bisect_.reset();
}

void Workspace::drop_runs() {
  runs_.clear();
  backend_runs_.clear();
  gradcheck_.reset();
  gradcheck_key_.clear();
  bisect_.reset();
}

// --- computed ---

const ReplayRecords& Workspace::replay(WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::replay needs a kernel: check kernel() first");
  if (replay_) return *replay_;
  ReplayRecords out;
  try {
    out.pipeline = passes::parse_pipeline(pipeline_text_, "pipeline");
  } catch (const UserError& e) {
    out.error = e.diagnostic();
    out.result = kernel_->clone();
    return replay_.emplace(std::move(out));
  }
  // Pass by pass, so a cancel lands between passes and progress names the pass at work.
  std::unique_ptr<ir::Kernel> k = kernel_->clone();
  const size_t n = out.pipeline.entries.size();
  for (size_t i = 0; i < n; ++i) {
    check(control);
    const auto& entry = out.pipeline.entries[i];
    report(control, "replay", entry.to_string(), i, n);
    if (out.run.failed) {  // the passes after a failure are listed, not run
      passes::PassRecord skipped;
      skipped.index = i;
      skipped.pass = entry.info->name;
      skipped.spec = entry.to_string();
      skipped.statements_before = skipped.statements_after = k->count_statements();
      out.run.records.push_back(std::move(skipped));
      continue;
    }
    passes::Pipeline one;
    one.entries.push_back(entry);
    passes::PipelineRun step = passes::run_pipeline(*k, one);
    passes::PassRecord rec = std::move(step.records.front());
    rec.index = i;
    out.run.total_ms += rec.wall_ms;
    if (step.failed) {
      out.run.failed = true;
      out.run.failed_index = i;
      std::string rest;
      for (size_t j = i; j < n; ++j) rest += (j > i ? "," : "") + out.pipeline.entries[j].to_string();
      out.run.remaining_pipeline = rest;
    }
    out.run.records.push_back(std::move(rec));
  }
  report(control, "replay", "", n, n);
  out.result = std::shared_ptr<const ir::Kernel>(std::move(k));
  return replay_.emplace(std::move(out));
}

const ir::Kernel& Workspace::pipeline_result(WorkControl* control) {
  const ReplayRecords& r = replay(control);
  if (r.error || r.run.failed) return *kernel_;
  return *r.result;
}

std::string Workspace::compile_key() const {
  const CompileSettings& s = compile_settings_;
  return fmt::format("{}:{}:{}:{}:{}", s.after_pipeline ? "after" : "source", codegen::spirv::lowering_name(s.lowering),
                     s.max_id_bound, s.measure_passes, s.lowering.float64);
}

CompileRequest Workspace::compile_request(WorkControl* control) const {
  CompileRequest req;
  req.lowering = compile_settings_.lowering;
  req.optimizer.max_id_bound = compile_settings_.max_id_bound;
  req.optimizer.measure_passes = compile_settings_.measure_passes;
  req.cross_errors_fatal = false;
  if (control)
    req.progress = [control](const CompileProgress& p) {
      control->check();
      std::string detail = p.tasks ? fmt::format("task {}/{}", p.task, p.tasks) : "";
      if (p.passes) detail += fmt::format(", pass {}/{}", p.pass, p.passes);
      size_t done = p.lowerings ? p.lowering - 1 : p.task ? p.task - 1 : 0;
      size_t total = p.lowerings ? p.lowerings : p.tasks;
      control->report(fmt::format("compile: {}", p.stage), detail, done, total);
    };
  return req;
}

const KernelCompile& Workspace::compile(WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::compile needs a kernel: check kernel() first");
  std::string key = compile_key();
  if (auto it = compiles_.find(key); it != compiles_.end()) return it->second;
  const ir::Kernel& k = compile_settings_.after_pipeline ? pipeline_result(control) : *kernel_;
  KernelCompile result = compile_kernel(k, compile_request(control));
  return compiles_.emplace(key, std::move(result)).first->second;
}

const KernelCompile* Workspace::compile_if_ready() const {
  auto it = compiles_.find(compile_key());
  return it == compiles_.end() ? nullptr : &it->second;
}

const LoweringComparison& Workspace::lowerings(WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::lowerings needs a kernel: check kernel() first");
  if (lowerings_) return *lowerings_;
  const ir::Kernel& k = compile_settings_.after_pipeline ? pipeline_result(control) : *kernel_;
  CompileRequest req = compile_request(control);
  req.optimizer.measure_passes = false;  // the comparison needs the sizes, not the per-pass table
  return lowerings_.emplace(compare_lowerings(k, req));
}

RunRequest Workspace::run_request() const {
  RunRequest req;
  req.inputs = inputs_;
  req.inputs_name = inputs_name_;
  req.kernel_name = source_name_.empty() ? "FILE" : source_name_;
  return req;
}

const RunRecord& Workspace::run(bool after_pipeline, WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::run needs a kernel: check kernel() first");
  if (auto it = runs_.find(after_pipeline); it != runs_.end()) return it->second;
  const ir::Kernel& k = after_pipeline ? pipeline_result(control) : *kernel_;
  check(control);
  report(control, "run", "interp", 0, 1);
  RunRecord rec;
  rec.backend = "interp";
  auto start = Clock::now();
  try {
    rec.output = run_primal(k, run_request());
  } catch (const RunFailure& e) {
    rec.error = e.diagnostic();
    rec.run_failure = true;
  } catch (const UserError& e) {
    rec.error = e.diagnostic();
  }
  rec.ms = ms_since(start);
  check(control);
  return runs_.emplace(after_pipeline, std::move(rec)).first->second;
}

const RunRecord* Workspace::run_if_ready(bool after_pipeline) const {
  auto it = runs_.find(after_pipeline);
  return it == runs_.end() ? nullptr : &it->second;
}

const GradcheckRecord& Workspace::gradcheck(const std::string& loss, const std::string& reverse_pipeline,
                                            WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::gradcheck needs a kernel: check kernel() first");
  std::string key = loss + "\n" + reverse_pipeline;
  if (gradcheck_ && gradcheck_key_ == key) return *gradcheck_;
  check(control);
  report(control, "gradcheck", loss, 0, 1);
  GradcheckRecord rec;
  GradcheckOptions options;
  options.loss = loss;
  options.inputs = inputs_;
  options.inputs_name = inputs_name_;
  options.kernel_name = source_name_.empty() ? "FILE" : source_name_;
  options.pipeline = reverse_pipeline;
  auto start = Clock::now();
  try {
    rec.result = workbench::gradcheck(*kernel_, options);
  } catch (const UserError& e) {
    rec.error = e.diagnostic();
  }
  rec.ms = ms_since(start);
  check(control);
  gradcheck_key_ = key;
  return gradcheck_.emplace(std::move(rec));
}

const GradcheckRecord* Workspace::gradcheck_if_ready(const std::string& loss,
                                                     const std::string& reverse_pipeline) const {
  return gradcheck_ && gradcheck_key_ == loss + "\n" + reverse_pipeline ? &*gradcheck_ : nullptr;
}

namespace {
std::string backends_key(const std::vector<Backend>& backends, const std::string& loss) {
  std::string key = loss + "\n";
  for (Backend b : backends) key += std::string(backend_name(b)) + ",";
  return key;
}
}  // namespace

const BackendsRecord& Workspace::compare_backends(const std::vector<Backend>& backends, const std::string& loss,
                                                  WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::compare_backends needs a kernel: check kernel() first");
  const std::string key = backends_key(backends, loss);
  if (auto it = backend_runs_.find(key); it != backend_runs_.end()) return it->second;
  check(control);
  report(control, "backends", loss.empty() ? "forward" : "forward + reverse", 0, 1);
  BackendsRecord rec;
  RunRequest req = run_request();
  if (!loss.empty()) {
    req.seed_grads = {{loss, 1.0}};
    req.mode = runtime::Mode::reverse;
  }
  auto start = Clock::now();
  try {
    Comparison c = workbench::compare_backends(prepare_request(*kernel_, req), backends, {}, {});
    rec.rows = std::move(c.rows);
    rec.launches = std::move(c.launches);
    rec.values_compared = c.values_compared;
  } catch (const UserError& e) {
    rec.error = e.diagnostic();
  }
  rec.ms = ms_since(start);
  check(control);
  return backend_runs_.emplace(key, std::move(rec)).first->second;
}

const BackendsRecord* Workspace::backends_if_ready(const std::vector<Backend>& backends,
                                                   const std::string& loss) const {
  auto it = backend_runs_.find(backends_key(backends, loss));
  return it == backend_runs_.end() ? nullptr : &it->second;
}

const BisectResult& Workspace::bisect(WorkControl* control) {
  PB_ASSERT(kernel_, "Workspace::bisect needs a kernel: check kernel() first");
  if (bisect_) return *bisect_;
  const ReplayRecords& replayed = replay(control);
  BisectResult out;
  out.tolerance = bisect_tolerance_;
  RunRequest req = run_request();
  // Sized stacks may legitimately differ in capacity between stages; compare values, not limits.
  req.options.unsized_stacks_unlimited = true;
  std::optional<RunOutput> baseline;
  try {
    baseline = run_primal(*kernel_, req);
  } catch (const UserError& e) {
    out.error = e.diagnostic();
    out.error->message = "the kernel before the pipeline does not run on these inputs: " + out.error->message;
    return bisect_.emplace(std::move(out));
  }
  const auto& records = replayed.run.records;
  for (size_t i = 0; i < records.size(); ++i) {
    check(control);
    report(control, "bisect", records[i].spec, i, records.size());
    BisectRow row;
    row.index = i;
    row.pass = records[i].spec;
    row.ran = records[i].ran && records[i].failure.empty() && records[i].after;
    if (row.ran) {
      try {
        RunOutput after = run_primal(*records[i].after, req);
        compare_run_values(baseline->values, after.values, out.tolerance, row);
      } catch (const UserError& e) {
        row.error = e.diagnostic().message;
      }
    }
    out.rows.push_back(std::move(row));
  }
  report(control, "bisect", "", records.size(), records.size());
  out.first_differing = first_differing_row(out.rows);
  bool compared = false;
  for (const auto& row : out.rows) compared = compared || row.compared > 0;
  if (!out.rows.empty() && !compared && !out.first_differing)
    out.error = Diagnostic::plain("no pass's results were compared (no field or ndarray holds data)",
                                  "give inputs that fill the fields the kernel writes");
  if (out.rows.empty())
    out.error = Diagnostic::plain("the pipeline is empty: there is no pass to blame", "set a pipeline");
  return bisect_.emplace(std::move(out));
}

std::vector<std::string> Workspace::loss_candidates() const {
  std::vector<std::string> out;
  if (!kernel_) return out;
  for (const auto& f : kernel_->fields())
    if (f.grad && !f.primal && ir::is_float(f.dtype)) out.push_back(f.name);
  return out;
}

std::string Workspace::suggested_loss() const {
  auto candidates = loss_candidates();
  if (candidates.empty()) return "";
  if (std::find(candidates.begin(), candidates.end(), fixture_loss_) != candidates.end()) return fixture_loss_;
  return candidates.back();
}

}  // namespace pb::workbench
