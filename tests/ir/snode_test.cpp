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
  bad_kind["spaces"][0]["kind"] = "quant_array";
  try {
    from_json(bad_kind);
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kind 'quant_array'"), std::string::npos) << e.what();
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

TEST(SNodeHeader, HashSpacesPrintBackAsTheyAreDeclared) {
  constexpr const char* kHash = "hash S1hash : [8]\ndense S2dense : [32] in S1hash\nkernel {\n}\n";
  auto k = parse_kernel(kHash);
  EXPECT_EQ(k->spaces[0].kind, SNodeKind::hash);
  EXPECT_EQ(print_kernel(*k), kHash);
  EXPECT_EQ(print_kernel(*from_json(to_json(*k))), kHash);
  EXPECT_TRUE(is_sparse_snode(*k, "S1hash"));
}

// The form of an SNode op before lower_access: a global ptr to the SNode's cell.
constexpr const char* kCellPtr = R"(pointer S1pointer : [4]
dense S2dense : [16] in S1pointer
field x : f32[16] in S2dense
kernel {
  <i32> $0 = const 2
  <*gen> $1 = global ptr [S1pointer], index [$0] activate=true
  <u1> $2 = is_active [S1pointer] ptr = $1
  <*gen> $3 = global ptr [S9pointer], index [$0] activate=false
  <i32> $4 = activate [S9pointer] ptr = $3
}
)";

TEST(SNodePtr, AGlobalPtrToAnSNodeIsReadPrintedBackAndSurvivesJson) {
  auto k = parse_kernel(kCellPtr);
  EXPECT_EQ(print_kernel(*k), kCellPtr);
  EXPECT_EQ(print_kernel(*from_json(to_json(*k))), kCellPtr);
  EXPECT_EQ(k->fields().size(), 1u);  // neither SNode became a field
  const auto* p = dyn_cast<SNodePtrStmt>(k->root().front()->next());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->snode, "S1pointer");
  EXPECT_TRUE(p->type.gen);
  // A place's name carries its type: still a field.
  auto place = parse_kernel("kernel {\n  <i32> $0 = const 2\n  <*gen> $1 = global ptr [S3place<f32>], index [$0]\n}\n");
  EXPECT_NE(place->find_field("S3place<f32>"), std::nullopt);
}

TEST(SNodePtr, JsonRefusesAnSNodePtrThatNamesAField) {
  auto j = to_json(*parse_kernel(kCellPtr));
  auto& stmt = j["body"][1];
  ASSERT_EQ(stmt["kind"], "snode_ptr");
  for (const char* name : {"x", "S3place<f32>"}) {
    auto bad = j;
    bad["body"][1]["snode"] = name;
    try {
      from_json(bad);
      ADD_FAILURE() << name << " accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("names a field (a place), not a container SNode"), std::string::npos)
          << e.what();
    }
  }
}

// taichi's lowering of x[i] for ti.root.pointer(ti.i, 4).dense(ti.i, 4).place(x), pasted without
// its header; and of l[i, j] for ti.root.dense(ti.i, 2).dynamic(ti.j, 8).place(l).
constexpr const char* kChains = R"(kernel {
  $0 = offloaded range_for(0, 16) grid_dim=0 block_dim=32
  body {
    <i32> $1 = loop $0 index 0
    <*gen> $2 = get root nullptr
    <i32> $3 = bit_extract($1) bit_range=[2, 4)
    <i32> $4 = linearized(ind {$3}, stride {4})
    <*gen> $5 = [S1pointer][pointer]::lookup($2, $4) activate = true
    <*gen> $6 = get child [S1pointer->S2dense] $5
    <i32> $7 = bit_extract($1) bit_range=[0, 2)
    <i32> $8 = linearized(ind {$7}, stride {4})
    <*gen> $9 = [S2dense][dense]::lookup($6, $8) activate = false
    <*f32> $10 = get child [S2dense->S3place<f32>] $9
    <f32> $11 = const 1
    $12 : global store [$10 <- $11]
  }
  $13 = offloaded range_for(0, 2) grid_dim=0 block_dim=32
  body {
    <i32> $14 = loop $13 index 0
    <i32> $15 = const 3
    <*gen> $16 = get root nullptr
    <i32> $17 = linearized(ind {$14}, stride {2})
    <*gen> $18 = [S4dense][dense]::lookup($16, $17) activate = false
    <*gen> $19 = get child [S4dense->S5dynamic] $18
    <i32> $20 = linearized(ind {$15}, stride {8})
    <*gen> $21 = [S5dynamic][dynamic]::lookup($19, $20) activate = true
    <*i32> $22 = get child [S5dynamic->S6place<i32>] $21
    $23 : global store [$22 <- $15]
  }
}
)";

TEST(ChainLayout, AHeaderlessDumpDeclaresTheLayoutItsChainShows) {
  auto k = parse_kernel(kChains);
  EXPECT_EQ(declare_chain_layout(*k), (std::vector<std::string>{"S1pointer", "S2dense", "S4dense", "S5dynamic"}));
  std::string printed = print_kernel(*k);
  EXPECT_EQ(printed.substr(0, printed.find("kernel {")),
            "pointer S1pointer : [4]\n"
            "dense S2dense : [16] in S1pointer\n"
            "dense S4dense : [2]\n"
            "dynamic S5dynamic : [2, 8] in S4dense\n"
            "field S3place<f32> : f32[16] in S2dense\n"
            "field S6place<i32> : i32[2, 8] in S5dynamic\n");
  // What it declared reads back as written.
  EXPECT_EQ(print_kernel(*parse_kernel(printed)), printed);
  EXPECT_TRUE(declare_chain_layout(*k).empty());  // nothing left to declare
}

TEST(ChainLayout, DeclaredSpacesGoBeforeTheUndeclaredOnesAsTheHeaderReadsBack) {
  // The struct_for task names S2dense before any declaration (an undeclared space); S2dense's
  // lookup prints an unknown kind, so only S1pointer is declared, and it must come first (fuzz
  // finding).
  std::string text = kChains;
  text.replace(text.find("[S2dense][dense]"), 16, "[S2dense][dewse]");
  text.insert(text.find("  $0 = offloaded"),
              "  $30 = offloaded struct_for(S2dense) grid_dim=0 block_dim=32 bls=none\n  body {\n  }\n");
  auto k = parse_kernel(text);
  declare_chain_layout(*k);
  ASSERT_TRUE(k->find_space("S1pointer") && k->find_space("S1pointer")->declared);
  EXPECT_EQ(to_json(*parse_kernel(print_kernel(*k)))["spaces"], to_json(*k)["spaces"]);
}

TEST(ChainLayout, ADenseChainOrAnUnclearOneDeclaresNothing) {
  std::string dense = kChains;
  for (auto [from, to] :
       {std::pair{"S1pointer][pointer]", "S1pointer][dense]"}, std::pair{"S5dynamic][dynamic]", "S5dynamic][dense]"}})
    dense.replace(dense.find(from), std::string(from).size(), to);
  auto k = parse_kernel(dense);
  EXPECT_TRUE(declare_chain_layout(*k).empty());
  // A dense SNode indexed on one axis of its parent and a new one: left for the header to declare
  // (a run then asks for it), the rest declared.
  std::string unclear = kChains;
  unclear.replace(unclear.find("linearized(ind {$7}, stride {4})"), 32, "linearized(ind {$7, $1}, stride {4, 4})");
  auto u = parse_kernel(unclear);
  EXPECT_EQ(declare_chain_layout(*u), (std::vector<std::string>{"S1pointer", "S4dense", "S5dynamic"}));
  EXPECT_FALSE(u->find_space("S2dense") && u->find_space("S2dense")->declared);
}

}  // namespace
}  // namespace pb::ir
