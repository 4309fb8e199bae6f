// The command line every benchmark takes: [--sizes N,N,...] [--repeat N] [--out FILE].
#pragma once

#include <cstddef>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace pb::bench {

struct BenchArgs {
  std::vector<size_t> sizes;
  int repeat = 3;
  std::string out_path;  // empty: JSON to stdout
};

// Parses argv over the defaults; prints the usage line and returns nullopt on anything else.
inline std::optional<BenchArgs> parse_bench_args(int argc, char** argv, BenchArgs defaults, const char* program) {
  BenchArgs a = std::move(defaults);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) {
      a.sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string s; std::getline(ss, s, ',');) a.sizes.push_back(std::stoul(s));
    } else if (arg == "--repeat" && i + 1 < argc) {
      a.repeat = std::stoi(argv[++i]);
    } else if (arg == "--out" && i + 1 < argc) {
      a.out_path = argv[++i];
    } else {
      std::cerr << "usage: " << program << " [--sizes N,N,...] [--repeat N] [--out FILE]\n";
      return std::nullopt;
    }
  }
  return a;
}

}  // namespace pb::bench
