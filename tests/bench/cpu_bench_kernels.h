// Kernels of cpu_bench (CHI text for N top-level iterations) and the same arithmetic written by
// hand in C++ (cpu_bench_native.cpp, compiled with -O2), for the CPU JIT's physical limit.
#pragma once

#include <cstdint>
#include <string>

namespace pb::bench {

// Trip count of the carried kernel's inner loop (held in the field n, so the loop is dynamic).
inline constexpr int kCarriedTrips = 8;

// y[i] = v after v = x[i]; for n[i] times: v = sin(v) * 0.5 + 1.5 (loop-carried: stacks in reverse).
std::string carried_kernel(int64_t n);
// y[i] = sum over j < 8, k < 4 of x[i] * j + k.
std::string nested_kernel(int64_t n);
// total[] += x[i] * x[i] with an atomic add.
std::string atomic_kernel(int64_t n);
// Cells per pointer block of the sparse kernel.
inline constexpr int64_t kSparseBlock = 8;
// y[i] = x[i] * x[i] + 1 over the live cells of a dense space of n cells under a pointer space of
// n / kSparseBlock blocks (a struct for: the cells of inactive blocks are not visited).
std::string sparse_kernel(int64_t n);

// Hand-written equivalents; reverse: dx[i] += dy[i] * d y[i] / d x[i] with a per-iteration stack.
void native_carried_forward(const float* x, const int32_t* trips, float* y, int64_t n);
void native_carried_reverse(const float* x, const int32_t* trips, const float* dy, float* dx, int64_t n);
void native_nested_forward(const float* x, float* y, int64_t n);
float native_atomic_forward(const float* x, int64_t n);
// Over the blocks b with active[b] != 0 only.
void native_sparse_forward(const int64_t* active, const float* x, float* y, int64_t n);
void native_sparse_reverse(const int64_t* active, const float* x, const float* dy, float* dx, int64_t n);

}  // namespace pb::bench
