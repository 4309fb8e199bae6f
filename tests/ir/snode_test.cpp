// Sparse and nested index spaces in the header: `pointer`, `bitmasked`, `dynamic` and `dense`
// spaces with `in PARENT` print back, survive JSON, and a nesting that does not split into the
// parent's cells is a located error in text and a clear one in JSON.
#include "ir/snode.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace pb::ir {
namespace {

constexpr const char* kTree = R"(pointer S1pointer : [4]
dense S2dense : [16] in S1pointer
bitmasked S3bitmasked : [4, 2] in S1pointer
dense S4dense : [2]
dynamic S5dynamic : [2, 8] in S4dense
field x : f32[16] in S2dense
kernel {
}
)";

std::string parse_error(const std::string& text) {
  try {
    parse_kernel(text, "h.chi");
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(SNodeHeader, KindsAndParentsPrintBackAndSurviveJson) {
  auto k = parse_kernel(kTree);
  EXPECT_EQ(print_kernel(*k), kTree);
  ASSERT_EQ(k->spaces.size(), 5u);
  EXPECT_EQ(k->spaces[2].kind, SNodeKind::bitmasked);
  EXPECT_EQ(k->spaces[2].parent, "S1pointer");
  EXPECT_EQ(print_kernel(*from_json(to_json(*k))), kTree);
  EXPECT_TRUE(is_sparse_snode(*k, "S1pointer"));
  EXPECT_FALSE(is_sparse_snode(*k, "S2dense"));
  EXPECT_TRUE(is_sparse_snode(*k, "S9pointer"));  // undeclared: by the reference's name
  EXPECT_FALSE(is_sparse_snode(*k, "S3place<f32>"));
  auto use = first_sparse_use(*k);
  ASSERT_TRUE(use.has_value());
  EXPECT_EQ(*use, "index space 'S1pointer' is pointer");
}

TEST(SNodeHeader, ANestingThatDoesNotSplitIsALocatedError) {
  EXPECT_NE(parse_error("pointer P : [4]\ndense D : [10] in P\nkernel {\n}\n")
                .find("h.chi:2:19: error: index space 'D' [10] does not split into the cells of its parent 'P' [4]"),
            std::string::npos);
  EXPECT_NE(parse_error("dense D : [8] in P\nkernel {\n}\n").find("'P', which is not declared before it"),
            std::string::npos);
  EXPECT_NE(
      parse_error("pointer P : [4, 4]\ndense D : [8] in P\nkernel {\n}\n").find("fewer dimensions than its parent"),
      std::string::npos);
}

TEST(SNodeHeader, JsonRefusesAnUnknownKindAndABadNesting) {
  auto j = to_json(*parse_kernel(kTree));
  auto bad_kind = j;
  bad_kind["spaces"][0]["kind"] = "hash";
  try {
    from_json(bad_kind);
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kind 'hash'"), std::string::npos) << e.what();
  }
  auto bad_parent = j;
  bad_parent["spaces"][1]["parent"] = "S4dense";  // declared after it
  try {
    from_json(bad_parent);
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not declared before it"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pb::ir
