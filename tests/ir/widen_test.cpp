#include "ir/widen.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace pb::ir {
namespace {

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

TEST(Widen, EveryF32BecomesF64AndConstantsKeepTheirExactValue) {
  auto k = parse(R"(field x : f32[2] grad x_grad
field n : i32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  <f32> $2 = const 0.1
  <f32> $3 = stack alloc (max_size=4)
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f32> $6 = global ptr [x], index [$5] activate=true
    <f32> $7 = global load $6
    <*f32> $8 = alloca
    <f32> $9 : local store [$8 <- $7]
    <f32> $10 = mul $7 $2
    <i32> $11 = cast_value<i32> $10
    <f32> $12 = cast_value<f32> $11
  }
}
)");
  auto wide = widen_f32_to_f64(*k);
  ASSERT_TRUE(wide);
  EXPECT_EQ(print_kernel(*wide), R"(field x : f64[2] grad x_grad
field n : i32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  <f64> $2 = const 0.10000000149011612
  <f64> $3 = stack alloc (max_size=4)
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f64> $6 = global ptr [x], index [$5] activate=true
    <f64> $7 = global load $6
    <*f64> $8 = alloca
    <f64> $9 : local store [$8 <- $7]
    <f64> $10 = mul $7 $2
    <i32> $11 = cast_value<i32> $10
    <f64> $12 = cast_value<f64> $11
  }
}
)");
  EXPECT_TRUE(verify(*wide).empty());
  EXPECT_EQ(wide->field(*wide->find_field("x_grad")).dtype, ScalarKind::f64);
  EXPECT_EQ(k->field(*k->find_field("x")).dtype, ScalarKind::f32);  // the original is untouched
}

TEST(Widen, BitCastsOfF32AreNotWidened) {
  auto k = parse(R"(kernel {
  <f32> $0 = const 1.5
  <i32> $1 = reinterpret_cast_bits<i32> $0
}
)");
  EXPECT_EQ(widen_f32_to_f64(*k), nullptr);
}

}  // namespace
}  // namespace pb::ir
