#include "cpu_bench_kernels.h"

#include <fmt/format.h>

#include "kernel_gen.h"

namespace pb::bench {

std::string carried_kernel(int64_t n) { return carried_loop_kernel(n, 0.5, 1.5); }

std::string nested_kernel(int64_t n) {
  return fmt::format(R"(field x : f32[{0}] grad x_grad
field y : f32[{0}] grad y_grad
kernel "nested" {{
  <i32> $0 = const 0
  <i32> $1 = const {0}
  <i32> $2 = const 8
  <i32> $3 = const 4
  $4 : for in range($0, $1) block_dim=adaptive {{
    <i32> $5 = loop $4 index 0
    <*f32> $6 = global ptr [x], index [$5] activate=true
    <f32> $7 = global load $6
    <*f32> $8 = alloca
    $9 : for in range($0, $2) block_dim=adaptive {{
      <i32> $10 = loop $9 index 0
      <f32> $11 = cast_value<f32> $10
      $12 : for in range($0, $3) block_dim=adaptive {{
        <i32> $13 = loop $12 index 0
        <f32> $14 = cast_value<f32> $13
        <f32> $15 = mul $7 $11
        <f32> $16 = add $15 $14
        <f32> $17 = local load [$8]
        <f32> $18 = add $17 $16
        <f32> $19 : local store [$8 <- $18]
      }}
    }}
    <f32> $20 = local load [$8]
    <*f32> $21 = global ptr [y], index [$5] activate=true
    $22 : global store [$21 <- $20]
  }}
}}
)",
                     n);
}

std::string atomic_kernel(int64_t n) {
  return fmt::format(R"(field x : f32[{0}] grad x_grad
field total : f32[] grad total_grad
kernel "atomic" {{
  <i32> $0 = const 0
  <i32> $1 = const {0}
  $2 : for in range($0, $1) block_dim=adaptive {{
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = mul $5 $5
    <*f32> $7 = global ptr [total], index [] activate=true
    <f32> $8 = atomic add($7, $6)
  }}
}}
)",
                     n);
}

std::string sparse_kernel(int64_t n) {
  return fmt::format(R"(pointer P : [{1}]
dense D : [{0}] in P
field x : f32[{0}] grad x_grad in D
field y : f32[{0}] grad y_grad in D
kernel "sparse" {{
  <f32> $0 = const 1
  $1 : struct for in D noneblock_dim=adaptive {{
    <i32> $2 = loop $1 index 0
    <*f32> $3 = global ptr [x], index [$2] activate=false
    <f32> $4 = global load $3
    <f32> $5 = mul $4 $4
    <f32> $6 = add $5 $0
    <*f32> $7 = global ptr [y], index [$2] activate=true
    $8 : global store [$7 <- $6]
  }}
}}
)",
                     n, n / kSparseBlock);
}

}  // namespace pb::bench
