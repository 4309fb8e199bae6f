// Every statement kind of the kind list appears in one of the sample kernels of
// tests/every_kind_samples.h, and each sample prints, parses back to the same text, and survives
// JSON. A kind added to ir/stmt_kinds.h without a sample there fails this test.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "tests/every_kind_samples.h"

namespace pb::ir {
namespace {

TEST(EveryKind, HasASampleThatPrintsParsesBackAndSurvivesJson) {
  std::set<StmtKind> seen;
  for (const char* text : {test::kLowered, test::kOffloaded, test::kInterpreterOnly, test::kReadOnly, test::kTensor,
                           test::kMesh, test::kMeshOffloaded}) {
    auto k = parse_kernel(text, "sample.chi");
    EXPECT_TRUE(verify(*k).empty()) << text;
    std::string printed = print_kernel(*k);
    EXPECT_EQ(printed, text);
    EXPECT_EQ(print_kernel(*parse_kernel(printed, "printed.chi")), printed);
    EXPECT_EQ(print_kernel(*from_json(nlohmann::json::parse(to_json(*k).dump()))), printed);
    walk(k->root(), [&](Stmt& s) { seen.insert(s.kind()); });
  }
#define PB_X(Name, text, traits) \
  EXPECT_TRUE(seen.count(StmtKind::Name)) << "no sample holds a " << text << " statement";
  PB_STMT_KINDS(PB_X)
#undef PB_X
}

}  // namespace
}  // namespace pb::ir
