// Benchmark of the pass manager and the cleanup passes (issue: pass manager).
// For straight-line and loop-nested kernels of 1K..1M statements: `simplify,dce` through the
// pass manager with instrumentation on (records, no IR capture) and off (the passes' free
// functions called directly), plus dce and simplify alone. Writes JSON:
//   passes_bench [--sizes 1000,10000,...] [--repeat N] [--out FILE] [--cold]
// --cold evicts the caches between making each copy and timing it (bench_args.h).
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench_args.h"
#include "kernel_gen.h"
#include "passes/dce.h"
#include "passes/pass_manager.h"
#include "passes/simplify.h"

using namespace pb;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

bool g_cold = false;

// Best of `repeat` runs of `f` on fresh copies of `k`.
template <class F>
double best_ms(const ir::Kernel& k, int repeat, F&& f) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    auto copy = k.clone();
    if (g_cold) bench::evict_caches();
    auto t0 = Clock::now();
    f(*copy);
    best = std::min(best, ms_since(t0));
  }
  return best;
}

// Best of `repeat` runs each of `a` and `b`, alternating, so that a drift in the machine's speed
// (other tenants of the cache) falls on both alike rather than on whichever ran second.
template <class A, class B>
std::pair<double, double> best_ms_alternating(const ir::Kernel& k, int repeat, A&& a, B&& b) {
  double best_a = 1e300, best_b = 1e300;
  for (int r = 0; r < repeat; ++r) {
    best_a = std::min(best_a, best_ms(k, 1, a));
    best_b = std::min(best_b, best_ms(k, 1, b));
  }
  return {best_a, best_b};
}

int bench_main(int argc, char** argv) {
  auto args = bench::parse_bench_args(
      argc, argv, {.sizes = {1000, 10000, 100000, 1000000}, .repeat = 3, .out_path = ""}, "passes_bench");
  if (!args) return 2;
  const std::vector<size_t>& sizes = args->sizes;
  const int repeat = args->repeat;
  const std::string& out_path = args->out_path;
  g_cold = args->cold;
  auto pipeline = passes::parse_pipeline("simplify,dce");
  nlohmann::json results = nlohmann::json::array();
  for (auto shape : {bench::KernelShape::StraightLine, bench::KernelShape::LoopNested}) {
    for (size_t n : sizes) {
      auto k = bench::generate_kernel(shape, n);
      size_t stmts = k->count_statements();
      double dce_ms = best_ms(*k, repeat, [](ir::Kernel& c) { passes::eliminate_dead_code(c); });
      double simplify_ms = best_ms(*k, repeat, [](ir::Kernel& c) { passes::simplify(c); });
      passes::RunOptions on;
      on.capture = passes::Capture::none;
      on.verify_each = false;
      auto [off_ms, on_ms] = best_ms_alternating(
          *k, repeat,
          [](ir::Kernel& c) {
            passes::simplify(c);
            passes::eliminate_dead_code(c);
          },
          [&](ir::Kernel& c) { passes::run_pipeline(c, pipeline, on); });
      passes::RunOptions verified = on;
      verified.verify_each = true;
      double verified_ms =
          best_ms(*k, std::min(repeat, 2), [&](ir::Kernel& c) { passes::run_pipeline(c, pipeline, verified); });
      auto after = k->clone();
      if (g_cold) bench::evict_caches();
      auto run = passes::run_pipeline(*after, pipeline, on);
      nlohmann::json r = {
          {"shape", shape == bench::KernelShape::StraightLine ? "straight_line" : "loop_nested"},
          {"statements", stmts},
          {"statements_after", after->count_statements()},
          {"dce_ms", dce_ms},
          {"simplify_ms", simplify_ms},
          {"dce_statements_per_second", stmts / (dce_ms / 1000.0)},
          {"simplify_statements_per_second", stmts / (simplify_ms / 1000.0)},
          {"pipeline_uninstrumented_ms", off_ms},
          {"pipeline_instrumented_ms", on_ms},
          {"instrumentation_overhead", on_ms / off_ms - 1.0},
          {"pipeline_instrumented_verify_each_ms", verified_ms},
          {"per_pass_ms", {{"simplify", run.records[0].wall_ms}, {"dce", run.records[1].wall_ms}}},
          {"peak_rss_kib", peak_rss_kib()},
      };
      std::cerr << fmt::format(
          "{:>13} {:>8} stmts: dce {:8.2f} ms ({:5.2f} M/s)  simplify {:8.2f} ms ({:5.2f} M/s)  overhead {:+.1f}%\n",
          r["shape"].get<std::string>(), stmts, dce_ms, stmts / dce_ms / 1000.0, simplify_ms,
          stmts / simplify_ms / 1000.0, 100.0 * (on_ms / off_ms - 1.0));
      results.push_back(r);
    }
  }
  nlohmann::json doc = {{"benchmark", "passes"}, {"repeat", repeat}, {"cold", g_cold}, {"results", results}};
  if (out_path.empty()) {
    std::cout << doc.dump(2) << "\n";
  } else {
    bench::write_file(out_path, doc.dump(2) + "\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return pb::bench::guarded_main("passes_bench", [&] { return bench_main(argc, argv); });
}
