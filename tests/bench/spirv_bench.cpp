// Benchmark of SPIR-V codegen for reverse kernels (issue #5). Generates articulated-body forward
// kernels (ad_kernel_gen.h, one body: a single task whose carried values grow with the size),
// makes the reverse kernel with `reverse_ad`, and compiles it under each adstack lowering through
// the workspace (workbench/workspace/compile.h): emit, spirv-opt, MSL. Records the
// unoptimized, peak and final ID bounds, live IDs, MSL lines and bytes, MSL lines per push and the
// time of each stage. Then the slope of MSL lines against the push count over kernels that differ
// only in their pushes (one stack pushed P times; and, for comparison, P stacks pushed once).
//   spirv_bench [--sizes 1000,10000] [--lowerings all|defaults|L1;L2] [--slope 8,16,32,64]
//               [--depth D] [--chain L] [--no-intermediate-dce] [--measure-passes] [--write-kernel PREFIX]
//               [--vs-stock R] [--passbench PATH] [--emit-only R] [--validate-max N] [--out FILE]
// --measure-passes runs the optimizer pass by pass and records the true peak (the most IDs a pass
// needed); without it the optimizer runs as one spvtools::Optimizer and peak_id_bound is 0.
// --write-kernel writes each forward kernel to PREFIX.SIZE.chi (for `passbench compile`).
// --vs-stock R: per size, side by side on the same default-lowering module, R times each (median
// and range): passbench's optimize step (in process) against `spirv-opt -O --compact-ids` (a
// child), CPU time and peak RSS, whether the outputs are byte-identical, and the whole
// `passbench compile --passes=reverse_ad --target=msl` (a child; --passbench PATH, default
// ../../workbench/passbench from this binary). Needs spirv-opt on PATH.
// --emit-only R: instead of compiling, per size and lowering, emission alone (no validation, no
// optimization), R times (median and range of wall and CPU time, and per reverse statement); then,
// at sizes up to --validate-max (default 10000 forward statements), the emitted module validated
// once in process (SPIRV-Tools, Vulkan 1.1) and once by stock `spirv-val --target-env vulkan1.1`
// (a child, CPU time; skipped without spirv-val on PATH).
// --lowerings `defaults` is the default lowering and per-stack,branch,on (heap): the two the
// targets compare. Writes JSON (to stdout without --out) and a progress line per row on stderr.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ad_kernel_gen.h"
#include "bench_args.h"
#include "codegen/spirv/compile.h"
#include "codegen/spirv/optimizer.h"
#include "codegen/spirv/optimizer_runs.h"
#include "codegen/spirv/options.h"
#include "codegen/spirv/validate.h"
#include "ir/parser.h"
#include "ir/visitor.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "workbench/workspace/compile.h"

using namespace pb;
using nlohmann::json;

namespace {

constexpr uint32_t kSpirvToolsDefaultBound = 4194303;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

size_t count_stacks(const ir::Kernel& k) {
  size_t n = 0;
  ir::walk(k.root(), [&](ir::Stmt& s) { n += ir::isa<ir::AdStackAllocaStmt>(&s); });
  return n;
}

struct Row {
  json j;
  uint64_t msl_lines = 0;
  bool ok = false;
};

bench::AdWorkload g_workload;    // --depth, --chain: the generator's nesting and chain length
bool g_intermediate_dce = true;  // --no-intermediate-dce clears it for every row
bool g_measure_passes = false;   // --measure-passes: pass by pass, with each pass's need

Row measure(const ir::Kernel& reverse, const codegen::spirv::LoweringOptions& lowering) {
  workbench::CompileRequest request;
  request.lowering = lowering;
  request.optimizer.intermediate_dce = g_intermediate_dce;
  request.optimizer.measure_passes = g_measure_passes;
  request.glsl = false;
  workbench::KernelCompile c = workbench::compile_kernel(reverse, request);
  Row row;
  row.ok = c.ok();
  row.msl_lines = c.metrics.msl_lines;
  const auto& m = c.metrics;
  bool dense = c.ok();
  double peak_ratio = 0;
  for (const auto& t : c.tasks) {
    dense = dense && t.metrics.final_id_bound == t.metrics.live_ids + 1;
    if (t.metrics.unoptimized_id_bound)
      peak_ratio = std::max(peak_ratio, static_cast<double>(t.metrics.peak_id_bound) / t.metrics.unoptimized_id_bound);
  }
  // With --measure-passes, also what the normal path (all passes in one optimizer) needs: the
  // smallest bound it runs under, within 1/16.
  json one_optimizer = nullptr;
  if (g_measure_passes && c.ok()) {
    uint32_t above = 0, at_most = 0;
    for (const auto& t : c.tasks) {
      const auto steps = codegen::spirv::optimizer_steps(g_intermediate_dce, true);
      const auto need = codegen::spirv::search_need(steps, t.unoptimized, codegen::spirv::TargetEnv::kVulkan1_1,
                                                    t.metrics.unoptimized_id_bound, 0, UINT32_MAX);
      above = std::max(above, need.fail);
      at_most = std::max(at_most, need.fit);
    }
    one_optimizer = {{"need_above", above}, {"need_at_most", at_most}};
  }
  row.j = {
      {"lowering", c.lowering},
      {"one_optimizer_need", one_optimizer},
      {"ok", c.ok()},
      {"error", c.error ? json(c.error->message) : json(nullptr)},
      {"tasks", c.tasks.size()},
      {"pushes", m.pushes},
      {"unoptimized_id_bound", m.unoptimized_id_bound},
      {"peak_id_bound", m.peak_id_bound},
      {"final_id_bound", m.final_id_bound},
      {"live_ids", m.live_ids},
      {"final_is_live_plus_one", dense},
      {"peak_over_unoptimized", peak_ratio},
      {"peak_below_spirv_tools_default", m.peak_id_bound < kSpirvToolsDefaultBound},
      {"peak_pass", c.tasks.empty() || !c.tasks.back().report ? json(nullptr) : json(c.tasks.back().report->peak_pass)},
      {"msl_lines", m.msl_lines},
      {"msl_bytes", m.msl_bytes},
      {"msl_lines_per_push", m.msl_lines_per_push() ? json(*m.msl_lines_per_push()) : json(nullptr)},
      {"valid", c.valid},
      {"ms", {{"emit", c.emit_ms}, {"optimize", c.optimize_ms}, {"msl", c.msl_ms}}}};
  return row;
}

// CPU seconds (user + system) and peak RSS (MiB) of one child process.
struct ChildCost {
  double cpu_s = 0, wall_s = 0, max_rss_mib = 0;
  int status = -1;
};

ChildCost run_child(const std::vector<std::string>& argv) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  ChildCost c;
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) < 0) return c;
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  c.max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return c;
}

double process_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// {"median", "min", "max"} of `v`.
json spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return nullptr;
  return {{"median", v[v.size() / 2]}, {"min", v.front()}, {"max", v.back()}};
}

std::vector<uint32_t> read_words(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

// passbench's optimize step against stock spirv-opt on the default lowering's modules of
// `reverse`, and the whole compile of the forward kernel in `forward_file`, `repeat` times each.
json versus_stock(const ir::Kernel& reverse, const std::string& forward_file, const std::string& passbench,
                  int repeat) {
  workbench::CompileRequest request;
  request.optimize = false;
  request.msl = request.glsl = false;
  workbench::KernelCompile c = workbench::compile_kernel(reverse, request);
  if (!c.ok()) return {{"error", c.error->message}};
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("spirv_bench.{}", getpid());
  std::filesystem::create_directories(dir);
  std::vector<double> ours_cpu, stock_cpu, stock_rss, compile_cpu, compile_rss;
  bool identical = true;
  for (int r = 0; r < repeat; ++r) {
    double ours = 0, stock = 0, rss = 0;
    for (size_t t = 0; t < c.tasks.size(); ++t) {
      const std::vector<uint32_t>& words = c.tasks[t].unoptimized;
      const std::string in = fmt::format("{}/t{}.spv", dir, t), out = fmt::format("{}/t{}.opt.spv", dir, t);
      bench::write_file(in, std::string(reinterpret_cast<const char*>(words.data()), words.size() * 4));
      const double start = process_cpu_s();
      codegen::spirv::OptimizerOptions options;
      options.validate = false;  // stock spirv-opt does not validate its output either
      const codegen::spirv::OptimizeResult ours_result = codegen::spirv::optimize_spirv(words, options, "k", "t");
      ours += process_cpu_s() - start;
      const ChildCost s = run_child({"spirv-opt", "-O", "--compact-ids", in, "-o", out});
      if (s.status != 0) return {{"error", fmt::format("spirv-opt exited with {}", s.status)}};
      stock += s.cpu_s;
      rss = std::max(rss, s.max_rss_mib);
      identical = identical && read_words(out) == ours_result.words;
    }
    ours_cpu.push_back(ours);
    stock_cpu.push_back(stock);
    stock_rss.push_back(rss);
    const ChildCost whole = run_child(
        {passbench, "compile", forward_file, "--passes=reverse_ad", "--target=msl", "-o", dir + "/out.metal"});
    if (whole.status != 0) return {{"error", fmt::format("passbench compile exited with {}", whole.status)}};
    compile_cpu.push_back(whole.cpu_s);
    compile_rss.push_back(whole.max_rss_mib);
  }
  std::filesystem::remove_all(dir);
  std::vector<double> opt_ratio, compile_ratio, rss_ratio;
  for (int r = 0; r < repeat; ++r) {
    opt_ratio.push_back(ours_cpu[r] / stock_cpu[r]);
    compile_ratio.push_back(compile_cpu[r] / stock_cpu[r]);
    rss_ratio.push_back(compile_rss[r] / stock_rss[r]);
  }
  return {{"repeat", repeat},
          {"tasks", c.tasks.size()},
          {"identical_output", identical},
          {"optimize_cpu_s", spread(ours_cpu)},
          {"stock_spirv_opt_cpu_s", spread(stock_cpu)},
          {"stock_spirv_opt_max_rss_mib", spread(stock_rss)},
          {"compile_msl_cpu_s", spread(compile_cpu)},
          {"compile_msl_max_rss_mib", spread(compile_rss)},
          {"optimize_over_stock", spread(opt_ratio)},
          {"compile_msl_over_stock", spread(compile_ratio)},
          {"compile_rss_over_stock", spread(rss_ratio)}};
}

// Emission of `reverse` under `lowering`, `repeat` times; then (when `validate`) its validation in
// process and by stock spirv-val.
json emit_only(const ir::Kernel& reverse, const codegen::spirv::LoweringOptions& lowering, int repeat, bool validate) {
  codegen::spirv::LoweringOptions options = lowering;
  options.validate = false;
  const std::string name = codegen::spirv::lowering_name(lowering);
  std::vector<double> wall_ms, cpu_s;
  codegen::spirv::CompiledKernel c;
  for (int r = 0; r < repeat; ++r) {
    const auto wall = std::chrono::steady_clock::now();
    const double start = process_cpu_s();
    try {
      c = codegen::spirv::compile(reverse, options);
    } catch (const std::exception& e) {
      return {{"lowering", name}, {"error", e.what()}};
    }
    cpu_s.push_back(process_cpu_s() - start);
    wall_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count());
  }
  const double statements = static_cast<double>(reverse.count_statements());
  std::vector<double> us_per_statement;
  us_per_statement.reserve(cpu_s.size());
  uint64_t words = 0;
  uint32_t bound = 0;
  for (double s : cpu_s) us_per_statement.push_back(s * 1e6 / statements);
  for (const auto& t : c.tasks) {
    words += t.spirv.size();
    bound = std::max(bound, t.spirv.size() > 3 ? t.spirv[3] : 0);
  }
  json out = {{"lowering", name},
              {"tasks", c.tasks.size()},
              {"unoptimized_id_bound", bound},
              {"words", words},
              {"emit_ms", spread(wall_ms)},
              {"emit_cpu_s", spread(cpu_s)},
              {"emit_cpu_us_per_reverse_statement", spread(us_per_statement)},
              {"validate", nullptr}};
  if (!validate) return out;
  double ours_s = 0, stock_s = 0;
  bool ours_ok = true, stock_ok = true, have_stock = true;
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("spirv_bench_val.{}", getpid());
  std::filesystem::create_directories(dir);
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    const std::vector<uint32_t>& module = c.tasks[t].spirv;
    const double start = process_cpu_s();
    ours_ok = codegen::spirv::validate(module).ok && ours_ok;
    ours_s += process_cpu_s() - start;
    const std::string file = fmt::format("{}/t{}.spv", dir, t);
    bench::write_file(file, std::string(reinterpret_cast<const char*>(module.data()), module.size() * 4));
    const ChildCost s = run_child({"spirv-val", "--target-env", "vulkan1.1", file});
    have_stock = have_stock && s.status != 127 && s.status >= 0;
    stock_ok = stock_ok && s.status == 0;
    stock_s += s.cpu_s;
  }
  std::filesystem::remove_all(dir);
  out["validate"] = {{"passbench_cpu_s", ours_s},
                     {"passbench_valid", ours_ok},
                     {"stock_spirv_val_cpu_s", have_stock ? json(stock_s) : json(nullptr)},
                     {"stock_spirv_val_valid", have_stock ? json(stock_ok) : json(nullptr)}};
  return out;
}

std::vector<codegen::spirv::LoweringOptions> pick_lowerings(const std::string& which) {
  if (which == "all") return codegen::spirv::all_stack_lowerings();
  if (which == "defaults")
    return {codegen::spirv::LoweringOptions{}, codegen::spirv::parse_lowering("count=per-stack,push=branch,bounds=on")};
  std::vector<codegen::spirv::LoweringOptions> out;
  for (const auto& l : split(which, ';')) out.push_back(codegen::spirv::parse_lowering(l));
  return out;
}

// Least-squares slope of y against x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double n = static_cast<double>(x.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  double d = n * sxx - sx * sx;
  return d == 0 ? 0 : (n * sxy - sx * sy) / d;
}

json slopes(const std::vector<size_t>& counts, const std::vector<codegen::spirv::LoweringOptions>& lowerings) {
  json out = json::array();
  for (bool same_stack : {true, false}) {
    for (const auto& lowering : lowerings) {
      std::vector<double> x, y;
      json points = json::array();
      for (size_t p : counts) {
        auto k = ir::parse_kernel(bench::push_family_kernel(p, same_stack), "<push family>");
        Row r = measure(*k, lowering);
        if (!r.ok) continue;
        x.push_back(static_cast<double>(p));
        y.push_back(static_cast<double>(r.msl_lines));
        points.push_back({{"pushes", p}, {"msl_lines", r.msl_lines}, {"final_id_bound", r.j["final_id_bound"]}});
      }
      double s = slope(x, y);
      std::string name = codegen::spirv::lowering_name(lowering);
      std::cerr << fmt::format("slope {:<16} {:<56} {:6.2f} MSL lines per push\n",
                               same_stack ? "same stack" : "stack per push", name, s);
      out.push_back({{"family", same_stack ? "same_stack" : "stack_per_push"},
                     {"lowering", name},
                     {"msl_lines_per_push", s},
                     {"points", points}});
    }
  }
  return out;
}

int bench_main(int argc, char** argv) {
  std::vector<size_t> sizes = {1000, 10000};
  std::vector<size_t> slope_counts = {8, 16, 32, 64};
  std::string which = "all", out_path, write_kernel, passbench;
  int vs_stock = 0, emit_repeat = 0;
  size_t validate_max = 10000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (const auto& s : split(argv[++i], ',')) sizes.push_back(bench::count_or_throw("--sizes", s));
    } else if (a == "--slope" && i + 1 < argc) {
      slope_counts.clear();
      for (const auto& s : split(argv[++i], ',')) slope_counts.push_back(bench::count_or_throw("--slope", s));
    } else if (a == "--lowerings" && i + 1 < argc) {
      which = argv[++i];
    } else if (a == "--depth" && i + 1 < argc) {
      g_workload.depth = bench::count_or_throw("--depth", argv[++i], 0);
    } else if (a == "--chain" && i + 1 < argc) {
      g_workload.chain = bench::count_or_throw("--chain", argv[++i], 0);
    } else if (a == "--write-kernel" && i + 1 < argc) {
      write_kernel = argv[++i];
    } else if (a == "--vs-stock" && i + 1 < argc) {
      vs_stock = static_cast<int>(bench::count_or_throw("--vs-stock", argv[++i]));
    } else if (a == "--emit-only" && i + 1 < argc) {
      emit_repeat = static_cast<int>(bench::count_or_throw("--emit-only", argv[++i]));
    } else if (a == "--validate-max" && i + 1 < argc) {
      validate_max = bench::count_or_throw("--validate-max", argv[++i], 0);
    } else if (a == "--passbench" && i + 1 < argc) {
      passbench = argv[++i];
    } else if (a == "--no-intermediate-dce") {
      g_intermediate_dce = false;
    } else if (a == "--measure-passes") {
      g_measure_passes = true;
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::cerr << "usage: spirv_bench [--sizes N,N,...] [--lowerings all|defaults|L1;L2] [--slope P,P,...] [--depth "
                   "D] [--chain L] [--no-intermediate-dce] [--measure-passes] [--write-kernel PREFIX] [--vs-stock R] "
                   "[--passbench PATH] [--emit-only R] [--validate-max N] [--out FILE]\n";
      return 2;
    }
  }
  auto lowerings = pick_lowerings(which);
  if (passbench.empty())
    passbench = (std::filesystem::absolute(argv[0]).parent_path() / "../../workbench/passbench").lexically_normal();
  auto pipeline = passes::parse_pipeline("reverse_ad");
  passes::RunOptions run_options;
  run_options.capture = passes::Capture::none;
  run_options.verify_each = false;
  json kernels = json::array();
  for (size_t n : sizes) {
    std::string text = bench::generate_ad_kernel(n, g_workload, true);
    if (!write_kernel.empty()) bench::write_file(fmt::format("{}.{}.chi", write_kernel, n), text);
    auto k = ir::parse_kernel(text, "<generated>");
    size_t forward = k->count_statements();
    auto start = std::chrono::steady_clock::now();
    auto run = passes::run_pipeline(*k, pipeline, run_options);
    double reverse_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (run.failed) {
      std::cerr << "reverse_ad failed: " << run.records[run.failed_index].failure << "\n";
      return 1;
    }
    json stock = nullptr;
    if (vs_stock > 0) {
      const std::string forward_file =
          std::filesystem::temp_directory_path() / fmt::format("spirv_bench.{}.{}.chi", getpid(), n);
      bench::write_file(forward_file, text);
      stock = versus_stock(*k, forward_file, passbench, vs_stock);
      std::filesystem::remove(forward_file);
      std::cerr << fmt::format("{:>7} fwd stmts vs stock spirv-opt: {}\n", forward, stock.dump());
      if (stock.contains("error")) return 1;
    }
    json rows = json::array();
    for (const auto& lowering : emit_repeat ? lowerings : decltype(lowerings){}) {
      json e = emit_only(*k, lowering, emit_repeat, n <= validate_max);
      std::cerr << fmt::format("{:>7} fwd / {:>7} rev stmts {:<56} ", forward, k->count_statements(),
                               e["lowering"].get<std::string>());
      if (e.contains("error")) {
        std::cerr << "error: " << e["error"].get<std::string>().substr(0, 200) << "\n";
        return 1;
      }
      std::cerr << fmt::format("emit {:.3f} s CPU ({:.2f} us/stmt)", e["emit_cpu_s"]["median"].get<double>(),
                               e["emit_cpu_us_per_reverse_statement"]["median"].get<double>());
      if (!e["validate"].is_null())
        std::cerr << fmt::format("; validate {:.3f} s, stock spirv-val {} s",
                                 e["validate"]["passbench_cpu_s"].get<double>(),
                                 e["validate"]["stock_spirv_val_cpu_s"].dump());
      std::cerr << "\n";
      rows.push_back(e);
    }
    for (const auto& lowering : emit_repeat ? decltype(lowerings){} : lowerings) {
      Row r = measure(*k, lowering);
      const json& j = r.j;
      std::cerr << fmt::format("{:>7} fwd / {:>7} rev stmts {:<56} ", forward, k->count_statements(),
                               j["lowering"].get<std::string>());
      if (r.ok)
        std::cerr << fmt::format(
            "IDs {} -> peak {} -> {}; MSL {} lines; emit {:.0f} opt {:.0f} msl {:.0f} ms{}\n",
            j["unoptimized_id_bound"].get<uint32_t>(), j["peak_id_bound"].get<uint32_t>(),
            j["final_id_bound"].get<uint32_t>(), r.msl_lines, j["ms"]["emit"].get<double>(),
            j["ms"]["optimize"].get<double>(), j["ms"]["msl"].get<double>(),
            j["one_optimizer_need"].is_null()
                ? std::string()
                : fmt::format("; one optimizer needs ({}, {}]", j["one_optimizer_need"]["need_above"].get<uint32_t>(),
                              j["one_optimizer_need"]["need_at_most"].get<uint32_t>()));
      else
        std::cerr << "error: " << j["error"].get<std::string>().substr(0, 200) << "\n";
      rows.push_back(j);
    }
    kernels.push_back({{"shape", "one_body"},
                       {"depth", g_workload.depth},
                       {"chain", g_workload.chain},
                       {"forward_statements", forward},
                       {"reverse_statements", k->count_statements()},
                       {"reverse_ad_ms", reverse_ms},
                       {"stacks", count_stacks(*k)},
                       {"pushes", workbench::count_pushes(*k)},
                       {"vs_stock", stock},
                       {emit_repeat ? "emit_only" : "lowerings", rows}});
  }
  json doc = {{"benchmark", "spirv"},
              {"emit_only", emit_repeat > 0},
              {"intermediate_dce", g_intermediate_dce},
              {"measure_passes", g_measure_passes},
              {"kernels", kernels},
              {"slopes", slope_counts.empty() || emit_repeat ? json::array() : slopes(slope_counts, lowerings)}};
  if (out_path.empty())
    std::cout << doc.dump(2) << "\n";
  else
    bench::write_file(out_path, doc.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return pb::bench::guarded_main("spirv_bench", [&] { return bench_main(argc, argv); });
}
