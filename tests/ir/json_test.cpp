// JSON form: to_json/from_json round-trips exactly (text, ids, fields, attributes, special
// constants), and malformed documents give a UserError naming the JSON path.
#include "ir/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "tests/every_kind_samples.h"

namespace pb::ir {
namespace {

using nlohmann::json;

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

std::unique_ptr<Kernel> round_trip(const Kernel& k) { return from_json(json::parse(to_json(k).dump())); }

std::vector<int> preorder_ids(const Kernel& k) {
  std::vector<int> ids;
  for (Stmt* s : collect_preorder(k.root())) ids.push_back(s->id);
  return ids;
}

const char* const kEveryKind = pb::test::kLowered;  // every kind (tests/every_kind_samples.h)

TEST(Json, RoundTripPrintsTheSameTextWithTheSameIds) {
  auto k = parse(kEveryKind);
  auto back = round_trip(*k);
  EXPECT_EQ(print_kernel(*back), kEveryKind);
  EXPECT_EQ(preorder_ids(*back), preorder_ids(*k));
  EXPECT_EQ(to_json(*back), to_json(*k));
  EXPECT_EQ(back->fresh_id(), k->fresh_id());
}

TEST(Json, RoundTripKeepsFieldsCompanionsSpacesAndArgs) {
  auto k = parse(kEveryKind);
  auto back = round_trip(*k);
  EXPECT_EQ(back->name, "all");
  ASSERT_EQ(back->fields().size(), k->fields().size());
  for (size_t i = 0; i < k->fields().size(); ++i) {
    const Field& a = k->fields()[i];
    const Field& b = back->fields()[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.grad, a.grad);
    EXPECT_EQ(b.dual, a.dual);
    EXPECT_EQ(b.primal, a.primal);
    EXPECT_EQ(b.space, a.space);
    EXPECT_EQ(b.declared, a.declared);
  }
  ASSERT_EQ(back->spaces.size(), 1u);
  EXPECT_EQ(back->spaces[0].shape, Shape{8});
  EXPECT_TRUE(back->spaces[0].declared);
  ASSERT_EQ(back->args.size(), 2u);
  EXPECT_TRUE(back->args[1].ndarray);
  EXPECT_EQ(back->args[1].ndim, 1);
  EXPECT_EQ(back->args[1].dtype, ScalarKind::f32);
}

TEST(Json, RoundTripKeepsInferredFieldsAndSpacesUndeclared) {
  const char* text =
      "kernel {\n  $0 : struct for in S1dense noneblock_dim=adaptive {\n    <i32> $1 = loop $0 index 0\n"
      "    <*f32> $2 = global ptr [S2place<f32>], index [$1] activate=true\n  }\n}\n";
  auto back = round_trip(*parse(text));
  EXPECT_EQ(print_kernel(*back), text);
  ASSERT_EQ(back->fields().size(), 1u);
  EXPECT_FALSE(back->fields()[0].declared);
  EXPECT_FALSE(back->fields()[0].shape.has_value());
  ASSERT_EQ(back->spaces.size(), 1u);
  EXPECT_FALSE(back->spaces[0].declared);
}

TEST(Json, PrintItemsAndAssertMessageSurvive) {
  auto back = round_trip(*parse(kEveryKind));
  const PrintStmt* p = nullptr;
  const AssertStmt* a = nullptr;
  for (Stmt* s : collect_preorder(back->root())) {
    if (auto* ps = dyn_cast<PrintStmt>(s)) p = ps;
    if (auto* as = dyn_cast<AssertStmt>(s)) a = as;
  }
  ASSERT_TRUE(p && a);
  ASSERT_EQ(p->items.size(), 3u);
  EXPECT_EQ(std::get<std::string>(p->items[0]), "x = ");
  EXPECT_EQ(p->operand(std::get<size_t>(p->items[1]))->id, 7);
  EXPECT_EQ(std::get<std::string>(p->items[2]), " \"quoted\"\n");
  EXPECT_EQ(a->message, "raw, text %d");
  EXPECT_EQ(a->id, 32);
  ASSERT_EQ(a->args().size(), 1u);
  EXPECT_EQ(a->args()[0]->id, 5);
}

TEST(Json, SpecialConstantsSurvive) {
  Kernel k;
  const std::vector<Value> values = {
      Value::make_f32(std::nanf("")), Value::make_f32(INFINITY),  Value::make_f32(-INFINITY), Value::make_f32(-0.0f),
      Value::make_f64(std::nan("")),  Value::make_f64(-0.0),      Value::make_f64(5e-324),    Value::make_f32(0.95f),
      Value::make_u64(UINT64_MAX),    Value::make_i64(INT64_MIN), Value::make_bool(false),    Value::make_u32(7)};
  for (const Value& v : values) k.root().push_back(k.make<ConstStmt>(v));
  auto back = round_trip(k);
  auto copies = collect_preorder(back->root());
  ASSERT_EQ(copies.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& got = dyn_cast<ConstStmt>(copies[i])->value;
    SCOPED_TRACE(values[i].to_string());
    EXPECT_TRUE(got.identical(values[i])) << got.to_string();
  }
  EXPECT_EQ(print_kernel(*back), print_kernel(k));
}

TEST(Json, NarrowAndQuantTypesSurvive) {
  const std::string text = R"(field h : f16[2]
field b : i8[2]
kernel "types" {
  <f16> $1 = const 0.099975586
  <f16> $2 = const -inf
  <i8> $3 = const -128
  <i16> $4 = const 32767
  <u8> $5 = const 255
  <u16> $6 = const 65535
  <i32> $7 = const 0
  <*qi4> $8 = global ptr [S3place<qi4><bit>], index [$7] activate=false
  <*cu1> $9 = global ptr [S6place<cu1><bit>], index [$7] activate=false
  <*qfl(d=qi8 e=qu5 c=f32)> $10 = global ptr [S7place<qfl>], index [$7] activate=false
  <*bs(0: qi4@0, 1: qu4@4)> $11 = global ptr [S8bit_struct<bs>], index [$7] activate=false
  <*f16> $12 = global ptr [h], index [$7] activate=true
  $13 : global store [$12 <- $1]
  <i8> $14 = mul $3 $3
}
)";
  auto k = parse(text);
  EXPECT_EQ(print_kernel(*k), text);
  auto back = round_trip(*k);
  EXPECT_EQ(print_kernel(*back), text);
  EXPECT_EQ(to_json(*back), to_json(*k));
  EXPECT_TRUE(verify(*back).empty());
  EXPECT_EQ(dyn_cast<ConstStmt>(collect_preorder(back->root())[0])->value.as_f64(), 0.0999755859375);
}

TEST(Json, DocumentUsesTheDocumentedSchema) {
  json j =
      to_json(*parse("field x : f32[4]\nkernel \"k\" {\n  <i32> $3 = const 1\n"
                     "  <*f32> $4 = global ptr [x], index [$3] activate=false\n  <f32> $5 = const 2\n"
                     "  $6 : global store [$4 <- $5]\n}\n"));
  EXPECT_EQ(j["format"], "passbench-ir");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["name"], "k");
  EXPECT_EQ(j["fields"][0]["name"], "x");
  EXPECT_EQ(j["fields"][0]["shape"], json::array({4}));
  const json& body = j["body"];
  ASSERT_EQ(body.size(), 4u);
  EXPECT_EQ(body[0], json({{"id", 3}, {"kind", "const"}, {"type", "i32"}, {"value", "1"}}));
  EXPECT_EQ(body[1]["kind"], "global_ptr");
  EXPECT_EQ(body[1]["type"], "*f32");
  EXPECT_EQ(body[1]["field"], "x");
  EXPECT_EQ(body[1]["activate"], false);
  EXPECT_EQ(body[1]["operands"], json::array({3}));
  EXPECT_EQ(body[3]["operands"], json::array({4, 5}));
  EXPECT_FALSE(body[3].contains("type"));
}

// A minimal valid document whose body is `body`.
json document(json body) {
  return {{"format", "passbench-ir"}, {"version", 1},          {"fields", json::array()},
          {"spaces", json::array()},  {"args", json::array()}, {"body", std::move(body)}};
}

// Runs from_json and returns the UserError's message; fails the test on success or on any
// other exception.
std::string json_error(const json& j) {
  try {
    from_json(j);
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UserError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error for " << j.dump();
  return "";
}

const json kConst = {{"id", 0}, {"kind", "const"}, {"type", "i32"}, {"value", "1"}};

TEST(JsonErrors, MissingKindNamesTheStatementPath) {
  std::string e = json_error(document({kConst, {{"id", 1}, {"type", "i32"}}}));
  EXPECT_NE(e.find("$.body[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("kind"), std::string::npos) << e;
}

TEST(JsonErrors, UnknownKindNamesTheKindPath) {
  std::string e = json_error(document({{{"id", 0}, {"kind", "texture_sample"}}}));
  EXPECT_NE(e.find("$.body[0].kind"), std::string::npos) << e;
  EXPECT_NE(e.find("texture_sample"), std::string::npos) << e;
}

TEST(JsonErrors, UndefinedOperandNamesTheOperandsPath) {
  std::string e = json_error(document({kConst, {{"id", 1}, {"kind", "unary"}, {"op", "neg"}, {"operands", {7}}}}));
  EXPECT_NE(e.find("$.body[1].operands"), std::string::npos) << e;
  EXPECT_NE(e.find("$7"), std::string::npos) << e;
}

TEST(JsonErrors, UndefinedOperandInsideANestedBlockHasItsFullPath) {
  json loop = {{"id", 1},
               {"kind", "range_for"},
               {"operands", {0, 0}},
               {"body", json::array({{{"id", 2}, {"kind", "loop_index"}, {"operands", {9}}, {"axis", 0}}})}};
  std::string e = json_error(document({kConst, loop}));
  EXPECT_NE(e.find("$.body[1].body[0].operands"), std::string::npos) << e;
}

TEST(JsonErrors, BadTypeNamesTheTypePath) {
  std::string e = json_error(document({{{"id", 0}, {"kind", "const"}, {"type", "f17"}, {"value", "1"}}}));
  EXPECT_NE(e.find("$.body[0].type"), std::string::npos) << e;
}

TEST(JsonErrors, BadConstantValueNamesTheValuePath) {
  std::string e = json_error(document({{{"id", 0}, {"kind", "const"}, {"type", "i32"}, {"value", "1.5"}}}));
  EXPECT_NE(e.find("$.body[0].value"), std::string::npos) << e;
}

TEST(JsonErrors, WrongOperandCountIsReported) {
  std::string e = json_error(document({kConst, {{"id", 1}, {"kind", "binary"}, {"op", "add"}, {"operands", {0}}}}));
  EXPECT_NE(e.find("$.body[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("takes 2 operand(s), got 1"), std::string::npos) << e;
}

TEST(JsonErrors, DuplicateIdIsReported) {
  std::string e = json_error(document({kConst, kConst}));
  EXPECT_NE(e.find("$.body[1].id"), std::string::npos) << e;
}

TEST(JsonErrors, UnknownFieldIsReported) {
  std::string e = json_error(document({{{"id", 0}, {"kind", "global_ptr"}, {"field", "nope"}}}));
  EXPECT_NE(e.find("$.body[0].field"), std::string::npos) << e;
}

TEST(JsonErrors, WrongFormatOrNotAnObjectIsReported) {
  EXPECT_NE(json_error(json::array()).find("$"), std::string::npos);
  json j = document(json::array());
  j["format"] = "something-else";
  EXPECT_NE(json_error(j).find("$.format"), std::string::npos);
}

// BUG(ir/json.cpp, from_json): `j.value("format", "")` throws nlohmann's type_error when
// "format" is not a string, which escapes as a non-UserError.
TEST(JsonErrors, NonStringFormatIsAUserError) {
  json j = document(json::array());
  j["format"] = 5;
  EXPECT_NE(json_error(j).find("$.format"), std::string::npos);
}

// BUG(ir/json.cpp, from_json): two fields with one name reach Kernel::add_field, whose
// PB_ASSERT throws InternalError: malformed input must give a UserError.
TEST(JsonErrors, DuplicateFieldNameIsAUserError) {
  json j = document(json::array());
  j["fields"] = {{{"name", "a"}, {"dtype", "f32"}, {"shape", {4}}}, {{"name", "a"}, {"dtype", "f32"}, {"shape", {4}}}};
  EXPECT_NE(json_error(j).find("$.fields"), std::string::npos);
}

TEST(JsonErrors, MissingTopLevelMembersAreUserErrors) {
  for (const char* key : {"fields", "spaces", "args", "body"}) {
    json j = document(json::array());
    j.erase(key);
    SCOPED_TRACE(key);
    EXPECT_FALSE(json_error(j).empty());
  }
}

TEST(JsonErrors, ErasedOperandCannotBeReadBack) {
  auto k = parse("kernel {\n  <f32> $0 = const 1\n  <f32> $1 = neg $0\n}\n");
  k->root().erase(k->root().front());
  json j = to_json(*k);
  EXPECT_EQ(j["body"][0]["operands"], json::array({-1}));
  EXPECT_NE(json_error(j).find("$.body[0].operands"), std::string::npos);
}

}  // namespace
}  // namespace pb::ir

namespace pb::ir {
namespace {

// Integers in kernel JSON are checked before conversion: a float, a huge or a negative number
// where an id, axis, argument or size belongs is an error with its path (undefined behaviour
// before: 2147483647 overflowed Kernel::note_id, 1e34 was a float-to-int overflow).
TEST(JsonIntegers, OutOfRangeAndFloatIntegersAreErrors) {
  auto doc = [](const std::string& id) {
    return R"({"args":[],"body":[{"id":)" + id +
           R"(,"kind":"const","type":"u1","value":"true"}],"fields":[],"format":"passbench-ir","spaces":[],"version":1})";
  };
  for (const char* id : {"2147483647", "1e34", "-3", "2000000001"}) {
    try {
      from_json(json::parse(doc(id)));
      ADD_FAILURE() << id;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("$.body[0].id"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(from_json(json::parse(doc("2000000000"))));
}

// The kinds no backend compiles carry only what their printed line can: each refusal names the path.
TEST(JsonErrors, NoBackendKindsRefuseWhatTheirLineCannotCarry) {
  const json ptr = {{"id", 1}, {"kind", "alloca"}, {"type", "*i32"}};
  std::string e = json_error(document(
      {kConst, ptr, {{"id", 2}, {"kind", "snode_op"}, {"op", "frobnicate"}, {"snode", "S1dense"}, {"operands", {1}}}}));
  EXPECT_NE(e.find("$.body[2].op: unknown SNode op 'frobnicate'"), std::string::npos) << e;
  e = json_error(
      document({kConst, ptr, {{"id", 2}, {"kind", "bit_struct_store"}, {"ch_ids", {0, 1}}, {"operands", {1, 0}}}}));
  EXPECT_NE(e.find("$.body[2]: bit_struct_store needs one value per channel id"), std::string::npos) << e;
  e = json_error(document({{{"id", 0},
                            {"kind", "external_tensor_shape_along_axis"},
                            {"axis", 0},
                            {"arg_id", {0, 1}},
                            {"bracketed", false}}}));
  EXPECT_NE(e.find("$.body[0].arg_id: an unbracketed arg_id is one index"), std::string::npos) << e;
  e = json_error(document({kConst, {{"id", 1}, {"kind", "internal_call"}, {"name", "a b"}, {"operands", {0}}}}));
  EXPECT_NE(e.find("$.body[1].name"), std::string::npos) << e;
}

TEST(JsonErrors, MeshKindsRefuseWhatTheirLineCannotCarry) {
  const json task = {{"id", 0},         {"kind", "offloaded"},  {"task", "mesh_for"}, {"grid_dim", 0},
                     {"block_dim", 32}, {"mesh_from", "nodes"}, {"num_patches", 2},   {"body", json::array()}};
  std::string e = json_error(document({task}));
  EXPECT_NE(e.find("$.body[0].mesh_from: unknown mesh element type 'nodes'"), std::string::npos) << e;
  json range = {{"id", 0},
                {"kind", "offloaded"},
                {"task", "range_for"},
                {"grid_dim", 0},
                {"block_dim", 32},
                {"begin", {{"const", 0}}},
                {"end", {{"const", 4}}},
                {"mesh_prologue", json::array()},
                {"body", json::array()}};
  e = json_error(document({range}));
  EXPECT_NE(e.find("$.body[0].mesh_prologue: only a mesh_for task has a body prologue"), std::string::npos) << e;
  range.erase("mesh_prologue");
  range["num_patches"] = 4;
  e = json_error(document({range}));
  EXPECT_NE(e.find("a range_for task has no mesh element types"), std::string::npos) << e;
  e = json_error(document({kConst,
                           {{"id", 1},
                            {"kind", "mesh_index_conversion"},
                            {"conversion", "global_to_local"},
                            {"element", "verts"},
                            {"operands", {0}}}}));
  EXPECT_NE(e.find("$.body[1].conversion: unknown mesh index conversion 'global_to_local'"), std::string::npos) << e;
  e = json_error(document(
      {{{"id", 0}, {"kind", "mesh_for"}, {"from", "verts"}, {"scratch_pad", "a{b"}, {"body", json::array()}}}));
  EXPECT_NE(e.find("$.body[0].scratch_pad"), std::string::npos) << e;
  e = json_error(document({{{"id", 0}, {"kind", "external_tensor_base_ptr"}, {"type", "f32"}, {"arg_id", {0}}}}));
  EXPECT_NE(e.find("external_tensor_base_ptr needs a pointer type"), std::string::npos) << e;
}

}  // namespace
}  // namespace pb::ir
