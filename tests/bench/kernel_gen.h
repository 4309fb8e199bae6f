// Synthetic kernels for benchmarks: realistic mixes of foldable, dead, duplicate and live
// statements, in straight-line or loop-nested shape, of a requested size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ir/kernel.h"

namespace pb::bench {

enum class KernelShape { StraightLine, LoopNested };

// About `statements` statements (within a few percent), deterministic for a given seed.
std::unique_ptr<ir::Kernel> generate_kernel(KernelShape shape, size_t statements, uint64_t seed = 1);

// The loop-carried shape of the backend tests and benchmarks: for i < n, v = x[i], then n[i] times
// v = scale * sin(v) + shift, then y[i] = v (x, y with gradient fields).
std::string carried_loop_kernel(int64_t n, double scale, double shift);

}  // namespace pb::bench
