// Stack size expressions: text round trip, folding, evaluation, and the `size=` attribute of
// `stack alloc` through the parser, printer, JSON and verifier.
#include "ir/size_expr.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace pb::ir {
namespace {

std::string reprint(const std::string& text) { return to_string(*parse_size_expr(text)); }

std::string parse_error(const std::string& text) {
  try {
    parse_size_expr(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

SizeExprPtr c(int64_t v) { return SizeExpr::constant(v); }
SizeExprPtr n() { return SizeExpr::field("n", {}); }

class SizeTextRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(SizeTextRoundTrip, PrintsBackUnchanged) { EXPECT_EQ(reprint(GetParam()), GetParam()); }

INSTANTIATE_TEST_SUITE_P(Forms, SizeTextRoundTrip,
                         ::testing::Values("7", "2 + n[]", "arg(0) * 3", "m[1, 2] - arg(1)", "max(n[], 4)",
                                           "(2 + n[]) * 3", "2 + (n[] + m[])", "n[] - (1 - 2)", "2 * (3 * n[])",
                                           "S9place<i32>[] + 1", "max(i3 in range(0, n[]): m[i3 + 1] - m[i3])",
                                           "max(i in range(1, 4): max(j in range(0, i): i * j))",
                                           "n[] * max(i5 in range(0, n[]): n[] - i5)", "min(6 * n[], 4)",
                                           "max(i in range(0, min(n[], 4)): m[i])", "n[] // 2", "n[] % 3 + 1",
                                           "(n[] + 1) // 2", "max(i in range(0, 6): m[i // 2, i % 2])", "arg(2)[1]",
                                           "arg(0)[] + arg(1)[n[], 0]", "2 * n[] // 3"));

TEST(SizeText, ParenthesesFollowTheTree) {
  EXPECT_EQ(to_string(*SizeExpr::binary(SizeOp::Mul, SizeExpr::binary(SizeOp::Add, c(1), c(2)), c(3))), "(1 + 2) * 3");
  EXPECT_EQ(to_string(*SizeExpr::binary(SizeOp::Sub, c(5), SizeExpr::binary(SizeOp::Sub, c(3), c(1)))), "5 - (3 - 1)");
  EXPECT_EQ(to_string(*SizeExpr::binary(SizeOp::Sub, SizeExpr::binary(SizeOp::Sub, c(5), c(3)), c(1))), "5 - 3 - 1");
  EXPECT_EQ(reprint("  2+n[ ]*arg( 0 ) "), "2 + n[] * arg(0)");
}

TEST(SizeText, ErrorsAreLocated) {
  EXPECT_NE(parse_error("n + 1").find("'n' is not a bound variable"), std::string::npos);
  EXPECT_NE(parse_error("n + 1").find("n[]"), std::string::npos);  // the remedy shows a field load
  EXPECT_NE(parse_error("foo(1)").find("unknown size function 'foo'"), std::string::npos);
  EXPECT_NE(parse_error("2 +").find("expected a size expression"), std::string::npos);
  EXPECT_NE(parse_error("n[] 3").find("unexpected '3'"), std::string::npos);
  EXPECT_NE(parse_error("max(i in range(0, 2) i)").find("expected ':'"), std::string::npos);
  EXPECT_NE(parse_error("2 + -3").find(":1:5: error"), std::string::npos);
  EXPECT_NE(parse_error("n[] // 0").find("expected a positive integer after '//'"), std::string::npos);
  EXPECT_NE(parse_error("n[] % m[]").find("expected a positive integer after '%'"), std::string::npos);
}

TEST(SizeText, DivisionAndRemainderFold) {
  EXPECT_EQ(to_string(*fold_floordiv(c(7), 2)), "3");
  EXPECT_EQ(to_string(*fold_mod(c(7), 2)), "1");
  EXPECT_EQ(to_string(*fold_floordiv(n(), 1)), "n[]");
  EXPECT_EQ(to_string(*fold_mod(n(), 1)), "0");
  // The maximum of i // 2 over a range is at its end (non-decreasing); of i % 2 it is not.
  auto half = SizeExpr::binary(SizeOp::FloorDiv, SizeExpr::var("i"), c(2));
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), half)), "(n[] - 1) // 2");
  auto rem = SizeExpr::binary(SizeOp::Mod, SizeExpr::var("i"), c(2));
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), rem)), "max(i in range(0, n[]): i % 2)");
}

TEST(SizeFold, ConstantsAndIdentities) {
  EXPECT_EQ(to_string(*fold_add(c(2), n())), "2 + n[]");
  EXPECT_EQ(to_string(*fold_add(n(), c(2))), "2 + n[]");
  EXPECT_EQ(to_string(*fold_add(c(1), fold_add(c(2), n()))), "3 + n[]");
  EXPECT_EQ(to_string(*fold_add(n(), c(0))), "n[]");
  EXPECT_EQ(to_string(*fold_mul(n(), c(1))), "n[]");
  EXPECT_EQ(to_string(*fold_mul(n(), c(3))), "3 * n[]");
  EXPECT_EQ(to_string(*fold_mul(c(0), n())), "0");
  EXPECT_EQ(to_string(*fold_sub(c(5), c(7))), "0");
  EXPECT_EQ(to_string(*fold_sub(n(), n())), "0");
  EXPECT_EQ(to_string(*fold_max(c(0), n())), "n[]");
  EXPECT_EQ(to_string(*fold_max(c(3), c(9))), "9");
  EXPECT_EQ(to_string(*fold_min(c(3), c(9))), "3");
  EXPECT_EQ(to_string(*fold_min(c(0), n())), "0");
  EXPECT_EQ(to_string(*fold_min(n(), n())), "n[]");
  EXPECT_EQ(to_string(*fold_min(n(), c(4))), "min(n[], 4)");
}

TEST(SizeFold, MaxOverRangeOfAMonotoneBodyIsTheBodyAtTheEnd) {
  auto i = SizeExpr::var("i");
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), fold_mul(c(2), i))), "2 * (n[] - 1)");
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), c(4))), "4");
  // n[] - i decreases in i; m[i] is not monotone: both stay maxima.
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), fold_sub(n(), i))), "max(i in range(0, n[]): n[] - i)");
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), SizeExpr::field("m", {i}))),
            "max(i in range(0, n[]): m[i])");
  EXPECT_EQ(to_string(*fold_max_over_range("i", c(0), n(), fold_min(i, c(3)))), "min(n[] - 1, 3)");  // min is monotone
}

struct FakeState {
  std::map<int, int64_t> args;
  std::map<std::string, std::vector<int64_t>> fields;  // 1-d or 0-d
  SizeEnv env() {
    SizeEnv e;
    e.arg = [this](int i) { return args.at(i); };
    e.field = [this](const std::string& f, std::span<const int64_t> idx) {
      const auto& data = fields.at(f);
      size_t at = idx.empty() ? 0 : static_cast<size_t>(idx[0]);
      if (at >= data.size()) throw UserError("index out of bounds");
      return data[at];
    };
    return e;
  }
};

int64_t eval(const std::string& text, FakeState& st) { return evaluate(*parse_size_expr(text), st.env()); }

TEST(SizeEval, ArithmeticClampsAtZero) {
  FakeState st{{{0, 5}, {1, -4}}, {{"n", {3}}, {"m", {1, 4, 9, 10}}}};
  EXPECT_EQ(eval("2 + n[] * arg(0)", st), 17);
  EXPECT_EQ(eval("n[] - arg(0)", st), 0);  // 3 - 5 clamps
  EXPECT_EQ(eval("arg(1) + 1", st), 1);    // a negative argument reads as 0
  EXPECT_EQ(eval("max(n[], arg(0))", st), 5);
  EXPECT_EQ(eval("min(n[], arg(0))", st), 3);
  EXPECT_EQ(eval("min(arg(1), n[])", st), 0);  // the negative argument reads as 0 first
  EXPECT_EQ(eval("max(i in range(0, 3): m[i + 1] - m[i])", st), 5);
  EXPECT_EQ(eval("max(i in range(2, 2): m[i])", st), 0);  // empty range
  EXPECT_EQ(eval("max(i in range(0, 3): max(j in range(0, i): i * j))", st), 2);
  EXPECT_EQ(eval("arg(0) // 2", st), 2);
  EXPECT_EQ(eval("arg(0) % 3", st), 2);
  EXPECT_EQ(eval("max(i in range(0, 4): m[i // 2 + i % 2])", st), 9);
}

TEST(SizeEval, NdarrayElements) {
  FakeState st;
  SizeEnv env = st.env();
  env.ndarray = [](int arg, std::span<const int64_t> idx) -> int64_t {
    return arg == 2 && idx.size() == 1 ? 10 + idx[0] : -1;
  };
  EXPECT_EQ(evaluate(*parse_size_expr("max(i in range(0, 3): arg(2)[i])"), env), 12);
  EXPECT_EQ(evaluate(*parse_size_expr("arg(3)[] + 1"), env), 1);  // negative reads as 0
}

TEST(SizeEval, SaturatesAndLimitsIterations) {
  FakeState st;
  int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(eval("9223372036854775807 + 1", st), big);
  EXPECT_EQ(eval("4611686018427387904 * 4", st), big);
  EXPECT_THROW(eval("max(i in range(0, 100000000): i)", st), UserError);
  FakeState oob{{}, {{"m", {1}}}};
  EXPECT_THROW(eval("m[3]", oob), UserError);
  EXPECT_THROW(evaluate(*SizeExpr::var("free"), oob.env()), UserError);
}

const char* kSized = R"(field n : i32[]
field m : i32[4]
arg 0 : i32
kernel {
  <f32> $0 = stack alloc (max_size=0, size=2 + n[] * arg(0))
  <f32> $1 = stack alloc (max_size=0, size=max(i9 in range(0, 3): m[i9 + 1] - m[i9]))
  <i32> $2 = stack alloc (max_size=4)
  <i32> $3 = argload[0]
}
)";

TEST(SizeAttribute, PrintsParsesAndRoundTripsThroughJson) {
  auto k = parse_kernel(kSized);
  EXPECT_EQ(print_kernel(*k), kSized);
  EXPECT_TRUE(verify(*k).empty());
  auto j = to_json(*k);
  EXPECT_EQ(j["body"][0]["size"], "2 + n[] * arg(0)");
  EXPECT_FALSE(j["body"][2].contains("size"));
  EXPECT_EQ(print_kernel(*from_json(nlohmann::json::parse(j.dump()))), kSized);
  EXPECT_EQ(print_kernel(*k->clone()), kSized);
}

TEST(SizeAttribute, ErrorsAreLocatedInTheLine) {
  try {
    parse_kernel("kernel {\n  <f32> $0 = stack alloc (max_size=0, size=2 + n)\n}\n", "k.chi");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().line, 2);
    EXPECT_EQ(e.diagnostic().column, 48);
    EXPECT_NE(e.diagnostic().message.find("'n' is not a bound variable"), std::string::npos);
  }
  nlohmann::json bad = to_json(*parse_kernel(kSized));
  bad["body"][0]["size"] = "2 +";
  try {
    from_json(bad);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("$.body[0].size"), std::string::npos);
  }
}

std::string verify_text(const std::string& text) {
  std::string out;
  for (const auto& e : verify(*parse_kernel(text))) out += e.format() + "\n";
  return out;
}

TEST(SizeAttribute, VerifierChecksFieldsArgsAndMaxSize) {
  std::string head = "field n : i32[]\nfield f : f32[]\nfield m : i32[4]\nkernel {\n";
  auto stack = [&](const std::string& attrs) { return head + "  <f32> $0 = stack alloc (" + attrs + ")\n}\n"; };
  EXPECT_EQ(verify_text(stack("max_size=0, size=n[]")), "");
  EXPECT_NE(verify_text(stack("max_size=0, size=q[]")).find("size reads field 'q', which does not exist"),
            std::string::npos);
  EXPECT_NE(verify_text(stack("max_size=0, size=f[]")).find("sizes read integer fields"), std::string::npos);
  EXPECT_NE(verify_text(stack("max_size=0, size=m[]")).find("with 0 index(es), but it has 1 dimension(s)"),
            std::string::npos);
  EXPECT_NE(
      verify_text(stack("max_size=0, size=arg(2)")).find("argument 2, which the kernel neither declares nor loads"),
      std::string::npos);
  EXPECT_NE(verify_text(stack("max_size=3, size=n[]")).find("must have max_size=0"), std::string::npos);
}

}  // namespace
}  // namespace pb::ir
