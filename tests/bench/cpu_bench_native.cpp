// The benchmark kernels' arithmetic by hand, compiled with -O2 (tests/bench/CMakeLists.txt):
// serial loops, what a C++ programmer would write.
#include <cmath>

#include "cpu_bench_kernels.h"

namespace pb::bench {

void native_carried_forward(const float* x, const int32_t* trips, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    for (int32_t k = 0; k < trips[i]; ++k) v = std::sin(v) * 0.5f + 1.5f;
    y[i] = v;
  }
}

void native_carried_reverse(const float* x, const int32_t* trips, const float* dy, float* dx, int64_t n) {
  float stack[64];
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    int32_t m = trips[i] < 64 ? trips[i] : 64;
    for (int32_t k = 0; k < m; ++k) {
      stack[k] = v;
      v = std::sin(v) * 0.5f + 1.5f;
    }
    float adj = dy[i];
    for (int32_t k = m; k-- > 0;) adj *= std::cos(stack[k]) * 0.5f;
    dx[i] += adj;
  }
}

void native_nested_forward(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 4; ++k) s += x[i] * static_cast<float>(j) + static_cast<float>(k);
    y[i] = s;
  }
}

float native_atomic_forward(const float* x, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < n; ++i) total += x[i] * x[i];
  return total;
}

void native_sparse_forward(const int64_t* active, const float* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kSparseBlock; ++b) {
    if (!active[b]) continue;
    for (int64_t i = b * kSparseBlock; i < (b + 1) * kSparseBlock; ++i) y[i] = x[i] * x[i] + 1.0f;
  }
}

void native_sparse_reverse(const int64_t* active, const float* x, const float* dy, float* dx, int64_t n) {
  for (int64_t b = 0; b < n / kSparseBlock; ++b) {
    if (!active[b]) continue;
    for (int64_t i = b * kSparseBlock; i < (b + 1) * kSparseBlock; ++i) dx[i] += dy[i] * 2.0f * x[i];
  }
}

}  // namespace pb::bench
