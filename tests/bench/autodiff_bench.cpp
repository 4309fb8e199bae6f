// Benchmark of the reverse-mode pipeline (issue: autodiff). Generates articulated-body-shaped
// forward kernels (ad_kernel_gen.h) of 1K..100K statements, as many bodies or as one body with
// many carried values, and runs `reverse_ad` (sizing included) through the pass manager with
// instrumentation on and IR capture off. Records per-pass time and statement counts, forward
// statements per second, the reverse/forward size ratio, stacks and peak RSS. Writes JSON:
//   autodiff_bench [--sizes 1000,10000,...] [--repeat N] [--out FILE] [--cold]
// --cold evicts the caches between copying the forward kernel and running (bench_args.h).
// PB_AD_PIPELINE in the environment replaces `reverse_ad` (A/B runs of one stage); with
// PB_AD_PREFIX also set, that pipeline runs once, untimed, on each generated kernel first, so
// PB_AD_PIPELINE can time one late stage alone on the kernel it really sees.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ad_kernel_gen.h"
#include "bench_args.h"
#include "ir/parser.h"
#include "ir/visitor.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"

using namespace pb;

namespace {

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

size_t count_stacks(ir::Kernel& k) {
  size_t n = 0;
  ir::walk(k.root(), [&](ir::Stmt& s) { n += ir::isa<ir::AdStackAllocaStmt>(&s); });
  return n;
}

int bench_main(int argc, char** argv) {
  auto args = bench::parse_bench_args(argc, argv, {.sizes = {1000, 10000, 100000}, .repeat = 3, .out_path = ""},
                                      "autodiff_bench");
  if (!args) return 2;
  const std::vector<size_t>& sizes = args->sizes;
  const int repeat = args->repeat;
  const std::string& out_path = args->out_path;
  const char* custom = std::getenv("PB_AD_PIPELINE");
  auto pipeline = passes::parse_pipeline(custom ? custom : "reverse_ad");
  const char* prefix_text = std::getenv("PB_AD_PREFIX");
  auto prefix = prefix_text ? passes::parse_pipeline(prefix_text) : passes::Pipeline{};
  passes::RunOptions opts;
  opts.capture = passes::Capture::none;
  opts.verify_each = false;
  nlohmann::json results = nlohmann::json::array();
  // PB_AD_SHAPES: which shapes to run (comma-separated; default all), so that a counted run
  // (scripts/bench/growth.py) can measure one shape alone.
  const char* shapes_env = std::getenv("PB_AD_SHAPES");
  std::string shapes = shapes_env ? shapes_env : "many_bodies,one_body,dag";
  for (std::string shape : {"many_bodies", "one_body", "dag"}) {
    if (("," + shapes + ",").find("," + shape + ",") == std::string::npos) continue;
    bool one_body = shape == "one_body";
    bench::AdWorkload workload = shape == "dag" ? bench::dag_workload() : bench::AdWorkload{};
    for (size_t n : sizes) {
      auto k = ir::parse_kernel(bench::generate_ad_kernel(n, workload, one_body), "<generated>");
      size_t forward = k->count_statements();
      if (prefix_text && passes::run_pipeline(*k, prefix, opts).failed) {
        std::cerr << "PB_AD_PREFIX failed\n";
        return 1;
      }
      double best = 1e300;
      passes::PipelineRun best_run;
      size_t reverse = 0, stacks = 0;
      for (int r = 0; r < repeat; ++r) {
        auto copy = k->clone();
        if (args->cold) bench::evict_caches();
        auto run = passes::run_pipeline(*copy, pipeline, opts);
        if (run.failed) {
          std::cerr << "reverse_ad failed: " << run.records[run.failed_index].failure << "\n";
          return 1;
        }
        if (run.total_ms < best) {
          best = run.total_ms;
          best_run = std::move(run);
          reverse = copy->count_statements();
          stacks = count_stacks(*copy);
        }
        // The copy goes now, so the next run reuses its memory: from the second run on, the
        // time is the passes', not the kernel zeroing fresh pages (which at 1M statements,
        // half a gigabyte, costs as much as a stage).
      }
      nlohmann::json per_pass = nlohmann::json::array();
      for (const auto& rec : best_run.records)
        per_pass.push_back({{"pass", rec.pass},
                            {"ms", rec.wall_ms},
                            {"statements_in", rec.statements_before},
                            {"statements_out", rec.statements_after}});
      nlohmann::json row = {
          {"shape", shape},
          {"forward_statements", forward},
          {"reverse_statements", reverse},
          {"size_ratio", static_cast<double>(reverse) / static_cast<double>(forward)},
          {"total_ms", best},
          {"forward_statements_per_second", forward / (best / 1000.0)},
          {"stacks", stacks},
          {"per_pass", per_pass},
          {"peak_rss_kib", peak_rss_kib()},
      };
      std::cerr << fmt::format(
          "{:>12} {:>7} stmts: reverse_ad {:9.2f} ms ({:6.3f} M fwd stmt/s), reverse {:>7} stmts ({:.2f}x), {} "
          "stacks\n",
          row["shape"].get<std::string>(), forward, best, forward / best / 1000.0, reverse,
          row["size_ratio"].get<double>(), row["stacks"].get<size_t>());
      results.push_back(row);
    }
  }
  nlohmann::json doc = {{"benchmark", "autodiff"}, {"repeat", repeat}, {"cold", args->cold}, {"results", results}};
  if (out_path.empty())
    std::cout << doc.dump(2) << "\n";
  else
    bench::write_file(out_path, doc.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return pb::bench::guarded_main("autodiff_bench", [&] { return bench_main(argc, argv); });
}
