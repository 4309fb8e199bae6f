// How much cache one core of this machine effectively has: for working sets of 1 MiB upwards, the
// latency of dependent random loads (a pointer chase through a shuffled cycle of cache lines) and
// the bandwidth of a sequential read. The benchmarks' growth ratios change where these step up;
// on a VM that can be far below the last-level cache lscpu reports. Writes JSON:
//   memory_probe [--max-mib N] [--out FILE]
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_args.h"

namespace {

using Clock = std::chrono::steady_clock;

volatile long g_sink = 0;

struct Probe {
  double chase_ns = 0;  // per dependent load
  double stream_gbs = 0;
};

Probe probe(size_t bytes, std::mt19937_64& rng) {
  constexpr size_t kLine = 64;
  size_t lines = bytes / kLine;
  // Huge pages where the kernel grants them, so the chase measures the caches and not the TLB.
  void* mem = std::aligned_alloc(size_t{2} << 20, bytes);
  if (!mem) throw std::runtime_error("cannot allocate " + std::to_string(bytes >> 20) + " MiB");
  madvise(mem, bytes, MADV_HUGEPAGE);
  auto* base = static_cast<char*>(mem);
  std::vector<size_t> order(lines);
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i = 0; i < lines; ++i)
    *reinterpret_cast<char**>(base + order[i] * kLine) = base + order[(i + 1) % lines] * kLine;

  Probe p;
  char* at = base + order[0] * kLine;
  for (size_t i = 0; i < lines; ++i) at = *reinterpret_cast<char**>(at);  // warm up
  size_t steps = std::max(lines * 4, size_t{4000000});
  auto t0 = Clock::now();
  for (size_t i = 0; i < steps; ++i) at = *reinterpret_cast<char**>(at);
  p.chase_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(steps);

  const auto* words = reinterpret_cast<const long*>(base);
  size_t n = bytes / sizeof(long), reps = std::max(size_t{1}, (size_t{2} << 30) / bytes);
  long sum = 0;
  for (size_t i = 0; i < n; i += kLine / sizeof(long)) sum += words[i];  // warm up
  t0 = Clock::now();
  for (size_t r = 0; r < reps; ++r)
    for (size_t i = 0; i < n; i += kLine / sizeof(long)) sum += words[i];
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  p.stream_gbs = static_cast<double>(reps * bytes) / s / 1e9;
  g_sink = sum + (at != nullptr ? 1 : 0);  // keeps both loops from being optimised away
  std::free(mem);
  return p;
}

int probe_main(int argc, char** argv) {
  size_t max_mib = 256;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-mib" && i + 1 < argc) {
      max_mib = pb::bench::count_or_throw("--max-mib", argv[++i]);
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::cerr << "usage: memory_probe [--max-mib N] [--out FILE]\n";
      return 2;
    }
  }
  std::mt19937_64 rng(1);
  nlohmann::json rows = nlohmann::json::array();
  for (size_t mib : {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512}) {
    if (mib > max_mib) break;
    Probe p = probe(mib << 20, rng);
    std::cerr << mib << " MiB: chase " << p.chase_ns << " ns/load, stream " << p.stream_gbs << " GB/s\n";
    rows.push_back({{"mib", mib}, {"chase_ns", p.chase_ns}, {"stream_gb_per_s", p.stream_gbs}});
  }
  nlohmann::json doc = {{"benchmark", "memory_probe"}, {"results", rows}};
  if (out_path.empty())
    std::cout << doc.dump(2) << "\n";
  else
    pb::bench::write_file(out_path, doc.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return pb::bench::guarded_main("memory_probe", [&] { return probe_main(argc, argv); });
}
