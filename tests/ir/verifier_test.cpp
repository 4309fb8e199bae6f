// Verifier: valid kernels pass; every broken invariant is reported once, on the offending
// statement (printed in the error), with a message that says what is wrong.
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

std::string k(const std::string& body) { return "kernel {\n" + body + "}\n"; }

Stmt* by_id(const Kernel& kernel, int id) {
  for (Stmt* s : collect_preorder(kernel.root()))
    if (s->id == id) return s;
  return nullptr;
}

std::string all_errors(const std::vector<VerifyError>& errors) {
  std::string out;
  for (const auto& e : errors) out += "\n  " + e.format();
  return out;
}

// Expects exactly one error, on the statement printed as `statement`, whose message contains
// `message`.
void expect_one_error(const Kernel& kernel, const std::string& statement, const std::string& message) {
  auto errors = verify(kernel);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_EQ(errors[0].statement, statement);
  ASSERT_NE(errors[0].stmt, nullptr);
  EXPECT_EQ(print_stmt(*errors[0].stmt, kernel), statement);
  EXPECT_NE(errors[0].message.find(message), std::string::npos) << errors[0].message;
}

void expect_valid(const std::string& text) {
  auto kernel = parse(text);
  auto errors = verify(*kernel);
  EXPECT_TRUE(errors.empty()) << all_errors(errors);
}

TEST(VerifierValid, TheExampleKernel) {
  expect_valid(R"chi(kernel {
  <i32> $1 = const 0
  <i32> $2 = argload[0]
  <f32> $3 = const 0.95
  $4 : for in range($1, $2) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f32> $6 = global ptr [S2place<f32>], index [$5] activate=true
    <f32> $7 = global load $6
    <f32> $8 = sin $7
    <f32> $9 = mul $7 $8
    <*f32> $10 = alloca
    <f32> $11 : local store [$10 <- $9]
    <f32> $12 = local load [$10]
    <u1> $13 = cmp_lt $7 $3
    <f32> $14 = select($13, $7, $8)
    <f32> $15 = cast_value<f32> $5
    $16 : if $13 {
      <*f32> $17 = global ptr [S4place<f32>], index [] activate=true
      <f32> $18 = atomic add($17, $12)
    } else {
      $19 : global store [$6 <- $14]
    }
    <f32> $20 = stack alloc (max_size=16)
    <f32> $21 : stack push $20, val = $9
    <f32> $22 = stack load top $20
    <f32> $23 = stack load top adj $20
    <f32> $24 : stack acc adj $20, val = $15
    <f32> $25 : stack pop $20
    $26 : reversed for in range($1, $2) block_dim=adaptive {
      <i32> $27 = loop $26 index 0
    }
  }
}
)chi");
}

TEST(VerifierValid, TheRemainingStatementKinds) {
  expect_valid(R"chi(dense S : [4, 4]
field x : f32[4, 4] grad gx in S
arg 0 : ndarray<i32, 1>
kernel {
  <*i32> $0 = argload[0]
  $1 : struct for in S block_dim=adaptive {
    <i32> $2 = loop $1 index 0
    <i32> $3 = loop $1 index 1
    <*i32> $4 = external_ptr $0, [$2] layout=AOS is_grad=false
    <i32> $5 = global load volatile $4
    <i32> $6 = bit_not $5
    <i32> $7 = logic_not $6
    <f32> $8 = reinterpret_cast_bits<f32> $7
    <*f32> $9 = global ptr [gx], index [$2, $3] activate=false
    <f32> $10 = atomic max($9, $8)
    <*i32> $11 = alloca
    $12 : while true {
      <u1> $13 = cmp_lt $5 $6
      $14 : while control $11, $13
      $15 : if $13 {
        $16 continue
      }
    }
    print "v = ", $10, "\n"
    18 : assert $7, "bad %d", $2
  }
  $19 : struct for in x block_dim=32 {
    <i32> $20 = loop $19 index 1
  }
}
)chi");
}

TEST(VerifierValid, OldDialectComparisonsTypedI32) {
  expect_valid(k("  <i32> $0 = const 1\n  <i32> $1 = cmp_lt $0 $0\n  <i32> $2 = bit_and $1 $0\n  $3 : if $2 {\n  }\n"));
}

// A statement that gives no value (a store, a push, a pop) as another's operand: accepted
// before, after which dce erased the store and its own output failed the verifier.
TEST(VerifierOperands, AStatementWithoutAValueIsNoOperand) {
  auto stored = parse("field y : f32[]\n" +
                      k("  <f32> $0 = const 1\n  <*f32> $1 = alloca\n  <f32> $2 : local store [$1 <- $0]\n"
                        "  <*f32> $3 = global ptr [y], index [] activate=true\n  $4 : global store [$3 <- $2]\n"));
  expect_one_error(*stored, "$4 : global store [$3 <- $2]", "operand $2 is a local_store, which gives no value");
  auto pushed =
      parse(k("  <f32> $0 = const 1\n  <f32> $1 = stack alloc (max_size=4)\n"
              "  $2 : stack push $1, val = $0\n  $3 : stack push $1, val = $2\n"));
  expect_one_error(*pushed, "<f32> $3 : stack push $1, val = $2", "operand $2 is a stack_push");
  auto popped =
      parse(k("  <f32> $0 = const 1\n  <f32> $1 = stack alloc (max_size=4)\n"
              "  $2 : stack push $1, val = $0\n  $3 : stack pop $1\n  <f32> $4 = neg $3\n"));
  auto errors = verify(*popped);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(all_errors(errors).find("operand $3 is a stack_pop"), std::string::npos) << all_errors(errors);
}

// Found by codegen_fuzz: a stack alloc (typed <f32> by its element) pushed onto itself verified,
// and SPIR-V codegen then stopped on an internal error (the stack has no SPIR-V value).
TEST(VerifierOperands, AStackAllocIsOnlyTheStackOfAStackOp) {
  auto self_push = parse(k("  <f32> $0 = stack alloc (max_size=1)\n  $1 : stack push $0, val = $0\n"));
  expect_one_error(*self_push, "<f32> $1 : stack push $0, val = $0",
                   "operand $0 is a stack alloc, which is not a value");
  auto acc =
      parse(k("  <f32> $0 = stack alloc (max_size=1)\n  <f32> $1 = const 1\n  $2 : stack push $0, val = $1\n"
              "  $3 : stack acc adj $0, val = $0\n"));
  expect_one_error(*acc, "<f32> $3 : stack acc adj $0, val = $0", "operand $0 is a stack alloc");
  auto arith = parse(k("  <f32> $0 = stack alloc (max_size=1)\n  <f32> $1 = add $0 $0\n"));
  auto errors = verify(*arith);
  ASSERT_EQ(errors.size(), 2u) << all_errors(errors);  // one per operand slot
  EXPECT_NE(all_errors(errors).find("read its top with `stack load top $0`"), std::string::npos) << all_errors(errors);
  auto stored = parse("field y : f32[]\n" +
                      k("  <f32> $0 = stack alloc (max_size=1)\n"
                        "  <*f32> $1 = global ptr [y], index [] activate=true\n  $2 : global store [$1 <- $0]\n"));
  expect_one_error(*stored, "$2 : global store [$1 <- $0]", "operand $0 is a stack alloc");
  // Its own slot in every stack op stays valid.
  expect_valid(
      k("  <f32> $0 = stack alloc (max_size=1)\n  <f32> $1 = const 1\n  $2 : stack push $0, val = $1\n"
        "  <f32> $3 = stack load top $0\n  <f32> $4 = stack load top adj $0\n"
        "  $5 : stack acc adj $0, val = $3\n  $6 : stack pop $0\n"));
}

TEST(VerifierDominance, OperandDefinedLater) {
  auto kernel = parse(k("  <f32> $0 = const 1\n  <f32> $1 = neg $0\n  <f32> $2 = const 2\n"));
  Stmt* c = by_id(*kernel, 0);
  kernel->root().insert_after(by_id(*kernel, 1), kernel->root().detach(c));
  expect_one_error(*kernel, "<f32> $1 = neg $0", "operand $0 does not dominate");
}

TEST(VerifierDominance, OperandFromASiblingIfBranch) {
  auto kernel =
      parse(k("  <i32> $0 = const 1\n  $1 : if $0 {\n    <i32> $2 = const 2\n  } else {\n"
              "    <i32> $3 = add $2 $2\n  }\n"));
  auto errors = verify(*kernel);
  ASSERT_EQ(errors.size(), 2u) << all_errors(errors);  // one per operand slot
  for (const auto& e : errors) {
    EXPECT_EQ(e.statement, "<i32> $3 = add $2 $2");
    EXPECT_NE(e.message.find("operand $2 does not dominate"), std::string::npos) << e.message;
  }
}

TEST(VerifierDominance, OperandFromInsideALoopBodyUsedAfterTheLoop) {
  auto kernel =
      parse(k("  <i32> $0 = const 4\n  $1 : for in range($0, $0) block_dim=adaptive {\n"
              "    <f32> $2 = const 2\n  }\n  <f32> $3 = neg $2\n"));
  expect_one_error(*kernel, "<f32> $3 = neg $2", "operand $2 does not dominate");
}

TEST(VerifierDominance, ReferenceToAnErasedStatement) {
  auto kernel = parse(k("  <f32> $0 = const 1\n  <f32> $1 = const 2\n  <f32> $2 = add $0 $1\n"));
  kernel->root().erase(by_id(*kernel, 1));
  expect_one_error(*kernel, "<f32> $2 = add $0 $<erased>", "operand 1 refers to an erased statement");
}

TEST(VerifierTypes, AddOfF32AndI32) {
  auto kernel = parse(k("  <f32> $0 = const 1\n  <i32> $1 = const 2\n  <f32> $2 = add $0 $1\n"));
  auto errors = verify(*kernel);
  ASSERT_EQ(errors.size(), 1u) << all_errors(errors);
  EXPECT_NE(errors[0].message.find("add operand types differ: $0 is f32, $1 is i32"), std::string::npos)
      << errors[0].message;
  EXPECT_NE(errors[0].statement.find("$2 = add $0 $1"), std::string::npos) << errors[0].statement;
}

// BUG(ir/parser_stmts.cpp, Parser::parse_stmt): when the typing rule fails without a type, the
// parser drops the statement's hint, so the dump prints back (and is reported) without `<f32>`.
TEST(VerifierTypes, IllTypedStatementKeepsItsHint) {
  std::string text = k("  <f32> $0 = const 1\n  <i32> $1 = const 2\n  <f32> $2 = add $0 $1\n");
  auto kernel = parse(text);
  EXPECT_EQ(print_kernel(*kernel), text);
  expect_one_error(*kernel, "<f32> $2 = add $0 $1", "add operand types differ");
}

TEST(VerifierTypes, HintThatDisagreesWithTheOperands) {
  auto kernel = parse(k("  <f32> $0 = const 1\n  <f64> $1 = neg $0\n"));
  expect_one_error(*kernel, "<f64> $1 = neg $0", "type <f64> disagrees with the type the operands give, <f32>");
}

TEST(VerifierTypes, LocalStoreOfF32IntoAnI32Alloca) {
  auto kernel = parse(k("  <*i32> $0 = alloca\n  <f32> $1 = const 1\n  <f32> $2 : local store [$0 <- $1]\n"));
  expect_one_error(*kernel, "<f32> $2 : local store [$0 <- $1]", "local store of f32 value $1 into *i32 alloca $0");
}

TEST(VerifierTypes, GlobalStoreOfTheWrongValueType) {
  auto kernel = parse("field x : f32[]\n" + k("  <*f32> $0 = global ptr [x], index [] activate=true\n"
                                              "  <i32> $1 = const 1\n  $2 : global store [$0 <- $1]\n"));
  expect_one_error(*kernel, "$2 : global store [$0 <- $1]", "global store of i32 value $1 through *f32 pointer $0");
}

TEST(VerifierTypes, StackPushOfTheWrongType) {
  auto kernel =
      parse(k("  <f32> $0 = stack alloc (max_size=8)\n  <i32> $1 = const 1\n  <f32> $2 : stack push $0, val = $1\n"));
  expect_one_error(*kernel, "<f32> $2 : stack push $0, val = $1", "i32 value $1 does not match f32 stack $0");
}

TEST(VerifierTypes, IfConditionIsF32) {
  auto kernel = parse(k("  <f32> $0 = const 1\n  $1 : if $0 {\n  }\n"));
  expect_one_error(*kernel, "$1 : if $0 {", "if condition $0 must be an integer, not f32");
}

TEST(VerifierTypes, FloatOnlyUnaryOnAnInteger) {
  auto kernel = parse(k("  <i32> $0 = const 1\n  <i32> $1 = sin $0\n"));
  expect_one_error(*kernel, "<i32> $1 = sin $0", "sin needs a floating-point operand");
}

TEST(VerifierTypes, BitwiseAtomicOnAFloat) {
  auto kernel = parse(k("  <*f32> $0 = alloca\n  <f32> $1 = const 1\n  <f32> $2 = atomic bit_or($0, $1)\n"));
  expect_one_error(*kernel, "<f32> $2 = atomic bit_or($0, $1)", "atomic bit_or needs an integer type");
}

TEST(VerifierTypes, BitCastThatChangesTheWidth) {
  auto kernel = parse(k("  <f64> $0 = const 1\n  <i32> $1 = reinterpret_cast_bits<i32> $0\n"));
  expect_one_error(*kernel, "<i32> $1 = reinterpret_cast_bits<i32> $0", "changes the width");
}

TEST(VerifierTypes, GlobalPtrWithTheWrongNumberOfIndices) {
  auto kernel = parse("field m : f32[4, 4]\n" +
                      k("  <i32> $0 = const 0\n  <*f32> $1 = global ptr [m], index [$0] activate=true\n"));
  expect_one_error(*kernel, "<*f32> $1 = global ptr [m], index [$0] activate=true",
                   "field 'm' has 2 dimension(s) but is indexed with 1");
}

TEST(VerifierTypes, ExternalPtrWithTheWrongNumberOfIndices) {
  auto kernel = parse("arg 0 : ndarray<f32, 2>\n" + k("  <*f32> $0 = argload[0]\n  <i32> $1 = const 0\n  <*f32> $2 = "
                                                      "external_ptr $0, [$1] layout=AOS is_grad=false\n"));
  expect_one_error(*kernel, "<*f32> $2 = external_ptr $0, [$1] layout=AOS is_grad=false",
                   "ndarray argument 0 has 2 dimension(s) but is indexed with 1");
}

TEST(VerifierTypes, ArgloadOfAnUndeclaredArgumentWithoutHint) {
  auto kernel = parse(k("  $0 = argload[3]\n"));
  expect_one_error(*kernel, "$0 = argload[3]", "type of argument 3 is unknown");
}

TEST(VerifierTypes, TensorArgumentPassedByValue) {
  auto loaded_as_scalar = parse("arg 2 : [Tensor (2) f32]\n" + k("  <f32> $0 = argload[2]\n"));
  expect_one_error(*loaded_as_scalar, "<f32> $0 = argload[2]", "disagrees with the type the operands give");
  auto as_ndarray =
      parse("arg 2 : [Tensor (2) f32]\n" + k("  <[Tensor (2) f32]> $0 = argload[2]\n  <i32> $1 = const 0\n"
                                             "  <*f32> $2 = external_ptr $0, [$1] layout=AOS is_grad=false\n"));
  expect_one_error(*as_ndarray, "<*f32> $2 = external_ptr $0, [$1] layout=AOS is_grad=false",
                   "argument 2 is a tensor passed by value, not an ndarray");
  auto whole = parse("arg 3 : f32 element 0 of arg 2\n" + k("  <[Tensor (2) f32]> $0 = argload[2]\n"));
  expect_one_error(*whole, "<[Tensor (2) f32]> $0 = argload[2]", "argument 2 is passed as its elements");
}

TEST(VerifierStructure, LoopIndexOfALoopThatDoesNotEncloseIt) {
  auto kernel = parse(
      k("  <i32> $0 = const 4\n  $1 : for in range($0, $0) block_dim=adaptive {\n  }\n  <i32> $2 = loop $1 index 0\n"));
  expect_one_error(*kernel, "<i32> $2 = loop $1 index 0", "loop index refers to $1, which is not an enclosing loop");
}

TEST(VerifierStructure, LoopIndexOfANonLoop) {
  auto kernel = parse(k("  <i32> $0 = const 4\n  $1 : while true {\n    <i32> $2 = loop $1 index 0\n  }\n"));
  auto errors = verify(*kernel);
  ASSERT_FALSE(errors.empty());
  for (const auto& e : errors) EXPECT_EQ(e.statement, "<i32> $2 = loop $1 index 0");
  EXPECT_NE(all_errors(errors).find("which is not a for loop"), std::string::npos) << all_errors(errors);
}

// BUG(ir/type_rules.cpp, LoopIndexStmt rule): the axis is checked against a range for (only 0)
// but not against the rank of a struct for's index space or field.
TEST(VerifierStructure, LoopIndexAxisBeyondTheStructForsRank) {
  auto kernel = parse("dense S : [4]\n" +
                      k("  $0 : struct for in S block_dim=adaptive {\n    <i32> $1 = loop $0 index 1\n  }\n"));
  expect_one_error(*kernel, "<i32> $1 = loop $0 index 1", "axis 1 is out of range");
}

TEST(VerifierStructure, StackOpOnANonStack) {
  auto kernel = parse(k("  <f32> $0 = const 1\n  <f32> $1 = stack load top $0\n"));
  expect_one_error(*kernel, "<f32> $1 = stack load top $0", "$0 is not a stack alloc");
}

TEST(VerifierStructure, LocalLoadFromAGlobalPointer) {
  auto kernel = parse("field x : f32[]\n" +
                      k("  <*f32> $0 = global ptr [x], index [] activate=true\n  <f32> $1 = local load [$0]\n"));
  expect_one_error(*kernel, "<f32> $1 = local load [$0]", "local load source $0 is not an alloca");
}

TEST(VerifierStructure, WhileControlMaskMustBeAnIntegerAlloca) {
  auto kernel = parse(
      k("  <*f32> $0 = alloca\n  <u1> $1 = const true\n  $2 : while true {\n    $3 : while control $0, $1\n  }\n"));
  expect_one_error(*kernel, "$3 : while control $0, $1", "while control mask $0 must be an integer alloca");
}

TEST(VerifierStructure, ContinueOutsideALoop) {
  expect_one_error(*parse(k("  $0 continue\n")), "$0 continue", "continue outside a loop");
  expect_one_error(*parse(k("  <i32> $0 = const 1\n  $1 : if $0 {\n    $2 continue\n  }\n")), "$2 continue",
                   "continue outside a loop");
}

TEST(VerifierStructure, WhileControlOutsideAWhile) {
  auto kernel =
      parse(k("  <i32> $0 = const 1\n  <*i32> $1 = alloca\n  $2 : for in range($0, $0) block_dim=adaptive {\n"
              "    $3 : while control $1, $0\n  }\n"));
  expect_one_error(*kernel, "$3 : while control $1, $0", "while control outside a while loop");
}

TEST(VerifierStructure, StructForNotAtTopLevel) {
  auto kernel = parse("dense S : [4]\n" + k("  <i32> $0 = const 1\n  $1 : for in range($0, $0) block_dim=adaptive {\n"
                                            "    $2 : struct for in S block_dim=adaptive {\n    }\n  }\n"));
  expect_one_error(*kernel, "$2 : struct for in S block_dim=adaptive {",
                   "struct for must be at the kernel's top level");
}

TEST(VerifierStructure, StructForOverAnUnknownSpace) {
  Kernel kernel;
  Builder b(kernel);
  b.struct_for("nowhere");
  expect_one_error(kernel, "$0 : struct for in nowhere block_dim=adaptive {", "neither an index space nor a field");
}

TEST(VerifierStructure, DuplicateIds) {
  auto kernel = parse(k("  <i32> $0 = const 1\n  <i32> $1 = const 2\n"));
  by_id(*kernel, 1)->id = 0;
  expect_one_error(*kernel, "<i32> $0 = const 2", "id $0 is used by two statements");
}

TEST(Verifier, ErrorFormatQuotesTheStatement) {
  auto errors = verify(*parse(k("  <f32> $0 = const 1\n  $1 : if $0 {\n  }\n")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].format(), "in `$1 : if $0 {`: if condition $0 must be an integer, not f32");
}

}  // namespace
}  // namespace pb::ir

namespace pb::ir {
namespace {

// The kinds no backend compiles: their operands are typed like every other kind's.
TEST(VerifierNoBackendKinds, EmptyAssumedRangeNonValueHintAndNonPointerSNodeCell) {
  expect_one_error(*parse(k("  <i32> $0 = const 0\n  <i32> $1 = assume_in_range($0+4 <= $0 < $0+4)\n")),
                   "<i32> $1 = assume_in_range($0+4 <= $0 < $0+4)", "assume_in_range's range [4, 4) is empty");
  expect_one_error(*parse(k("  <*i32> $0 = alloca\n  <*i32> $1 = loop_unique($0)\n")), "<*i32> $1 = loop_unique($0)",
                   "loop_unique input $0 is not a value");
  expect_one_error(*parse(k("  <i32> $0 = const 0\n  <u1> $1 = is_active [S1dense] ptr = $0\n")),
                   "<u1> $1 = is_active [S1dense] ptr = $0", "SNode op pointer $0 is not a pointer");
}

}  // namespace
}  // namespace pb::ir

namespace pb::ir {
namespace {

// Mesh statements: integer indices, inside a mesh for or mesh_for task; a mesh for at the top.
TEST(VerifierMesh, IndicesAreIntegers) {
  std::string head = "  $0 : mesh for (verts -> edges) none{\n    <i32> $1 = loop $0 index 0\n";
  expect_one_error(*parse(k(head + "    <f32> $2 = const 1\n    <u16> $3 = $1 idx relation edges[$2]\n  }\n")),
                   "<u16> $3 = $1 idx relation edges[$2]", "mesh relation neighbor index $2 must be an integer");
  expect_one_error(*parse(k(head + "    <f32> $2 = const 1\n    <i32> $3 = local to global verts $2\n  }\n")),
                   "<i32> $3 = local to global verts $2", "mesh index conversion input $2 must be an integer");
  expect_one_error(*parse(k(head + "    <f32> $2 = mesh patch idx\n  }\n")), "<f32> $2 = mesh patch idx",
                   "type <f32> disagrees with the type the operands give, <i32>");
}

TEST(VerifierMesh, MeshStatementsOutsideAMeshLoop) {
  expect_one_error(*parse(k("  <i32> $0 = mesh patch idx\n")), "<i32> $0 = mesh patch idx",
                   "a mesh_patch_index statement is only meaningful inside a mesh for or a mesh_for task");
  expect_one_error(*parse(k("  <i32> $0 = const 0\n  $1 : for in range($0, $0) block_dim=adaptive {\n"
                            "    <i32> $2 = loop $1 index 0\n    <u16> $3 = $2 idx relation edges size\n  }\n")),
                   "<u16> $3 = $2 idx relation edges size",
                   "a mesh_relation_access statement is only meaningful inside a mesh for");
  expect_one_error(*parse(k("  $0 = offloaded\n  body {\n    <i32> $1 = const 0\n"
                            "    <i32> $2 = local to global verts $1\n  }\n")),
                   "<i32> $2 = local to global verts $1", "only meaningful inside a mesh for or a mesh_for task");
}

TEST(VerifierMesh, MeshForAtTheTopAndItsIndexAxisZero) {
  expect_one_error(*parse(k("  <i32> $0 = const 0\n  $1 : for in range($0, $0) block_dim=adaptive {\n"
                            "    $2 : mesh for (faces -> Unknown) none{\n    }\n  }\n")),
                   "$2 : mesh for (faces -> Unknown) none{", "mesh for must be at the kernel's top level");
  expect_one_error(*parse(k("  $0 : mesh for (cells -> verts) none{\n    <i32> $1 = loop $0 index 1\n  }\n")),
                   "<i32> $1 = loop $0 index 1", "loop index axis 1 is out of range for loop $0");
  expect_valid(
      k("  $0 : mesh for (cells -> verts) none{\n    <i32> $1 = loop $0 index 0\n"
        "    <u1> $2 = const true\n    $3 : if $2 {\n      $4 continue\n    }\n  }\n"));
}

TEST(VerifierMesh, ExternalTensorBasePtrOfAScalarArgument) {
  expect_one_error(*parse("arg 0 : i32\n" + k("  <*i32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=false)\n")),
                   "<*i32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=false)",
                   "external_tensor_base_ptr reads argument 0, which is not an ndarray");
  expect_valid("arg 0 : ndarray<i32, 1>\n" + k("  <*i32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=true)\n"));
}

}  // namespace
}  // namespace pb::ir
