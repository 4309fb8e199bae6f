// Kernels in the offloaded stage shared by the backends' tests.
#pragma once

namespace pb::test {

// total = sum of i and top = max of x[i] over 1000 iterations, through thread-local storage: each
// invocation's epilogue adds its partial sum and maxes its partial max into the fields.
inline constexpr const char* kThreadLocal = R"(field x : f32[1000]
field total : i32[]
field top : f32[]
kernel "thread_local" {
  $0 = offloaded range_for(0, 1000) grid_dim=0 block_dim=128
  tls prologue {
    <*i32> $1 = thread local ptr (offset = 0 B)
    <i32> $2 = const 0
    $3 : global store [$1 <- $2]
    <*f32> $4 = thread local ptr (offset = 4 B)
    <f32> $5 = const -1000.0
    $6 : global store [$4 <- $5]
  }
  body {
    <i32> $7 = loop $0 index 0
    <*i32> $8 = thread local ptr (offset = 0 B)
    <i32> $9 = global load $8
    <i32> $10 = add $9 $7
    $11 : global store [$8 <- $10]
    <*f32> $12 = global ptr [x], index [$7] activate=true
    <f32> $13 = global load $12
    <*f32> $14 = thread local ptr (offset = 4 B)
    <f32> $15 = global load $14
    <f32> $16 = max $15 $13
    $17 : global store [$14 <- $16]
  }
  tls_epilogue {
    <*i32> $18 = thread local ptr (offset = 0 B)
    <i32> $19 = global load $18
    <*i32> $20 = global ptr [total], index [] activate=true
    <i32> $21 = atomic add($20, $19)
    <*f32> $22 = thread local ptr (offset = 4 B)
    <f32> $23 = global load $22
    <*f32> $24 = global ptr [top], index [] activate=true
    <f32> $25 = atomic max($24, $23)
  }
}
)";

}  // namespace pb::test
