// Parser errors: every failure is a UserError located at file:line:col, carrying the offending
// source line and a message that names the problem.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/parser.h"

namespace pb::ir {
namespace {

struct ErrorCase {
  const char* name;
  std::string text;
  int line;              // 1-based line of the diagnostic
  std::string caret_at;  // the caret sits on the first occurrence of this text in that line
  std::string message;   // a substring of the message
};

std::ostream& operator<<(std::ostream& os, const ErrorCase& c) { return os << c.name; }

// Line `n` (1-based) of `text`, without its newline; empty past the end.
std::string line_of(const std::string& text, int n) {
  size_t start = 0;
  for (int i = 1; i < n; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  std::string line = text.substr(start, text.find('\n', start) - start);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

Diagnostic parse_error(const std::string& text) {
  try {
    parse_kernel(text, "bad.chi");
  } catch (const UserError& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

std::string k(const std::string& body) { return "kernel {\n" + body + "}\n"; }

class ParserErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorTest, IsLocatedAndNamesTheProblem) {
  const ErrorCase& c = GetParam();
  Diagnostic d = parse_error(c.text);
  std::string expected_line = line_of(c.text, c.line);
  size_t caret = expected_line.find(c.caret_at);
  ASSERT_NE(caret, std::string::npos) << "bad test: '" << c.caret_at << "' not in line " << c.line;
  EXPECT_EQ(d.file, "bad.chi");
  EXPECT_EQ(d.line, c.line);
  EXPECT_EQ(d.column, static_cast<int>(caret) + 1) << "caret should be on '" << c.caret_at << "' in: " << expected_line;
  EXPECT_EQ(d.source_line, expected_line);
  EXPECT_NE(d.message.find(c.message), std::string::npos) << "message: " << d.message;
  std::string prefix = "bad.chi:" + std::to_string(c.line) + ":" + std::to_string(caret + 1) + ": error: ";
  EXPECT_EQ(d.format().rfind(prefix, 0), 0u) << d.format();
}

const ErrorCase kCases[] = {
    {"EmptyInput", "", 1, "", "empty input"},
    // Cases marked BUG(line start) fail because of ir/lexer.cpp Cursor::fail_at: a position at the
    // start of a line other than the first gets its column and source line from line 1.
    // Cases marked BUG(caret) fail because the caret lands next to the offending token, not on it.
    // BUG(line start)
    {"OnlyWhitespace", "  \n\t\n", 3, "", "empty input"},
    // BUG(line start)
    {"OnlyComments", "# nothing here\n", 2, "", "empty input"},
    // BUG(line start)
    {"MissingClosingBrace", "kernel {\n  <i32> $0 = const 0\n", 3, "", "a block is not closed"},
    // BUG(line start)
    {"MissingClosingBraceOfANestedBlock", "kernel {\n  $0 : while true {\n    $1 continue\n  }\n", 5, "",
     "a block is not closed"},
    {"UnknownStatement", k("  <i32> $0 = frobnicate $1\n"), 2, "frobnicate", "unknown statement 'frobnicate'"},
    {"UnknownOffloadedTask", k("  $0 = offloaded sparse_for(S1) grid_dim=0 block_dim=32\n  body {\n  }\n"), 2,
     "sparse_for", "unknown offloaded task type 'sparse_for'"},
    {"UnsupportedStructArgumentMember", k("  <i32> $0 = const 0\n  <i32> $4 = argload[0, 1]\n"), 3, "argload",
     "unsupported statement 'argload of a struct argument member' at line 3"},
    {"MeshForUnknownElement", k("  <i32> $0 = const 0\n  $4 : mesh for (Vertex -> Vertex) {\n  }\n"), 3, "Vertex",
     "unknown mesh element type 'Vertex'"},
    {"MeshTaskUnknownElement",
     k("  $0 = offloaded mesh_for(verts -> nodes) num_patches=2 grid_dim=0 block_dim=32\n  body {\n  }\n"), 2, "nodes",
     "unknown mesh element type 'nodes'"},
    {"MeshTaskWithoutPatchCount",
     k("  $0 = offloaded mesh_for(verts -> edges) grid_dim=0 block_dim=32\n  body {\n  }\n"), 2, "grid_dim",
     "expected 'num_patches='"},
    {"BodyPrologueOutsideAMeshTask",
     k("  $0 = offloaded range_for(0, 4) grid_dim=0 block_dim=32\n  body prologue {\n  }\n  body {\n  }\n"), 3,
     "body prologue", "only a mesh_for task has a body prologue"},
    {"UnknownMeshConversion", k("  <i32> $0 = const 0\n  <i32> $1 = global to local verts $0\n"), 3, "local verts",
     "unknown mesh index conversion 'global to local'"},
    {"MeshRelationOfUnknownElement", k("  <i32> $0 = const 0\n  <u16> $1 = $0 idx relation nodes size\n"), 3, "nodes",
     "unknown mesh element type 'nodes'"},
    {"ExternalTensorBasePtrWithoutPointerHint",
     k("  <i32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=false)\n"), 2, "external_tensor_base_ptr",
     "an external_tensor_base_ptr needs a pointer type hint"},
    {"MalformedTensorType", k("  <*[Tensor (0) f32]> $3 = alloca\n"), 2, "*[Tensor",
     "malformed tensor type '*[Tensor (0) f32]'"},
    {"TensorConstant", k("  <[Tensor (2) f32]> $1 = const 0\n"), 2, "const", "a constant has a scalar type"},
    {"UndefinedOperand", k("  <i32> $1 = add $2 $3\n"), 2, "$2", "undefined statement $2"},
    {"DuplicateId", k("  <i32> $1 = const 0\n  <i32> $1 = const 1\n"), 3, "$1", "statement $1 is defined twice"},
    {"DuplicateAssertId", k("  <u1> $1 = const true\n  1 : assert $1, \"x\"\n"), 3,
     "1 :", "statement 1 is defined twice"},
    {"BadConstant", k("  <i32> $1 = const 1.5\n"), 2, "1.5", "'1.5' is not a valid i32 constant"},
    {"ConstantOutOfRange", k("  <i32> $1 = const 2147483648\n"), 2, "2147483648", "not a valid i32 constant"},
    {"UnknownType", k("  <f17> $1 = const 1.5\n"), 2, "f17", "unknown type 'f17'"},
    {"QuantIntWidthZero", k("  <*qi0> $1 = alloca\n"), 2, "*qi0", "unknown type '*qi0'"},
    {"QuantIntTooWide", k("  <*qu65> $1 = alloca\n"), 2, "*qu65", "unknown type '*qu65'"},
    {"QuantFixedWithoutComputeType", k("  <*qfx(d=qi8 s=0.1)> $1 = alloca\n"), 2, "*qfx",
     "unknown type '*qfx(d=qi8 s=0.1)'"},
    {"QuantFloatOfIntegerCompute", k("  <*qfl(d=qi8 e=qu5 c=i32)> $1 = alloca\n"), 2, "*qfl", "unknown type"},
    {"QuantArrayWiderThan64", k("  <*qa(qu8x9)> $1 = alloca\n"), 2, "*qa", "unknown type '*qa(qu8x9)'"},
    {"I8ConstantOutOfRange", k("  <i8> $1 = const 128\n"), 2, "128", "128"},
    {"U16ConstantNegative", k("  <u16> $1 = const -1\n"), 2, "-1", "-1"},
    // BUG(caret)
    {"UnknownAtomicOp", k("  <*i32> $0 = alloca\n  <i32> $1 = atomic nand($0, $0)\n"), 3, "nand",
     "unknown atomic op 'nand'"},
    {"UnknownHeaderLine", "feld x : f32[4]\n" + k(""), 1, "feld", "unknown header line 'feld'"},
    {"UnknownFieldType", "field x : f33[4]\n" + k(""), 1, "f33", "unknown field type 'f33'"},
    {"FieldMissingColon", "field x f32[4]\n" + k(""), 1, "f32", "expected ':'"},
    // BUG(caret)
    {"ZeroDimension", "field x : f32[0]\n" + k(""), 1, "0", "shape dimensions must be positive"},
    // BUG(caret)
    {"UndeclaredIndexSpace", "field x : f32[4] in nowhere\n" + k(""), 1, "nowhere",
     "index space 'nowhere' is not declared"},
    // BUG(caret)
    {"ArgumentIndexTooLarge", "arg 2147483647 : i32\n" + k(""), 1, "2147483647",
     "argument index 2147483647 is outside 0..4095"},
    {"LoopAxisOutOfRange",
     k("  <i32> $1 = const 0\n  $0 : for in range($1, $1) block_dim=adaptive {\n    <i32> $2 = loop $0 index 99\n  "
       "}\n"),
     4, "99", "loop axis 99 is outside 0..15"},
    {"NdarrayNegativeDimensions", "arg 0 : ndarray<f32, -1>\n" + k(""), 1, "-1>", "ndarray rank -1 is outside 0..16"},
    // BUG(caret)
    {"DuplicateField", "field x : f32[4]\nfield x : i32[4]\n" + k(""), 2, "x", "field 'x' is declared twice"},
    // BUG(caret)
    {"CompanionNamedLikeItsPrimal", "field x : f32[4] grad x\n" + k(""), 1, "x", "declared twice"},
    // BUG(line start)
    {"DuplicateIndexSpace", "dense S : [4]\ndense S : [8]\n" + k(""), 2, "dense", "index space 'S' is declared twice"},
    // BUG(line start)
    {"DuplicateArgument", "arg 0 : i32\narg 0 : f32\n" + k(""), 2, "arg", "argument 0 is declared twice"},
    {"ArgumentIndexNotANumber", "arg x : i32\n" + k(""), 1, "x", "expected an integer"},
    {"UnknownArgumentType", "arg 0 : float\n" + k(""), 1, "float", "unknown argument type 'float'"},
    {"UnknownTensorArgumentType", "arg 0 : [Tensor (2) g32]\n" + k(""), 1, "[Tensor", "unknown argument type"},
    {"ElementArgumentWithoutSource", "arg 1 : f32 element 0 in arg 2\n" + k(""), 1, "in", "expected `of arg N`"},
    // BUG(line start)
    {"ElementArgumentOfADeclaredArgument", "arg 0 : [Tensor (2) f32]\narg 1 : f32 element 0 of arg 0\n" + k(""), 2,
     "arg", "stands for an element of another"},
    // BUG(line start)
    {"TextAfterTheKernelOnItsOwnLine", k("") + "extra\n", 3, "extra", "unexpected text after the end of the kernel"},
    {"TextAfterTheKernelBrace", "kernel {\n} extra\n", 2, "extra", "extra"},
    {"UnterminatedString", k("  print \"abc\n"), 2, "\"abc", "unterminated string literal"},
    {"UnterminatedAssertMessage", k("  <u1> $0 = const true\n  1 : assert $0, \"abc\n"), 3, "abc",
     "unterminated assert message"},
    {"MissingEquals", k("  <i32> $1 const 1\n"), 2, "const", "expected '=' or ':'"},
    {"MissingColonInAssert", k("  <u1> $1 = const true\n  15 assert $1, \"x\"\n"), 3, "assert", "expected ':'"},
    {"DollarWithoutDigits", k("  <i32> $ = const 1\n"), 2, "$", "expected digits after '$'"},
    {"FieldOfUnknownType", k("  $0 = global ptr [x], index [] activate=true\n"), 2, "x]",
     "type of field 'x' is unknown"},
    {"GlobalPtrToAnSNodeWithABadName",
     k("  <i32> $0 = const 2\n  <*gen> $1 = global ptr [S1poi&nter], index [$0] activate=true\n"), 3, "S1poi&nter]",
     "name 'S1poi&nter' holds '&', which does not print back"},
    {"Taichi05LoopVariableUndefined", k("  <i32> $1 = const 0\n  for $3 in range($1, $1, step 1) {\n  }\n"), 3, "$3",
     "undefined statement $3"},
    {"AllocaWithoutHint", k("  $1 = alloca\n"), 2, "alloca", "alloca needs a type hint"},
    {"CastHintDisagrees", k("  <i32> $0 = const 1\n  <f32> $1 = cast_value<i32> $0\n"), 3, "cast_value", "disagrees"},
    {"UnknownStackStatement", k("  <f32> $0 = stack alloc (max_size=4)\n  <f32> $1 : stack frob $0\n"), 3, "frob",
     "unknown stack statement"},
    {"VectorLaneOtherThanZero", k("  <*i32> $1 = alloca\n  <i32> $2 = local load [ [$1[1]]]\n"), 3, "1]]]",
     "vector lanes other than 0"},
    // BUG(caret)
    {"RangeStepOtherThanOne", k("  <i32> $0 = const 0\n  $1 : for in range($0, $0, step 2) {\n  }\n"), 3, "2)",
     "only step 1"},
    {"ErrorAfterAMultiLineString", k("  <i32> $0 = const 0\n  print $0, \"\n\"\n  <i32> $1 = frob $0\n"), 5, "frob",
     "unknown statement 'frob'"},
    {"ErrorAfterCrlfLines", "kernel {\r\n  <i32> $0 = frob\r\n}\r\n", 2, "frob", "unknown statement 'frob'"},
    {"RangeAssumptionWithTwoBases",
     k("  <i32> $0 = const 0\n  <i32> $1 = const 1\n  <i32> $2 = assume_in_range($0-4 <= $1 < $1+4)\n"), 4, "$1+4",
     "both bounds of assume_in_range must name the same base statement"},
    {"RangeAssumptionWithoutOffset", k("  <i32> $0 = const 0\n  <i32> $1 = assume_in_range($0 <= $0 < $0+1)\n"), 3,
     " <= $0 <", "expected `+N` or `-N` after the base"},
    {"LoopUniqueCoverWithoutS", k("  <i32> $0 = const 0\n  <i32> $1 = loop_unique($0, covers=[2])\n"), 3, "2])",
     "expected 'S'"},
    {"DecorationOfUnknownForm", k("  <i32> $0 = const 0\n  decorate $0 : Loop-shared 1\n"), 3, "Loop-shared",
     "expected '...'"},
    {"RandWithoutHint", k("  $0 = rand()\n"), 2, "rand", "rand needs a scalar type hint"},
    {"BitStructStoreValueCount",
     k("  <i32> $0 = const 0\n  <*i32> $1 = alloca\n  $2 : bit_struct_store $1, ch_ids=[0, 1], values=[$0]\n"), 4,
     "[$0]", "bit_struct_store has 2 channel id(s) but 1 value(s)"},
    {"InternalCallWithoutName", k("  <i32> $0 = internal call ($1)\n"), 2, "($1)",
     "expected the name of the internal function"},
    {"BlockLocalPtrWithoutPointerHint", k("  <i32> $0 = const 0\n  <i32> $1 = block local ptr (offset = $0)\n"), 3,
     "block", "a block local ptr needs a pointer type hint"},
    {"ExternalShapeAxisOutOfRange", k("  <i32> $0 = external_tensor_shape_along_axis 99, arg_id [0]\n"), 2, "99",
     "axis 99 is outside 0..15"},
};

INSTANTIATE_TEST_SUITE_P(Parser, ParserErrorTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& p) { return std::string(p.param.name); });

TEST(ParserErrors, UnsupportedStatementsSayWhatToDoAboutThem) {
  for (const char* lines : {"  <i32> $2 = argload[0, 1]\n",
                            "  <*f32> $1 = argload[0]\n  <i32> $2 = const 0\n"
                            "  <*f32> $3 = external_ptr $1, [$2], (3) layout=AOS is_grad=false\n"}) {
    Diagnostic d = parse_error(k(lines));
    EXPECT_NE(d.message.find("unsupported statement"), std::string::npos) << d.message;
    EXPECT_NE(d.remedy.find("docs/ir-format.md"), std::string::npos) << d.remedy;
  }
}

TEST(ParserErrors, Taichi05LoopVariableMustBeAnAlloca) {
  Diagnostic d = parse_error(k("  <i32> $1 = const 0\n  for $1 in range($1, $1, step 1) {\n  }\n"));
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 7);
  EXPECT_NE(d.message.find("must be an alloca"), std::string::npos) << d.message;
  d = parse_error(k("  <i32> $1 = const 0\n  <i32> $2 = shuffle $1[1]\n"));
  EXPECT_NE(d.message.find("lanes other than 0"), std::string::npos) << d.message;
}

TEST(ParserErrors, FormatShowsTheSourceLineWithACaretUnderTheColumn) {
  Diagnostic d = parse_error(k("  <i32> $0 = frobnicate $1\n"));
  std::string expected =
      "bad.chi:2:14: error: unknown statement 'frobnicate'\n"
      "    <i32> $0 = frobnicate $1\n"
      "               ^\n"
      "  remedy: ";
  EXPECT_EQ(d.format(), expected + d.remedy);
}

// Feeds `text` to the parser: it must either parse or throw a located UserError whose source
// line is printable. Anything else (InternalError, another exception, a crash) fails the test.
void expect_clean_outcome(const std::string& text) {
  try {
    parse_kernel(text, "bad.chi");
  } catch (const UserError& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_GE(d.line, 1);
    EXPECT_GE(d.column, 1);
    EXPECT_FALSE(d.message.empty());
    for (char c : d.source_line) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\t') << int(c);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-user error " << e.what() << " for input of " << text.size() << " bytes";
  }
}

TEST(ParserErrors, BinaryGarbageGivesAUserError) {
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  EXPECT_THROW(parse_kernel(all_bytes, "bad.chi"), UserError);
  expect_clean_outcome(all_bytes);
  expect_clean_outcome("kernel {\n" + all_bytes + "\n}\n");
  expect_clean_outcome("kernel {\n  <i32> $0 = const " + all_bytes + "\n}\n");
  std::mt19937 rng(1234);
  for (int i = 0; i < 300; ++i) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(rng() % 256);
    expect_clean_outcome(junk);
    expect_clean_outcome("kernel {\n  " + junk + "\n}\n");
  }
}

TEST(ParserErrors, EveryPrefixOfAValidDumpParsesOrFailsCleanly) {
  const std::string dump =
      "dense S : [4]\nfield x : f32[4] grad gx in S\narg 0 : i32\nkernel \"k\" {\n"
      "  <i32> $0 = argload[0]\n  <f32> $1 = const 0.5\n"
      "  $2 : struct for in S noneblock_dim=adaptive {\n    <i32> $3 = loop $2 index 0\n"
      "    <*f32> $4 = global ptr [x], index [$3] activate=true\n    <f32> $5 = atomic add($4, $1)\n"
      "    <u1> $6 = cmp_lt $1 $1\n    $7 : if $6 {\n      print \"v\", $5, \"\\n\"\n    } else {\n"
      "      9 : assert $6, \"raw, text %d\", $3\n    }\n  }\n}\n";
  ASSERT_NO_THROW(parse_kernel(dump));
  for (size_t n = 0; n < dump.size(); ++n) expect_clean_outcome(dump.substr(0, n));
}

}  // namespace
}  // namespace pb::ir
