// Kernels over sparse SNodes that the interpreter's tests (interp_sparse_test.cpp) check value by
// value and the CPU backend's (cpu_sparse_test.cpp) run against the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pb::runtime::test::sparse {

// Writes with and without activation through a pointer space, read back.
inline constexpr const char* kWrites = R"(pointer P : [4]
dense D : [8] in P
field x : f32[8] in D
field r : f32[2]
kernel {
  <i32> $0 = const 5
  <i32> $1 = const 2
  <i32> $2 = const 0
  <i32> $3 = const 1
  <f32> $4 = const 7
  <*f32> $5 = global ptr [x], index [$0] activate=false
  $6 : global store [$5 <- $4]
  <f32> $7 = global load $5
  <*f32> $8 = global ptr [r], index [$2] activate=true
  $9 : global store [$8 <- $7]
  <*f32> $10 = global ptr [x], index [$1] activate=true
  $11 : global store [$10 <- $4]
  <*f32> $12 = global ptr [x], index [$1] activate=false
  <f32> $13 = global load $12
  <*f32> $14 = global ptr [r], index [$3] activate=true
  $15 : global store [$14 <- $13]
}
)";

// The access chain into a nested 2-d bitmasked space: element (3, 1) is cell 13.
inline constexpr const char* kChain = R"(dense S1dense : [2, 2]
bitmasked S2bitmasked : [4, 4] in S1dense
field S3place<f32> : f32[4, 4] in S2bitmasked
kernel {
  $0 = offloaded
  body {
    <*gen> $1 = get root nullptr
    <i32> $2 = const 2
    <*gen> $3 = [S1dense][dense]::lookup($1, $2) activate = false
    <*gen> $4 = get child [S1dense->S2bitmasked] $3
    <i32> $5 = const 3
    <*gen> $6 = [S2bitmasked][bitmasked]::lookup($4, $5) activate = true
    <*f32> $7 = get child [S2bitmasked->S3place<f32>] $6
    <f32> $8 = const 4.5
    $9 : global store [$7 <- $8]
  }
}
)";

// Three appends to a dynamic space of two cells.
inline constexpr const char* kAppend = R"(dynamic L : [2]
field l : i32[2] in L
kernel "k" {
  $0 = offloaded range_for(0, 3) grid_dim=0 block_dim=32
  body {
    <*gen> $1 = get root nullptr
    <i32> $2 = const 1
    <i32> $3 = append [L] ptr = $1, val = $2
  }
}
)";

// `length` on a pointer space: no meaning.
inline constexpr const char* kLengthOnPointer = R"(pointer P : [2]
kernel {
  <*gen> $0 = get root nullptr
  <i32> $1 = length [P] ptr = $0
}
)";

// A dynamic op reached through a cell of another SNode than the dynamic space's parent.
inline constexpr const char* kForeignCell = R"(dense A : [16]
dense S1 : [2]
dynamic L : [2, 4] in S1
field l : i32[2, 4] in L
kernel "k" {
  <*gen> $0 = get root nullptr
  <i32> $1 = const 15
  <*gen> $2 = [A][dense]::lookup($0, $1) activate = false
  <i32> $3 = length [L] ptr = $2
}
)";

// SNode ops before lower_access: is_active, activate, append and length on cell pointers.
inline constexpr const char* kOps = R"(pointer P : [4]
bitmasked B : [8] in P
field x : f32[8] in B
dense S : [2]
pointer Q : [2] in S
dynamic L : [2, 4] in Q
field l : i32[2, 4] in L
field r : i32[4]
kernel "ops" {
  <i32> $0 = const 3
  <i32> $1 = const 0
  <i32> $2 = const 1
  <*gen> $3 = global ptr [B], index [$0] activate=true
  <u1> $4 = is_active [B] ptr = $3
  <i32> $5 = cast_value<i32> $4
  <*i32> $6 = global ptr [r], index [$1] activate=true
  $7 : global store [$6 <- $5]
  $8 : activate [B] ptr = $3
  <u1> $9 = is_active [B] ptr = $3
  <i32> $10 = cast_value<i32> $9
  <*i32> $11 = global ptr [r], index [$2] activate=true
  $12 : global store [$11 <- $10]
  <*gen> $13 = global ptr [L], index [$2] activate=true
  <i32> $14 = append [L] ptr = $13, val = $0
  <i32> $15 = append [L] ptr = $13, val = $0
  <i32> $16 = length [L] ptr = $13
  <i32> $17 = const 2
  <*i32> $18 = global ptr [r], index [$17] activate=true
  $19 : global store [$18 <- $16]
  <*gen> $20 = global ptr [P], index [$2] activate=true
  <u1> $21 = is_active [P] ptr = $20
  <i32> $22 = cast_value<i32> $21
  <*i32> $23 = global ptr [r], index [$0] activate=true
  $24 : global store [$23 <- $22]
}
)";

// Deactivating a pointer cell, then activating it again: the bitmasked cell below starts inactive.
inline constexpr const char* kFresh = R"(pointer P : [2]
bitmasked B : [8] in P
field x : f32[8] in B
field r : i32[]
kernel {
  <i32> $0 = const 1
  <i32> $1 = const 0
  <f32> $2 = const 2.5
  <*f32> $3 = global ptr [x], index [$0] activate=true
  $4 : global store [$3 <- $2]
  <*gen> $5 = global ptr [P], index [$1] activate=true
  $6 : deactivate [P] ptr = $5
  $7 : activate [P] ptr = $5
  <*gen> $8 = global ptr [B], index [$0] activate=true
  <u1> $9 = is_active [B] ptr = $8
  <i32> $10 = cast_value<i32> $9
  <*i32> $11 = global ptr [r], index [] activate=true
  $12 : global store [$11 <- $10]
}
)";

// 4,096 iterations activate every other pointer block through their writes; a struct for over
// the dense space below visits only the live cells (2,048 of them) and sums them atomically;
// is_active reads back per block.
inline constexpr const char* kParallel = R"(pointer P : [64]
dense D : [4096] in P
field x : f32[4096] in D
field total : f32[]
field seen : i32[64]
kernel "many" {
  <i32> $0 = const 0
  <i32> $1 = const 4096
  <i32> $2 = const 64
  <i32> $3 = const 2
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <i32> $6 = floordiv $5 $2
    <i32> $7 = mod $6 $3
    <u1> $8 = cmp_eq $7 $0
    $9 : if $8 {
      <f32> $10 = cast_value<f32> $5
      <*f32> $11 = global ptr [x], index [$5] activate=true
      $12 : global store [$11 <- $10]
    }
  }
  $13 : struct for in D noneblock_dim=adaptive {
    <i32> $14 = loop $13 index 0
    <*f32> $15 = global ptr [x], index [$14] activate=false
    <f32> $16 = global load $15
    <*f32> $17 = global ptr [total], index [] activate=true
    <f32> $18 = atomic add($17, $16)
  }
  $19 : for in range($0, $2) block_dim=adaptive {
    <i32> $20 = loop $19 index 0
    <*gen> $21 = global ptr [P], index [$20] activate=true
    <u1> $22 = is_active [P] ptr = $21
    <i32> $23 = cast_value<i32> $22
    <*i32> $24 = global ptr [seen], index [$20] activate=true
    $25 : global store [$24 <- $23]
  }
}
)";

// kParallel's state after a backend's run (state_to_json) against the interpreter's: the same
// activity (32 live blocks), x and seen; the atomic sum of 2,048 integers below 2^12 within 1e-5
// relative (exact in f32 only up to the rounding of partial sums in another order).
inline void expect_parallel_result(const nlohmann::json& got, const nlohmann::json& want) {
  EXPECT_EQ(got["active"], want["active"]);
  EXPECT_EQ(got["fields"]["x"], want["fields"]["x"]);
  EXPECT_EQ(got["fields"]["seen"], want["fields"]["seen"]);
  double total = want["fields"]["total"]["data"][0].get<double>();
  EXPECT_NEAR(got["fields"]["total"]["data"][0].get<double>(), total, 1e-5 * total);
  int active = 0;
  for (const auto& a : got["active"]["P"]) active += a.get<int>();
  EXPECT_EQ(active, 32);
}

}  // namespace pb::runtime::test::sparse
