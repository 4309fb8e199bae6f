// The command line every benchmark takes: [--sizes N,N,...] [--repeat N] [--out FILE] [--cold].
#pragma once

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pb::bench {

struct BenchArgs {
  std::vector<size_t> sizes;
  int repeat = 3;
  std::string out_path;  // empty: JSON to stdout
  // Evict the caches before each timed run, so that every size starts from memory; without it,
  // a kernel that fits the last-level cache starts warm there (it was just built) and a larger
  // one does not, and the ratio of their times measures the cache's size as well as the passes.
  bool cold = false;
};

// Writes over a buffer twice the last-level cache (64 MiB to 512 MiB: a VM may report its host's
// whole L3), which evicts whatever the timed code would otherwise find there. Called outside the
// timed region.
inline void evict_caches() {
  static std::vector<unsigned char> buffer = [] {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    size_t bytes = llc > 0 ? 2 * static_cast<size_t>(llc) : 0;
    return std::vector<unsigned char>(std::clamp(bytes, size_t{64} << 20, size_t{512} << 20));
  }();
  static unsigned char fill = 0;
  std::memset(buffer.data(), ++fill, buffer.size());
}

// A decimal count of at least `min`, all of `text`; nullopt otherwise.
inline std::optional<size_t> parse_count(const std::string& text, size_t min = 1) {
  size_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min) return std::nullopt;
  return v;
}

// Parses argv over the defaults; prints the usage line and returns nullopt on anything else.
inline std::optional<BenchArgs> parse_bench_args(int argc, char** argv, BenchArgs defaults, const char* program) {
  BenchArgs a = std::move(defaults);
  bool ok = true;
  for (int i = 1; ok && i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) {
      a.sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string s; ok && std::getline(ss, s, ',');) {
        auto n = parse_count(s);
        if (n) a.sizes.push_back(*n);
        ok = n.has_value();
      }
      ok = ok && !a.sizes.empty();
    } else if (arg == "--repeat" && i + 1 < argc) {
      auto n = parse_count(argv[++i]);
      ok = n && *n <= 1000000;
      if (ok) a.repeat = static_cast<int>(*n);
    } else if (arg == "--out" && i + 1 < argc) {
      a.out_path = argv[++i];
    } else if (arg == "--cold") {
      a.cold = true;
    } else {
      ok = false;
    }
  }
  if (!ok) {
    std::cerr << "usage: " << program << " [--sizes N,N,...] [--repeat N] [--out FILE] [--cold]\n"
              << "  (sizes and repeat are positive integers)\n";
    return std::nullopt;
  }
  return a;
}

// A count for a numeric option, or a std::invalid_argument naming the option and the text.
inline size_t count_or_throw(const std::string& option, const std::string& text, size_t min = 1) {
  if (auto n = parse_count(text, min)) return *n;
  throw std::invalid_argument(option + " takes integers from " + std::to_string(min) + ", not '" + text + "'");
}

// Writes `text` to `path`, throwing if the file cannot be written (a benchmark that cannot save
// its figures has failed).
inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + path);
}

// Runs a benchmark's body, reporting an exception that escapes it (a bad number on spirv_bench's
// command line, a file that cannot be written) as an error with exit status 1, not an abort.
template <class Body>
int guarded_main(const char* program, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << program << ": error: unknown exception\n";
  }
  return 1;
}

}  // namespace pb::bench
