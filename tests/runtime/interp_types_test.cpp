// The narrow primitive types (f16, i8, i16, u8, u16) and quant integers: their arithmetic in the
// interpreter, their inputs and outputs, and the clear errors where they are not run.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "interp_test_util.h"
#include "ir/printer.h"

namespace pb::runtime::test {
namespace {

using ir::ScalarKind;
using ir::Value;

nlohmann::json data(nlohmann::json values) { return nlohmann::json{{"data", std::move(values)}}; }

// out = OP<to>(a) for a cast, or OP(a) with `to` the result type.
Value unary(const std::string& op, const std::string& from, const std::string& a, const std::string& to) {
  return run_text(fmt::format(R"(field out : {0}[]
kernel "ops" {{
  <{1}> $1 = const {2}
  <{0}> $2 = {3} $1
  <*{0}> $3 = global ptr [out], index [] activate=true
  $4 : global store [$3 <- $2]
}}
)",
                              to, from, a, op))
      .at("out");
}

TEST(InterpNarrowTypes, IntegersWrapAtTheirWidth) {
  EXPECT_EQ(binary("add", "i8", "127", "1").as_i64(), -128);
  EXPECT_EQ(binary("add", "u8", "255", "1").as_i64(), 0);
  EXPECT_EQ(binary("sub", "u8", "0", "1").as_i64(), 255);
  EXPECT_EQ(binary("add", "i16", "32767", "1").as_i64(), -32768);
  EXPECT_EQ(binary("mul", "u16", "256", "256").as_i64(), 0);
  EXPECT_EQ(binary("mul", "i16", "300", "300").as_i64(), static_cast<int16_t>(90000));
  EXPECT_EQ(binary("bit_shl", "i8", "1", "7").as_i64(), -128);
  EXPECT_EQ(binary("bit_shr", "i8", "-128", "7").as_i64(), 1);   // logical: the 8 bits shift
  EXPECT_EQ(binary("bit_sar", "i8", "-128", "7").as_i64(), -1);  // arithmetic: the sign fills
  EXPECT_EQ(binary("div", "i8", "-128", "-1").as_i64(), -128);   // INT8_MIN / -1 wraps
  EXPECT_EQ(binary("floordiv", "i16", "-7", "2").as_i64(), -4);
  EXPECT_EQ(binary("mod", "u8", "200", "7").as_i64(), 4);
  EXPECT_EQ(binary("max", "u8", "200", "100").as_i64(), 200);  // unsigned compare
  EXPECT_EQ(binary("max", "i8", "-56", "100").as_i64(), 100);
  EXPECT_EQ(binary("cmp_lt", "u16", "40000", "1", "u1").as_bool(), false);
  EXPECT_EQ(binary("cmp_lt", "i16", "-20000", "1", "u1").as_bool(), true);
  EXPECT_EQ(binary("add", "u8", "200", "100").kind(), ScalarKind::u8);
}

TEST(InterpNarrowTypes, CastsTruncateAndExtend) {
  EXPECT_EQ(unary("cast_value<u8>", "i32", "300", "u8").as_i64(), 44);
  EXPECT_EQ(unary("cast_value<u16>", "i32", "-1", "u16").as_i64(), 65535);
  EXPECT_EQ(unary("cast_value<i32>", "i8", "-5", "i32").as_i64(), -5);  // sign-extends
  EXPECT_EQ(unary("cast_value<u32>", "u8", "250", "u32").as_i64(), 250);
  EXPECT_EQ(unary("cast_value<i16>", "f32", "-3.75", "i16").as_i64(), -3);
  EXPECT_EQ(unary("reinterpret_cast_bits<u8>", "i8", "-1", "u8").as_i64(), 255);
  EXPECT_EQ(unary("reinterpret_cast_bits<i16>", "f16", "1", "i16").as_i64(), 0x3c00);
  EXPECT_TRUE(std::isinf(unary("reinterpret_cast_bits<f16>", "u16", "31744", "f16").as_f64()));  // 0x7c00
}

TEST(InterpNarrowTypes, HalfRoundsEveryResultToHalfPrecision) {
  // 2049 is not a half: it rounds to even (2048); 2048 + 1 stays 2048.
  EXPECT_EQ(binary("add", "f16", "2048", "1").as_f64(), 2048.0);
  EXPECT_EQ(binary("add", "f16", "2048", "3").as_f64(), 2052.0);
  EXPECT_EQ(binary("mul", "f16", "0.1", "1").as_f64(), 0.0999755859375);  // the half nearest 0.1
  EXPECT_TRUE(std::isinf(binary("mul", "f16", "300", "300").as_f64()));   // beyond 65504
  EXPECT_EQ(binary("div", "f16", "1", "3").as_f64(), 0.333251953125);
  EXPECT_EQ(unary("sqrt", "f16", "2", "f16").as_f64(), 1.4140625);
  EXPECT_EQ(unary("cast_value<f16>", "f32", "65519", "f16").as_f64(), 65504.0);
  EXPECT_TRUE(std::isinf(unary("cast_value<f16>", "f32", "65520", "f16").as_f64()));
  EXPECT_EQ(unary("cast_value<f16>", "f64", "5.960464477539063e-08", "f16").as_f64(), std::ldexp(1.0, -24));
  EXPECT_EQ(unary("cast_value<f32>", "f16", "0.1", "f32").as_f32(), 0.0999755859375f);
  EXPECT_EQ(binary("cmp_gt", "f16", "2049", "2048", "u1").as_bool(), false);  // equal after rounding
}

TEST(InterpNarrowTypes, ConstantsPrintAsTheReferenceDoes) {
  // The reference prints an f16 constant with the f32 printer of the value it holds.
  auto k = ir::parse_kernel("kernel {\n  <f16> $1 = const 0.1\n  <i8> $2 = const -128\n  <u16> $3 = const 65535\n}\n");
  std::string text = ir::print_kernel(*k);
  EXPECT_CONTAINS(text, "<f16> $1 = const 0.099975586");
  EXPECT_CONTAINS(text, "<i8> $2 = const -128");
  EXPECT_CONTAINS(text, "<u16> $3 = const 65535");
  EXPECT_EQ(ir::print_kernel(*ir::parse_kernel(text)), text);
}

TEST(InterpNarrowTypes, InputsAndOutputsOfNarrowFields) {
  const std::string text = R"(field a : f16[2]
field b : i8[2]
field c : u16[2]
kernel {
  <i32> $15 = const 0
  <i32> $16 = const 2
  $1 : for in range($15, $16) block_dim=adaptive {
    <i32> $2 = loop $1 index 0
    <*f16> $3 = global ptr [a], index [$2] activate=true
    <f16> $4 = global load $3
    <f16> $5 = add $4 $4
    $6 : global store [$3 <- $5]
    <*i8> $7 = global ptr [b], index [$2] activate=true
    <i8> $8 = global load $7
    <i8> $9 = mul $8 $8
    $10 : global store [$7 <- $9]
    <*u16> $11 = global ptr [c], index [$2] activate=true
    <u16> $12 = global load $11
    <u16> $13 = add $12 $12
    $14 : global store [$11 <- $13]
  }
}
)";
  Ran r = run_text(text, {{"fields", {{"a", data({0.1, 40000})}, {"b", data({12, -11})}, {"c", data({40000, 7})}}}});
  EXPECT_EQ(r.at("a", 0).as_f64(), 0.199951171875);  // 0.1 read as a half, doubled
  EXPECT_TRUE(std::isinf(r.at("a", 1).as_f64()));    // 40000 is a half; 80000 is not
  EXPECT_EQ(r.at("b", 0).as_i64(), static_cast<int8_t>(144));
  EXPECT_EQ(r.at("b", 1).as_i64(), 121);
  EXPECT_EQ(r.at("c", 0).as_i64(), 80000 - 65536);
  EXPECT_EQ(r.at("c", 1).as_i64(), 14);

  EXPECT_CONTAINS(run_error(text, {{"fields", {{"b", data({200, 0})}}}}), "200 is out of range for i8");
  EXPECT_CONTAINS(run_error(text, {{"fields", {{"c", data({-1, 0})}}}}), "-1 is out of range for u16");
  EXPECT_CONTAINS(run_error(text, {{"fields", {{"a", data({70000, 0})}}}}), "70000 is out of range for f16");
}

TEST(InterpNarrowTypes, F64ModeComputesHalfInDouble) {
  // Gradient checks run in f64 mode: an f16 kernel is then computed in double precision.
  RunOptions o;
  o.f64 = true;
  Ran r = run_text(
      "field out : f16[]\nkernel {\n  <f16> $1 = const 2048\n  <f16> $2 = const 1\n"
      "  <f16> $3 = add $1 $2\n  <*f16> $4 = global ptr [out], index [] activate=true\n"
      "  $5 : global store [$4 <- $3]\n}\n",
      nullptr, o);
  EXPECT_EQ(r.at("out").as_f64(), 2049.0);
}

// The public dump quadrants_cfg_quant_store.chi stores into a 4-bit signed quant integer.
const char* kQuantStore = R"(field v : i32[]
kernel {
  <i32> $1 = argload[0]
  <i32> $2 = const 0
  <*qi4> $4 = global ptr [S3place<qi4><bit>], index [$2] activate=false
  $5 : global store [$4 <- $1]
  <i32> $6 = global load $4
  <*i32> $7 = global ptr [v], index [] activate=true
  $8 : global store [$7 <- $6]
  <*qu3> $9 = global ptr [S4place<qu3><bit>], index [$2] activate=false
  <u32> $11 = cast_value<u32> $1
  <u32> $10 = atomic add($9, $11)
}
)";

TEST(InterpQuant, QuantIntegersKeepTheirLowBits) {
  auto value = [](int64_t x) {
    Ran r = run_text(kQuantStore, {{"args", nlohmann::json::array({x})},
                                   {"fields",
                                    {{"S3place<qi4><bit>", data(nlohmann::json::array({0}))},
                                     {"S4place<qu3><bit>", data(nlohmann::json::array({6}))}}}});
    return std::pair{r.at("v").as_i64(), r.at("S4place<qu3><bit>").as_i64()};
  };
  using P = std::pair<int64_t, int64_t>;
  EXPECT_EQ(value(7), P(7, 5));       // 6 + 7 = 13 keeps 3 bits: 5
  EXPECT_EQ(value(8), P(-8, 6));      // qi4 holds -8..7; 6 + 8 = 14 -> 6
  EXPECT_EQ(value(233333), P(5, 3));  // the dump's constant: 0x38f75 -> 5
  EXPECT_EQ(value(-1), P(-1, 5));
}

TEST(InterpQuant, OtherQuantTypesAreReadButRefusedWhenRun) {
  const std::string text = R"(kernel {
  <i32> $1 = const 0
  <*qfx(d=qi8 c=f32 s=0.1)> $2 = global ptr [S3place<qfx>], index [$1] activate=false
  <f32> $3 = global load $2
}
)";
  auto k = ir::parse_kernel(text);
  EXPECT_EQ(ir::print_kernel(*k), ir::print_kernel(*ir::parse_kernel(ir::print_kernel(*k))));
  EXPECT_CONTAINS(ir::print_kernel(*k), "<*qfx(d=qi8 c=f32 s=0.1)> $2 = global ptr");
  std::string e = run_error(text, {{"fields", {{"S3place<qfx>", data(nlohmann::json::array({0}))}}}});
  EXPECT_CONTAINS(e, "uses the quant type qfx(d=qi8 c=f32 s=0.1), which passbench reads");
  EXPECT_CONTAINS(e, "<*qfx(d=qi8 c=f32 s=0.1)> $2 = global ptr");
}

}  // namespace
}  // namespace pb::runtime::test
