// The reference interpreter: arithmetic of every unary and binary op, casts, select.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "interp_test_util.h"

namespace pb::runtime::test {
namespace {

using ir::ScalarKind;
using ir::Value;

// out = OP(a), `result` as the printed target for casts (`cast_value<i32>`).
Value unary(const std::string& op, const std::string& type, const std::string& a, std::string result = "",
            const RunOptions& options = {}) {
  if (result.empty()) result = type;
  return run_text(fmt::format(R"(field out : {0}[]
kernel "ops" {{
  <{1}> $1 = const {2}
  <{0}> $2 = {3} $1
  <*{0}> $3 = global ptr [out], index [] activate=true
  $4 : global store [$3 <- $2]
}}
)",
                              result, type, a, op),
                  nullptr, options)
      .at("out");
}

// Defeats compile-time folding, which rounds correctly where the run-time libm may be 1 ulp off.
float runtime_float(float x) {
  volatile float v = x;
  return v;
}
double runtime_double(double x) {
  volatile double v = x;
  return v;
}

int64_t i32(const std::string& op, const std::string& a, const std::string& b) {
  return binary(op, "i32", a, b).as_i64();
}
float f32(const std::string& op, const std::string& a, const std::string& b) {
  return binary(op, "f32", a, b).as_f32();
}
float f32(const std::string& op, const std::string& a) { return unary(op, "f32", a).as_f32(); }
bool cmp(const std::string& op, const std::string& type, const std::string& a, const std::string& b) {
  Value v = binary(op, type, a, b, "u1");
  EXPECT_EQ(v.kind(), ScalarKind::u1);
  return v.as_bool();
}

TEST(InterpArith, IntegersWrapAround) {
  EXPECT_EQ(i32("add", "2147483647", "1"), -2147483648);
  EXPECT_EQ(i32("sub", "-2147483648", "1"), 2147483647);
  EXPECT_EQ(i32("mul", "65536", "65536"), 0);
  EXPECT_EQ(binary("sub", "u32", "0", "1").as_u64(), 4294967295u);
  EXPECT_EQ(binary("add", "i64", "9223372036854775807", "1").as_i64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(unary("neg", "i32", "-2147483648").as_i64(), -2147483648);
}

TEST(InterpArith, IntegerDivisionTruncatesFloordivFloorsModKeepsDividendSign) {
  EXPECT_EQ(i32("div", "-7", "2"), -3);
  EXPECT_EQ(i32("floordiv", "-7", "2"), -4);
  EXPECT_EQ(i32("floordiv", "7", "-2"), -4);
  EXPECT_EQ(i32("floordiv", "-8", "2"), -4);
  EXPECT_EQ(i32("floordiv", "7", "2"), 3);
  EXPECT_EQ(i32("mod", "-7", "2"), -1);  // IR mod is C's remainder (raw_mod)
  EXPECT_EQ(i32("mod", "7", "-2"), 1);
  EXPECT_EQ(i32("div", "-2147483648", "-1"), -2147483648);
  EXPECT_EQ(i32("mod", "-2147483648", "-1"), 0);
  EXPECT_EQ(binary("div", "u32", "4294967295", "2").as_u64(), 2147483647u);
  EXPECT_EQ(binary("mod", "u32", "4294967295", "10").as_u64(), 5u);
  EXPECT_EQ(binary("floordiv", "i64", "-9223372036854775808", "-1").as_i64(), std::numeric_limits<int64_t>::min());
}

TEST(InterpArith, IntegerDivisionByZeroIsAnErrorNamingTheStatement) {
  for (const char* op : {"div", "floordiv", "mod"}) {
    std::string msg;
    try {
      binary(op, "i32", "1", "0");
    } catch (const UserError& e) {
      msg = e.what();
    }
    EXPECT_CONTAINS(msg, "by zero");
    EXPECT_CONTAINS(msg, fmt::format("<i32> $3 = {} $1 $2", op));
    EXPECT_CONTAINS(msg, "kernel \"ops\"");
    EXPECT_CONTAINS(msg, "remedy");
  }
}

TEST(InterpArith, FloatDivisionByZeroIsIeee) {
  EXPECT_EQ(f32("div", "1", "0"), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f32("div", "-1", "0"), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f32("div", "0", "0")));
  EXPECT_TRUE(std::isnan(f32("mod", "1", "0")));
  EXPECT_EQ(f32("floordiv", "-7.5", "2"), -4.0f);
  EXPECT_EQ(f32("mod", "-7.5", "2"), -1.5f);
  EXPECT_EQ(f32("add", "0.1", "0.2"), 0.1f + 0.2f);
  EXPECT_EQ(binary("add", "f64", "0.1", "0.2").as_f64(), 0.1 + 0.2);
}

TEST(InterpArith, PowAndAtan2) {
  EXPECT_EQ(i32("pow", "3", "4"), 81);
  EXPECT_EQ(i32("pow", "2", "31"), -2147483648);  // wraps
  EXPECT_EQ(i32("pow", "-2", "3"), -8);
  EXPECT_EQ(i32("pow", "5", "0"), 1);
  EXPECT_EQ(f32("pow", "2", "0.5"), std::pow(runtime_float(2.0f), 0.5f));
  EXPECT_EQ(f32("atan2", "1", "-1"), std::atan2(runtime_float(1.0f), -1.0f));
  std::string msg;
  try {
    i32("pow", "2", "-1");
  } catch (const UserError& e) {
    msg = e.what();
  }
  EXPECT_CONTAINS(msg, "negative exponent");
  EXPECT_CONTAINS(msg, "pow $1 $2");
}

TEST(InterpArith, MinMaxIgnoreNanAndCompareUnsignedAsUnsigned) {
  EXPECT_EQ(f32("max", "nan", "1"), 1.0f);
  EXPECT_EQ(f32("min", "1", "nan"), 1.0f);
  EXPECT_EQ(f32("max", "-3", "2"), 2.0f);
  EXPECT_EQ(f32("min", "-3", "2"), -3.0f);
  EXPECT_EQ(i32("max", "-1", "2"), 2);
  EXPECT_EQ(i32("min", "-1", "2"), -1);
  EXPECT_EQ(binary("max", "u32", "4294967295", "1").as_u64(), 4294967295u);
}

TEST(InterpArith, ComparisonsAreOrderedAndYieldTheStatementType) {
  EXPECT_TRUE(cmp("cmp_lt", "f32", "1", "2"));
  EXPECT_FALSE(cmp("cmp_gt", "f32", "1", "2"));
  EXPECT_TRUE(cmp("cmp_le", "f32", "2", "2"));
  EXPECT_TRUE(cmp("cmp_ge", "f32", "2", "2"));
  EXPECT_TRUE(cmp("cmp_eq", "f32", "2", "2"));
  EXPECT_FALSE(cmp("cmp_eq", "f32", "nan", "nan"));
  EXPECT_FALSE(cmp("cmp_ne", "f32", "nan", "nan"));  // ordered, like the reference codegen
  EXPECT_TRUE(cmp("cmp_ne", "f32", "1", "2"));
  EXPECT_FALSE(cmp("cmp_lt", "f32", "nan", "1"));
  EXPECT_TRUE(cmp("cmp_lt", "i32", "-1", "0"));
  EXPECT_FALSE(cmp("cmp_lt", "u32", "4294967295", "0"));
  Value old_style = binary("cmp_lt", "i32", "1", "2", "i32");
  EXPECT_EQ(old_style.kind(), ScalarKind::i32);
  EXPECT_EQ(old_style.as_i64(), 1);
}

TEST(InterpArith, BitOpsAndShiftsMaskTheAmount) {
  EXPECT_EQ(i32("bit_and", "12", "10"), 8);
  EXPECT_EQ(i32("bit_or", "12", "10"), 14);
  EXPECT_EQ(i32("bit_xor", "12", "10"), 6);
  EXPECT_EQ(i32("bit_shl", "1", "31"), -2147483648);
  EXPECT_EQ(i32("bit_shl", "1", "33"), 2);  // amount taken modulo 32
  EXPECT_EQ(i32("bit_shl", "5", "32"), 5);
  EXPECT_EQ(i32("bit_shr", "-8", "1"), 2147483644);                      // logical
  EXPECT_EQ(i32("bit_sar", "-8", "1"), -4);                              // arithmetic
  EXPECT_EQ(binary("bit_sar", "u32", "2147483648", "31").as_u64(), 1u);  // unsigned: logical
  EXPECT_EQ(binary("bit_shl", "i64", "1", "40").as_i64(), int64_t{1} << 40);
  EXPECT_EQ(i32("logical_and", "2", "3"), 1);
  EXPECT_EQ(i32("logical_and", "2", "0"), 0);
  EXPECT_EQ(i32("logical_or", "0", "-5"), 1);
  EXPECT_EQ(i32("logical_or", "0", "0"), 0);
}

TEST(InterpArith, FloatUnaryOps) {
  EXPECT_EQ(f32("neg", "1.5"), -1.5f);
  EXPECT_EQ(f32("sqrt", "4"), 2.0f);
  EXPECT_TRUE(std::isnan(f32("sqrt", "-1")));
  EXPECT_EQ(f32("rsqrt", "4"), 0.5f);
  EXPECT_EQ(f32("sin", "0.7"), std::sin(runtime_float(0.7f)));
  EXPECT_EQ(f32("cos", "0.7"), std::cos(runtime_float(0.7f)));
  EXPECT_EQ(f32("tan", "0.7"), std::tan(runtime_float(0.7f)));
  EXPECT_EQ(f32("tanh", "0.7"), std::tanh(runtime_float(0.7f)));
  EXPECT_EQ(f32("asin", "0.7"), std::asin(runtime_float(0.7f)));
  EXPECT_EQ(f32("acos", "0.7"), std::acos(runtime_float(0.7f)));
  EXPECT_EQ(f32("exp", "0.7"), std::exp(runtime_float(0.7f)));
  EXPECT_EQ(f32("log", "0.7"), std::log(runtime_float(0.7f)));
  EXPECT_EQ(f32("log", "0"), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f32("abs", "-2.5"), 2.5f);
  EXPECT_EQ(f32("sgn", "-3"), -1.0f);
  EXPECT_EQ(f32("sgn", "3"), 1.0f);
  EXPECT_EQ(f32("sgn", "0"), 0.0f);
  EXPECT_EQ(f32("sgn", "nan"), 0.0f);
  EXPECT_EQ(f32("floor", "-1.5"), -2.0f);
  EXPECT_EQ(f32("ceil", "-1.5"), -1.0f);
  EXPECT_EQ(f32("round", "2.5"), 3.0f);  // half away from zero
  EXPECT_EQ(f32("round", "-2.5"), -3.0f);
  EXPECT_EQ(f32("round", "0.5"), 1.0f);
  EXPECT_EQ(unary("sin", "f64", "0.7").as_f64(), std::sin(runtime_double(0.7)));
  EXPECT_EQ(unary("logic_not", "f32", "0", "i32").as_i64(), 1);
}

TEST(InterpArith, IntegerUnaryOps) {
  EXPECT_EQ(unary("neg", "i32", "5").as_i64(), -5);
  EXPECT_EQ(unary("abs", "i32", "-5").as_i64(), 5);
  EXPECT_EQ(unary("abs", "i32", "-2147483648").as_i64(), -2147483648);
  EXPECT_EQ(unary("sgn", "i32", "-7").as_i64(), -1);
  EXPECT_EQ(unary("sgn", "i32", "0").as_i64(), 0);
  EXPECT_EQ(unary("sgn", "i64", "9").as_i64(), 1);
  EXPECT_EQ(unary("logic_not", "i32", "0").as_i64(), 1);
  EXPECT_EQ(unary("logic_not", "i32", "5").as_i64(), 0);
  EXPECT_EQ(unary("bit_not", "i32", "0").as_i64(), -1);
  EXPECT_EQ(unary("bit_not", "u32", "0").as_u64(), 4294967295u);
}

TEST(InterpArith, Casts) {
  EXPECT_EQ(unary("cast_value<i32>", "f32", "2.7", "i32").as_i64(), 2);
  EXPECT_EQ(unary("cast_value<i32>", "f32", "-2.7", "i32").as_i64(), -2);
  EXPECT_EQ(unary("cast_value<i32>", "f32", "1e10", "i32").as_i64(), 2147483647);  // clamped
  EXPECT_EQ(unary("cast_value<i32>", "f32", "nan", "i32").as_i64(), 0);
  EXPECT_EQ(unary("cast_value<f32>", "i32", "-3", "f32").as_f32(), -3.0f);
  EXPECT_EQ(unary("cast_value<f64>", "f32", "0.1", "f64").as_f64(), static_cast<double>(0.1f));
  EXPECT_TRUE(unary("cast_value<u1>", "f32", "0.5", "u1").as_bool());
  EXPECT_EQ(unary("cast_value<i32>", "i64", "4294967297", "i32").as_i64(), 1);
  EXPECT_EQ(unary("cast_value<i64>", "u32", "4294967295", "i64").as_i64(), 4294967295);
  EXPECT_EQ(unary("reinterpret_cast_bits<i32>", "f32", "1", "i32").as_i64(), 0x3f800000);
  EXPECT_EQ(unary("reinterpret_cast_bits<f32>", "i32", "1065353216", "f32").as_f32(), 1.0f);
  RunOptions f64;
  f64.f64 = true;  // bit casts see the declared 32-bit width even when f32 is computed as f64
  EXPECT_EQ(unary("reinterpret_cast_bits<i32>", "f32", "1", "i32", f64).as_i64(), 0x3f800000);
  EXPECT_EQ(unary("reinterpret_cast_bits<f32>", "i32", "1065353216", "f32", f64).as_f64(), 1.0);
}

TEST(InterpArith, SelectPicksByCondition) {
  auto text = [](const char* cond) {
    return fmt::format(R"(field out : f32[]
kernel {{
  <u1> $1 = const {}
  <f32> $2 = const 1.5
  <f32> $3 = const 2.5
  <f32> $4 = select($1, $2, $3)
  <*f32> $5 = global ptr [out], index [] activate=true
  $6 : global store [$5 <- $4]
}}
)",
                       cond);
  };
  EXPECT_EQ(run_text(text("true")).at("out").as_f32(), 1.5f);
  EXPECT_EQ(run_text(text("false")).at("out").as_f32(), 2.5f);
}

}  // namespace
}  // namespace pb::runtime::test
