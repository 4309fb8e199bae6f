// Text and JSON accept exactly the same kernel headers: names that would not print back, companion
// links the text header cannot express, undeclared index spaces, duplicate arguments and a
// pointer-typed constant are refused by both readers with a clear error, and everything they accept
// prints, reads back and prints the same.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/kernel.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace pb::ir {
namespace {

using nlohmann::json;

std::string text_error(const std::string& text) {
  try {
    parse_kernel(text, "h.chi");
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "text accepted:\n" << text;
  return "";
}

std::string json_error(const json& j) {
  try {
    from_json(j);
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UserError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "JSON accepted: " << j.dump();
  return "";
}

json field(const std::string& name) { return {{"name", name}, {"dtype", "f32"}, {"shape", {4}}, {"declared", true}}; }

json document(json fields, json spaces = json::array(), json args = json::array()) {
  return {{"format", "passbench-ir"},    {"version", 1},
          {"fields", std::move(fields)}, {"spaces", std::move(spaces)},
          {"args", std::move(args)},     {"body", json::array()}};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(HeaderParity, NamesThatWouldNotPrintBackAreRefusedByBothReaders) {
  for (const std::string name : {"x]g", "n-1", "a b", "x,y", "w:z", "p$1"}) {
    SCOPED_TRACE(name);
    std::string t = text_error("field " + name + " : f32[4]\nkernel {\n}\n");
    EXPECT_TRUE(has(t, "h.chi:1:7") || has(t, "h.chi:1:")) << t;
    EXPECT_TRUE(has(json_error(document({field(name)})), "does not print back"));
  }
  // As an inferred field (global ptr), as a companion and as an index space.
  EXPECT_TRUE(has(text_error("kernel {\n  <*f32> $0 = global ptr [n-1<f32>], index []\n}\n"), "h.chi:2:27"));
  EXPECT_TRUE(has(text_error("field x : f32[4] grad x-g\nkernel {\n}\n"), "h.chi:1:23"));
  EXPECT_TRUE(has(text_error("dense s-1 : [4]\nkernel {\n}\n"), "h.chi:1:7"));
  // A struct for's inferred index space (found by text_fuzz: its JSON did not read back).
  EXPECT_TRUE(has(text_error("kernel {\n  $0 : struct for in s\x01t block_dim=adaptive {\n  }\n}\n"), "h.chi:2:22"));
  EXPECT_TRUE(
      has(json_error(document(json::array(), {{{"name", "s]"}, {"shape", {4}}, {"declared", true}}})), "index space"));
}

TEST(HeaderParity, NamesTheReferencePrintsAreAccepted) {
  for (const std::string name : {"S2place<f32>", "S6place_f32", "x.grad", "_t0"}) {
    SCOPED_TRACE(name);
    auto k = parse_kernel("field " + name + " : f32[4]\nkernel {\n}\n", "h.chi");
    EXPECT_EQ(print_kernel(*from_json(to_json(*k))), print_kernel(*k));
  }
}

TEST(HeaderParity, CompanionLinksTheTextCannotExpressAreRefusedInJson) {
  json x = field("x"), g = field("g");
  // A gradient companion whose primal does not name it.
  g["primal"] = "x";
  EXPECT_TRUE(has(json_error(document({x, g})), "does not name it as a companion"));
  // A primal naming a companion that does not name it back.
  json x2 = field("x"), g2 = field("g");
  x2["grad"] = "g";
  EXPECT_TRUE(has(json_error(document({x2, g2})), "does not name it as its primal"));
  // A cycle: each the other's gradient.
  json a = field("a"), b = field("b");
  a["grad"] = "b";
  b["grad"] = "a";
  b["primal"] = "a";
  EXPECT_TRUE(has(json_error(document({a, b})), "companion of its own"));
  // A field its own gradient.
  json s = field("s");
  s["grad"] = "s";
  s["primal"] = "s";
  EXPECT_FALSE(json_error(document({s})).empty());
  // A companion of another shape.
  json p = field("p"), q = field("q");
  p["grad"] = "q";
  q["primal"] = "p";
  q["shape"] = {8};
  EXPECT_TRUE(has(json_error(document({p, q})), "differs from its primal"));
  // The well-formed pair reads.
  json ok = field("p"), okg = field("pg");
  ok["grad"] = "pg";
  okg["primal"] = "p";
  auto k = from_json(document({ok, okg}));
  EXPECT_EQ(print_kernel(*k), "field p : f32[4] grad pg\nkernel {\n}\n");
}

// Found by json_kernel_fuzz: an undeclared field with a shape lost it through text.
TEST(HeaderParity, AShapeOnAnUndeclaredFieldOrSpaceIsRefusedInJson) {
  json f = field("x");
  f["declared"] = false;
  EXPECT_TRUE(has(json_error(document({f})), "field 'x' is not declared but has a shape"));
  f["shape"] = nullptr;
  EXPECT_NO_THROW(from_json(document({f})));
  json sp = {{"name", "S1"}, {"shape", json::array()}, {"declared", false}};
  EXPECT_TRUE(has(json_error(document(json::array(), {sp})), "index space 'S1' is not declared but has a shape"));
}

TEST(HeaderParity, UndeclaredSpacesAndDuplicateArgumentsAreRefusedInJson) {
  json f = field("x");
  f["space"] = "S9";
  EXPECT_TRUE(has(json_error(document({f})), "index space 'S9', which is not declared"));
  json arg = {{"index", 0}, {"dtype", "i32"}};
  EXPECT_TRUE(has(json_error(document(json::array(), json::array(), {arg, arg})), "argument 0 is declared twice"));
  json sp = {{"name", "S1"}, {"shape", {4}}, {"declared", true}};
  EXPECT_TRUE(has(json_error(document(json::array(), {sp, sp})), "declared twice"));
}

TEST(HeaderParity, APointerTypedConstantIsRefusedByBothReaders) {
  std::string t = text_error("kernel {\n  <*f32> $1 = const 0\n}\n");
  EXPECT_TRUE(has(t, "h.chi:2:15")) << t;
  EXPECT_TRUE(has(t, "scalar type")) << t;
  json j = document(json::array());
  j["body"] = {{{"id", 1}, {"kind", "const"}, {"type", "*f32"}, {"value", "0"}}};
  EXPECT_TRUE(has(json_error(j), "scalar type"));
}

TEST(HeaderParity, NonUtf8StringsAreALocatedTextError) {
  std::string t = text_error("kernel \"k\xff\" {\n}\n");
  EXPECT_TRUE(has(t, "h.chi:1:10")) << t;
  EXPECT_TRUE(has(t, "0xff is not UTF-8")) << t;
  // An unquoted kernel name too (found by text_fuzz and passes_fuzz: it printed quoted, unreadable).
  t = text_error("kernel k\xa2\xa2 {\n}\n");
  EXPECT_TRUE(has(t, "h.chi:1:9")) << t;
  t = text_error("kernel {\n  <i32> $0 = const 1\n  print \"a\xc3\", $0\n}\n");
  EXPECT_TRUE(has(t, "is not UTF-8")) << t;
  // Valid multi-byte UTF-8 is kept and survives JSON.
  auto k = parse_kernel("kernel \"gr\xc3\xbc\xc3\x9f\" {\n}\n", "h.chi");
  EXPECT_EQ(from_json(json::parse(to_json(*k).dump()))->name, k->name);
}

// Found by json_kernel_fuzz in CI: a scalar argument with a rank lost it through text.
TEST(HeaderParity, ARankOnAScalarArgumentIsRefusedInJson) {
  json arg = {{"index", 0}, {"dtype", "i32"}, {"ndarray", false}, {"ndim", 5}};
  EXPECT_TRUE(has(json_error(document(json::array(), json::array(), {arg})), "argument 0 is a scalar but declares 5"));
  arg["ndarray"] = true;
  auto k = from_json(document(json::array(), json::array(), {arg}));
  EXPECT_EQ(print_kernel(*k), "arg 0 : ndarray<i32, 5>\nkernel {\n}\n");
  arg["ndarray"] = false;
  arg["ndim"] = 0;
  EXPECT_NO_THROW(from_json(document(json::array(), json::array(), {arg})));
}

// A tensor passed by value and the element arguments of one read back as the text header writes
// them; an element argument of a tensor the kernel declares itself is refused, as in text.
TEST(HeaderParity, TensorAndElementArgumentsInJson) {
  json tensor = {{"index", 2}, {"dtype", "[Tensor (2) f32]"}, {"ndarray", false}, {"ndim", 0}};
  auto k = from_json(document(json::array(), json::array(), {tensor}));
  EXPECT_EQ(print_kernel(*k), "arg 2 : [Tensor (2) f32]\nkernel {\n}\n");
  json element = {{"index", 3}, {"dtype", "f32"}, {"ndarray", false}, {"ndim", 0}, {"element_of", 2}, {"element", 1}};
  auto e = from_json(document(json::array(), json::array(), {element}));
  EXPECT_EQ(print_kernel(*e), "arg 3 : f32 element 1 of arg 2\nkernel {\n}\n");
  EXPECT_EQ(to_json(*from_json(to_json(*e))), to_json(*e));
  EXPECT_TRUE(
      has(json_error(document(json::array(), json::array(), {tensor, element})), "which the kernel declares itself"));
}

// Found by a 16-core json_kernel_fuzz campaign: a float where a list of integers belongs (an operand
// 1e34) was converted with undefined behaviour; every integer list is now read checked.
TEST(HeaderParity, AFloatInAnIntegerListIsALocatedError) {
  json j = document(json::array());
  j["body"] = {{{"id", 1}, {"kind", "const"}, {"type", "f32"}, {"value", "0"}},
               {{"id", 2}, {"kind", "unary"}, {"op", "neg"}, {"type", "f32"}, {"operands", {1e34}}}};
  std::string e = json_error(j);
  EXPECT_TRUE(has(e, "$.body[1].operands[0]")) << e;
  EXPECT_TRUE(has(e, "is not an integer")) << e;
  j["body"][1]["operands"] = {-3};
  EXPECT_TRUE(has(json_error(j), "outside 0..")) << json_error(j);
  j["body"][1]["operands"] = {1};
  EXPECT_NO_THROW(from_json(j));
}

// Found by the same campaign: a mutated ndarray layout ("=OS") printed text that did not parse back.
TEST(HeaderParity, AnNdarrayLayoutIsAosOrSoaInBothReaders) {
  std::string head =
      "arg 0 : ndarray<f32, 1>\nkernel {\n  <*f32> $0 = argload[0]\n  <i32> $1 = const 0\n  <*f32> $2 = external_ptr "
      "$0, [$1] layout=";
  std::string t = text_error(head + "XOS is_grad=false\n}\n");
  EXPECT_TRUE(has(t, "h.chi:5:44")) << t;
  EXPECT_TRUE(has(t, "AOS or SOA")) << t;
  auto k = parse_kernel(head + "SOA is_grad=false\n}\n", "h.chi");
  json j = json::parse(to_json(*k).dump());
  EXPECT_EQ(print_kernel(*from_json(j)), print_kernel(*k));
  for (json& s : j["body"])
    if (s["kind"] == "external_ptr") s["layout"] = "=OS";
  EXPECT_TRUE(has(json_error(j), "AOS or SOA")) << json_error(j);
}

// Found by the same campaign: a serial task's block_dim, which its printed line cannot carry, was
// read from JSON and lost through text. Both readers refuse what a task type's line cannot carry.
TEST(HeaderParity, ATaskAttributeItsLineCannotCarryIsRefusedByBothReaders) {
  json j = document(json::array());
  j["body"] = {{{"id", 0},
                {"kind", "offloaded"},
                {"task", "serial"},
                {"grid_dim", 0},
                {"block_dim", 1},
                {"body", json::array()}}};
  EXPECT_TRUE(has(json_error(j), "a serial task has no grid_dim or block_dim")) << json_error(j);
  j["body"][0]["block_dim"] = 0;
  EXPECT_NO_THROW(from_json(j));
  j["body"][0]["bls"] = "x";
  EXPECT_TRUE(has(json_error(j), "a serial task has no bls")) << json_error(j);
  std::string t = text_error("kernel {\n  $0 = offloaded garbage collect S1 block_dim=4\n}\n");
  EXPECT_TRUE(has(t, "h.chi:2:18")) << t;
  EXPECT_TRUE(has(t, "a garbage collect task has no grid_dim or block_dim")) << t;
  EXPECT_NO_THROW(parse_kernel(
      "kernel {\n  $0 = offloaded range_for(0, 4) grid_dim=1 block_dim=8 loop_name=f\n  body {\n  }\n}\n", "h.chi"));
}

// Found by a 16-core text_fuzz campaign: an overlong UTF-8 form (0xC0 0x9B) in a kernel name was
// accepted, then its JSON could not be written. Overlong forms, surrogates and bytes above
// U+10FFFF are refused where they are read, like any other byte that is not UTF-8.
TEST(HeaderParity, OverlongUtf8AndSurrogatesAreRefusedWhereRead) {
  for (std::string bad : {std::string("\xc0\x9b"), std::string("\xe0\x80\x80"), std::string("\xed\xa0\x80"),
                          std::string("\xf4\x90\x80\x80"), std::string("\xf5\x80\x80\x80")}) {
    std::string t = text_error("kernel k" + bad + " {\n}\n");
    EXPECT_TRUE(has(t, "h.chi:1:9")) << t;
    EXPECT_TRUE(has(t, "is not UTF-8")) << t;
  }
  auto k = parse_kernel("kernel k\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 {\n}\n", "h.chi");
  EXPECT_EQ(from_json(json::parse(to_json(*k).dump()))->name, k->name);
}

// Found by the json_kernel_fuzz campaign: an SNode name in a JSON get_ch ("S0ro&t") printed text
// that does not parse back. JSON applies the text reader's rules to every name and bare token.
TEST(HeaderParity, SNodeNamesAndBareTokensFollowTheTextRulesInJson) {
  std::string text =
      "kernel {\n  $0 = offloaded struct_for(S1) grid_dim=0 block_dim=0 bls=none loop_name=f\n  body {\n"
      "    <*gen> $1 = get root\n    <i32> $2 = const 0\n"
      "    <*gen> $3 = [S0root][root]::lookup($1, $2) activate = false\n"
      "    <*gen> $4 = get child [S0root->S1] $3\n  }\n}\n";
  auto k = parse_kernel(text, "h.chi");
  json good = json::parse(to_json(*k).dump());
  EXPECT_EQ(print_kernel(*from_json(good)), print_kernel(*k));
  auto with = [&](const char* kind, const char* key, json value) {
    json j = good;
    std::function<void(json&)> edit = [&](json& block) {
      for (json& st : block) {
        if (st["kind"] == kind) st[key] = value;
        if (st.contains("body")) edit(st["body"]);
      }
    };
    edit(j["body"]);
    return json_error(j);
  };
  EXPECT_TRUE(has(with("get_ch", "from", "S0ro&t"), "holds '&'")) << with("get_ch", "from", "S0ro&t");
  EXPECT_TRUE(has(with("snode_lookup", "snode", "a b"), "holds ' '"));
  EXPECT_TRUE(has(with("snode_lookup", "snode_type", "ro]ot"), "does not print back"));
  EXPECT_TRUE(has(with("offloaded", "snode", "S-1"), "holds '-'"));
  EXPECT_TRUE(has(with("offloaded", "bls", "a b"), "does not print back"));
  EXPECT_TRUE(has(with("offloaded", "loop_name", "f g"), "is not a word"));
  EXPECT_TRUE(has(with("get_root", "form", "x"), "get_root's form"));
}

// Found by json_kernel_fuzz in CI: a listgen task without its parent SNode printed
// `offloaded listgen ->S2`, which does not parse. Tasks that walk an SNode need it in JSON too.
TEST(HeaderParity, ATaskWithoutItsSNodeIsRefusedInJson) {
  json j = document(json::array());
  j["body"] = {
      {{"id", 0}, {"kind", "offloaded"}, {"task", "listgen"}, {"grid_dim", 0}, {"block_dim", 0}, {"snode", "S2"}}};
  EXPECT_TRUE(has(json_error(j), "a listgen task needs \"parent_snode\"")) << json_error(j);
  j["body"][0]["parent_snode"] = "S1";
  EXPECT_NO_THROW(from_json(j));
  j["body"][0].erase("snode");
  EXPECT_TRUE(has(json_error(j), "a listgen task needs \"snode\"")) << json_error(j);
}

// Found by text_fuzz: a mesh for's scratch-pad word holding a carriage return was
// read from text, and its JSON (which refuses line breaks in a token) did not read back. Both
// readers refuse it.
TEST(HeaderParity, AMeshScratchPadWithALineBreakIsRefusedByBothReaders) {
  std::string t = text_error("kernel {\n  $0 : mesh for (verts -> edges) nn\rne {\n  }\n}\n");
  EXPECT_TRUE(has(t, "h.chi:2:36")) << t;  // at the carriage return
  EXPECT_TRUE(has(t, "scratch-pad info")) << t;
  EXPECT_NO_THROW(parse_kernel("kernel {\n  $0 : mesh for (verts -> edges) none {\n  }\n}\n", "h.chi"));
  json j = document(json::array());
  j["body"] = {
      {{"id", 0}, {"kind", "mesh_for"}, {"from", "verts"}, {"scratch_pad", "nn\rne"}, {"body", json::array()}}};
  EXPECT_TRUE(has(json_error(j), "$.body[0].scratch_pad")) << json_error(j);
}

// Found by a 32-core text_fuzz campaign (after 7.97M executions): an SNode lookup's
// type holding carriage returns was read from text, and its JSON did not read back. Every token
// read up to a stop character now refuses a carriage return that does not end its line.
TEST(HeaderParity, ACarriageReturnOrAHashInsideATokenIsRefusedByBothReaders) {
  const std::string head = "kernel {\n  <*gen> $0 = get root\n  <i32> $1 = const 0\n";
  std::string t = text_error(head + "  <*gen> $2 = [S0root][ro\r\rot]::lookup($0, $1) activate = false\n}\n");
  EXPECT_TRUE(has(t, "h.chi:4:26")) << t;
  EXPECT_TRUE(has(t, "a carriage return inside an SNode type")) << t;
  // And a '#' (found by the local campaign after both fixes, at 1.4M executions).
  std::string hash = text_error(head + "  <*gen> $2 = [S0root][den# Forwardse]::lookup($0, $1) activate = false\n}\n");
  EXPECT_TRUE(has(hash, "h.chi:4:24")) << hash;
  EXPECT_TRUE(has(hash, "'#' inside an SNode type")) << hash;
  std::string bls = text_error("kernel {\n  $0 = offloaded range_for(0, 4) bls=a#b {\n  }\n}\n");
  EXPECT_TRUE(has(bls, "'#' inside the block-local storage")) << bls;
  // Line ends written as CRLF still read.
  std::string crlf =
      "kernel {\r\n  <*gen> $0 = get root\r\n  <i32> $1 = const 0\r\n"
      "  <*gen> $2 = [S0root][root]::lookup($0, $1) activate = false\r\n}\r\n";
  EXPECT_NO_THROW(parse_kernel(crlf, "h.chi"));
}

// Found by a 64-core text_fuzz campaign (after 3.0M executions): a range for's
// `loop_name=` was read up to the next blank or '{', so `'x` was a name, and its JSON (which takes a
// word) did not read back. Text takes a word too.
TEST(HeaderParity, ALoopNameIsAWordInBothReaders) {
  const std::string head = "kernel {\n  <i32> $0 = const 0\n  <i32> $1 = const 3\n";
  std::string t = text_error(head + "  $2 : for in range($0, $1) block_dim=adaptive  loop_name='x{\n  }\n}\n");
  EXPECT_TRUE(has(t, "h.chi:4:59")) << t;
  EXPECT_TRUE(has(t, "a loop name is a word")) << t;
  auto k =
      parse_kernel(head + "  $2 : for in range($0, $1) block_dim=adaptive  loop_name=outer.i_2{\n  }\n}\n", "h.chi");
  std::string printed = print_kernel(*k);
  EXPECT_TRUE(has(printed, "loop_name=outer.i_2{")) << printed;
}

}  // namespace
}  // namespace pb::ir
