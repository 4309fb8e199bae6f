// The LLVM CPU backend against the reference interpreter and hand-written C++ (-O2): kernel time
// per launch for an elementwise loop with a loop-carried dynamic inner loop (stacks in reverse),
// nested loops, atomics into a scalar, and a struct for over a sparse field (half its pointer
// blocks active); forward and reverse; 1K..1M top-level iterations.
// Google Benchmark; JSON with --benchmark_out=FILE --benchmark_out_format=json. Each run reports
// median, min and max over --benchmark_repetitions. Figures: docs/performance.md.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cpu_bench_kernels.h"
#include "ir/parser.h"
#include "runtime/cpu/cpu.h"
#include "runtime/interp/interpreter.h"
#include "workbench/workspace/gradient.h"

namespace pb::bench {
namespace {

enum class Backend { interp, cpu, cpu_1thread, native };
enum class Shape { carried, nested, atomic, sparse };

const char* name(Backend b) {
  switch (b) {
    case Backend::interp:
      return "interp";
    case Backend::cpu:
      return "cpu";
    case Backend::cpu_1thread:
      return "cpu_1thread";
    case Backend::native:
      return "native_O2";
  }
  return "?";
}
const char* name(Shape s) {
  switch (s) {
    case Shape::carried:
      return "carried";
    case Shape::nested:
      return "nested";
    case Shape::atomic:
      return "atomic";
    case Shape::sparse:
      return "sparse";
  }
  return "?";
}

std::string kernel_text(Shape s, int64_t n) {
  switch (s) {
    case Shape::carried:
      return carried_kernel(n);
    case Shape::nested:
      return nested_kernel(n);
    case Shape::atomic:
      return atomic_kernel(n);
    case Shape::sparse:
      return sparse_kernel(n);
  }
  return "";
}

// The sparse shape's pointer blocks: every other one active.
std::vector<int64_t> sparse_active(int64_t n) {
  std::vector<int64_t> a(static_cast<size_t>(n / kSparseBlock));
  for (size_t b = 0; b < a.size(); ++b) a[b] = b % 2 == 0 ? 1 : 0;
  return a;
}

nlohmann::json inputs(Shape s, int64_t n) {
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.1 + 0.001 * static_cast<double>(i % 1000);
  nlohmann::json in = {{"fields", {{"x", {{"data", x}}}}}};
  if (s == Shape::carried) in["fields"]["n"] = {{"data", std::vector<int>(static_cast<size_t>(n), kCarriedTrips)}};
  if (s != Shape::atomic) in["fields"]["y_grad"] = {{"data", std::vector<double>(static_cast<size_t>(n), 1.0)}};
  if (s == Shape::atomic) in["fields"]["total_grad"] = {{"data", {1.0}}};
  if (s == Shape::sparse) in["active"] = {{"P", sparse_active(n)}};
  return in;
}

void run_native(benchmark::State& bs, Shape s, bool reverse, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), dy(static_cast<size_t>(n), 1.0f),
      dx(static_cast<size_t>(n));
  std::vector<int32_t> trips(static_cast<size_t>(n), kCarriedTrips);
  std::vector<int64_t> active = sparse_active(n);
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.1f + 0.001f * static_cast<float>(i % 1000);
  float total = 0;
  for (auto _ : bs) {
    if (s == Shape::carried && reverse)
      native_carried_reverse(x.data(), trips.data(), dy.data(), dx.data(), n);
    else if (s == Shape::carried)
      native_carried_forward(x.data(), trips.data(), y.data(), n);
    else if (s == Shape::nested)
      native_nested_forward(x.data(), y.data(), n);
    else if (s == Shape::sparse && reverse)
      native_sparse_reverse(active.data(), x.data(), dy.data(), dx.data(), n);
    else if (s == Shape::sparse)
      native_sparse_forward(active.data(), x.data(), y.data(), n);
    else
      total += native_atomic_forward(x.data(), n);
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(dx.data());
    benchmark::DoNotOptimize(total);
  }
}

void run_case(benchmark::State& bs, Shape s, bool reverse, Backend b, int64_t n) {
  if (b == Backend::native) return run_native(bs, s, reverse, n);
  auto forward = ir::parse_kernel(kernel_text(s, n));
  std::unique_ptr<ir::Kernel> rev = reverse ? workbench::make_reverse_kernel(*forward, "reverse_ad") : nullptr;
  const ir::Kernel& k = reverse ? *rev : *forward;
  runtime::State st = runtime::make_state(*forward, inputs(s, n));
  if (b == Backend::interp) {
    runtime::RunOptions o;
    o.max_steps = 0;
    for (auto _ : bs) runtime::run_kernel(k, st, o);
    return;
  }
  runtime::cpu::CpuRuntime rt(b == Backend::cpu_1thread ? 1 : 0);
  runtime::cpu::CpuKernel ck(k, st);
  runtime::cpu::DeviceMemory m = runtime::cpu::pack(ck, st);
  int64_t stride = 0;
  for (auto _ : bs) {
    auto report = rt.launch(ck, m);
    for (const auto& t : report.tasks) stride = std::max(stride, t.heap_stride_bytes);
  }
  bs.counters["threads"] = rt.threads();
  bs.counters["heap_bytes"] = static_cast<double>(rt.heap_bytes());
  bs.counters["threads_x_stride"] = static_cast<double>(stride * rt.threads());
}

double at(const std::vector<double>& v, double q) {
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  return s.empty() ? 0 : s[static_cast<size_t>(q * static_cast<double>(s.size() - 1))];
}

}  // namespace
}  // namespace pb::bench

int main(int argc, char** argv) {
  using namespace pb::bench;
  benchmark::Initialize(&argc, argv);
  for (Shape s : {Shape::carried, Shape::nested, Shape::atomic, Shape::sparse})
    for (bool reverse : {false, true})
      for (Backend b : {Backend::interp, Backend::cpu, Backend::cpu_1thread, Backend::native}) {
        if (b == Backend::native && reverse && s != Shape::carried && s != Shape::sparse) continue;
        for (int64_t n : {int64_t{1000}, int64_t{10000}, int64_t{100000}, int64_t{1000000}}) {
          std::string label = fmt::format("{}/{}/{}/{}", name(s), reverse ? "reverse" : "forward", name(b), n);
          auto* bm = benchmark::RegisterBenchmark(label.c_str(),
                                                  [=](benchmark::State& bs) { run_case(bs, s, reverse, b, n); });
          bm->Unit(benchmark::kMicrosecond)->UseRealTime();
          bm->ComputeStatistics("min", [](const std::vector<double>& v) { return at(v, 0.0); });
          bm->ComputeStatistics("max", [](const std::vector<double>& v) { return at(v, 1.0); });
          if (b == Backend::interp && n >= 100000) bm->Iterations(1);
        }
      }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
