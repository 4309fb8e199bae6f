// The nesting limit (ir/kernel.h kMaxNestingDepth): deep input is refused with a located error
// by the text parser, the JSON reader, the size-expression parser and the verifier, quickly and
// without recursion (100,000 nested ifs crashed verify, print and replay before).
#include <gtest/gtest.h>

#include <string>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/size_expr.h"
#include "ir/verifier.h"

namespace pb::ir {
namespace {

std::string nested_ifs(int n) {
  std::string t = "kernel {\n<u1> $0 = const true\n";
  for (int i = 1; i <= n; ++i) {
    t += '$';
    t += std::to_string(i);
    t += " : if $0 {\n";
  }
  for (int i = 0; i < n; ++i) t += "}\n";
  return t + "}\n";
}

std::string nested_json(int n) {
  std::string t = R"({"format": "passbench-ir", "version": 1, "fields": [], "spaces": [], "args": [], "body": [)";
  t += R"({"id": 0, "kind": "const", "type": "u1", "value": "true"})";
  for (int i = 1; i <= n; ++i) {
    if (i == 1) t += ", ";
    t += R"({"id": )";
    t += std::to_string(i);
    t += R"(, "kind": "if", "operands": [0], "then": [)";
  }
  for (int i = 0; i < n; ++i) t += "]}";
  return t + "]}";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Nesting, TextAtTheLimitParsesAndVerifiesOnePastIsLocated) {
  auto k = parse_kernel(nested_ifs(kMaxNestingDepth));
  EXPECT_TRUE(verify(*k).empty());
  EXPECT_EQ(nesting_depth(k->root()), kMaxNestingDepth);
  std::string e = error_of([] { parse_kernel(nested_ifs(kMaxNestingDepth + 1), "deep.chi"); });
  // Located at the statement that opens the block one level too deep (line 2 + 257).
  EXPECT_NE(e.find("deep.chi:" + std::to_string(kMaxNestingDepth + 3) + ":1: error"), std::string::npos) << e;
  EXPECT_NE(e.find("blocks nest more than 256 deep"), std::string::npos) << e;
  e = error_of([] { parse_kernel(nested_ifs(100000), "deeper.chi"); });
  EXPECT_NE(e.find("blocks nest more than 256 deep"), std::string::npos) << e;
}

TEST(Nesting, JsonAtTheLimitReadsOnePastIsAnErrorWithItsPath) {
  auto k = from_json(nlohmann::json::parse(nested_json(kMaxNestingDepth)));
  EXPECT_EQ(nesting_depth(k->root()), kMaxNestingDepth);
  for (int n : {kMaxNestingDepth + 1, 100000}) {
    std::string e = error_of([&] { from_json(nlohmann::json::parse(nested_json(n))); });
    EXPECT_NE(e.find("blocks nest more than 256 deep"), std::string::npos) << e.substr(0, 300);
    EXPECT_NE(e.find("$.body[1].then[0]"), std::string::npos) << e.substr(0, 300);
  }
}

// A kernel built through the API is checked by the verifier, without recursing.
TEST(Nesting, VerifierRefusesABuiltKernelTooDeep) {
  Kernel k;
  Builder b(k);
  Stmt* c = b.constant(Value::make_bool(true));
  for (int i = 0; i < 2 * kMaxNestingDepth; ++i) {
    IfStmt* s = b.if_(c);
    b.set_insertion_point_end(*s->true_block);
  }
  auto errors = verify(k);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].format().find("blocks nest more than 256 deep"), std::string::npos) << errors[0].format();
}

TEST(Nesting, SizeExpressionsAreBoundedInDepthAndLength) {
  std::string parens = std::string(100000, '(') + "1" + std::string(100000, ')');
  EXPECT_NE(error_of([&] { parse_size_expr(parens); }).find("nests more than 256 deep"), std::string::npos);
  std::string chain = "1";
  for (int i = 0; i < 100000; ++i) chain += " + 1";
  EXPECT_NE(error_of([&] { parse_size_expr(chain); }).find("more than 4096 terms"), std::string::npos);
  EXPECT_EQ(to_string(*parse_size_expr(std::string(200, '(') + "n[]" + std::string(200, ')'))), "n[]");
}

}  // namespace
}  // namespace pb::ir
