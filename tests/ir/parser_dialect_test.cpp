// Parser: the older Taichi dialects (0.5-0.6 printers: width hints, bracketed constants,
// untyped lowered statements, loop variables), which must come back in the modern form.
#include <gtest/gtest.h>

#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

// Wraps two-space-indented statement lines in a header-less kernel.
std::string kernel_text(std::string_view body) { return "kernel {\n" + std::string(body) + "}\n"; }

// Taichi 0.6.2x, `print_ir` after simplify: width hints, bracketed constants, (vectorize 1),
// lane-list local loads, `S6place_f32` names.
constexpr const char* kTaichiOld1781 = R"chi(kernel {
  <i32 x1> $0 = const [5]
  <i32 x1> $1 = const [0]
  <i32 x1> $2 = const [1]
  <i32 x1> $3 = const [10]
  $4 : for in range($1, $3) (vectorize 1) block_dim=adaptive {
    <i32 x1> $5 = loop $4 index 0
    <f32*x1> $6 = global ptr [S6place_f32], index [$5] activate=true
    <f32 x1> $7 = global load $6
    <f32*x1> $8 = global ptr [S10place_f32], index [] activate=true
    <f32 x1> $9 = atomic add($8, $7)
  }
  $10 : for in range($1, $0) (vectorize 1) block_dim=adaptive {
    <i32 x1> $11 = alloca
    <i32 x1> $12 = alloca
    <i32 x1> $13 : local store [$12 <- $2]
    $14 : for in range($1, $0) (vectorize 1) block_dim=adaptive {
      <i32 x1> $15 = local load [ [$12[0]]]
      <i32 x1> $16 = local load [ [$11[0]]]
      <i32 x1> $17 = add $16 $15
      <i32 x1> $18 : local store [$11 <- $15]
      <i32 x1> $19 : local store [$12 <- $17]
      <f32*x1> $20 = global ptr [S2place_f32], index [$17] activate=true
      <f32 x1> $21 = global load $20
      <f32*x1> $22 = global ptr [S6place_f32], index [$17] activate=true
      <f32 x1> $23 = atomic add($22, $21)
    }
  }
}
)chi";

constexpr const char* kTaichiOld1781Modern = R"chi(kernel {
  <i32> $0 = const 5
  <i32> $1 = const 0
  <i32> $2 = const 1
  <i32> $3 = const 10
  $4 : for in range($1, $3) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f32> $6 = global ptr [S6place_f32], index [$5] activate=true
    <f32> $7 = global load $6
    <*f32> $8 = global ptr [S10place_f32], index [] activate=true
    <f32> $9 = atomic add($8, $7)
  }
  $10 : for in range($1, $0) block_dim=adaptive {
    <*i32> $11 = alloca
    <*i32> $12 = alloca
    <i32> $13 : local store [$12 <- $2]
    $14 : for in range($1, $0) block_dim=adaptive {
      <i32> $15 = local load [$12]
      <i32> $16 = local load [$11]
      <i32> $17 = add $16 $15
      <i32> $18 : local store [$11 <- $15]
      <i32> $19 : local store [$12 <- $17]
      <*f32> $20 = global ptr [S2place_f32], index [$17] activate=true
      <f32> $21 = global load $20
      <*f32> $22 = global ptr [S6place_f32], index [$17] activate=true
      <f32> $23 = atomic add($22, $21)
    }
  }
}
)chi";

// Taichi 0.6.1x lowered dump: statements without a type hint and a print literal holding a
// raw newline.
constexpr const char* kTaichiOld1390 = R"chi(kernel {
  <i32 x1> $0 = const [0]
  <i32 x1> $1 = global ptr [S2place_i32], index [] activate=true
  $2 : global store [$1 <- $0]
  <i32 x1> $3 = const [0]
  $4 = cast_value<i32> $3
  <i32 x1> $5 = const [10]
  $6 = cast_value<i32> $5
  $7 : for in range($4, $6) (vectorize 1) block_dim=adaptive {
    $8 = loop $7 index 0
    print $8, "
"
  }
  <i32 x1> $10 = const [1]
  <i32 x1> $11 = global ptr [S2place_i32], index [] activate=true
  $12 : global store [$11 <- $10]
}
)chi";

constexpr const char* kTaichiOld1390Modern = R"chi(kernel {
  <i32> $0 = const 0
  <*i32> $1 = global ptr [S2place_i32], index [] activate=true
  $2 : global store [$1 <- $0]
  <i32> $3 = const 0
  <i32> $4 = cast_value<i32> $3
  <i32> $5 = const 10
  <i32> $6 = cast_value<i32> $5
  $7 : for in range($4, $6) block_dim=adaptive {
    <i32> $8 = loop $7 index 0
    print $8, "\n"
  }
  <i32> $10 = const 1
  <*i32> $11 = global ptr [S2place_i32], index [] activate=true
  $12 : global store [$11 <- $10]
}
)chi";

TEST(ParserOldDialect, SimplifiedDumpPrintsInTheModernForm) {
  auto k = parse(kTaichiOld1781);
  EXPECT_EQ(print_kernel(*k), kTaichiOld1781Modern);
  EXPECT_TRUE(verify(*k).empty());
  EXPECT_EQ(print_kernel(*parse(kTaichiOld1781Modern)), kTaichiOld1781Modern);
}

TEST(ParserOldDialect, LoweredDumpWithUntypedStatementsPrintsInTheModernForm) {
  auto k = parse(kTaichiOld1390);
  EXPECT_EQ(print_kernel(*k), kTaichiOld1390Modern);
  EXPECT_TRUE(verify(*k).empty());
  auto* p = dyn_cast<PrintStmt>(collect_preorder(k->root())[9]);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::get<std::string>(p->items[1]), "\n");
}

TEST(ParserOldDialect, WidthHintsBracketedConstantsAndLoopAttributes) {
  auto k = parse(
      kernel_text("  <u1  x1> $0 = const [1]\n  <i32 x1> $1 = arg[0]\n  <i32 x1> $2 = alloca\n"
                  "  <i32 x1> $3 = global ptr [S2place_i32], index [] activate=true\n  <f32 x1> $4 = const [1.0]\n"
                  "  $5 : for in range($1, $1, step 1) {\n  }\n"
                  "  $6 : for in range($1, $1) (vectorize 1) (bit_vectorize -1) block_dim=adaptive {\n  }\n"
                  "  <i32 x1> $7 = cmp_lt $1 $1\n"));
  EXPECT_EQ(print_kernel(*k),
            kernel_text("  <u1> $0 = const true\n  <i32> $1 = argload[0]\n  <*i32> $2 = alloca\n"
                        "  <*i32> $3 = global ptr [S2place_i32], index [] activate=true\n  <f32> $4 = const 1\n"
                        "  $5 : for in range($1, $1) block_dim=adaptive {\n  }\n"
                        "  $6 : for in range($1, $1) block_dim=adaptive {\n  }\n"
                        "  <i32> $7 = cmp_lt $1 $1\n"));
  EXPECT_TRUE(verify(*k).empty());
}

}  // namespace
}  // namespace pb::ir

namespace pb::ir {
namespace {

// Taichi 0.5 loops name a variable that each iteration writes its index to, numbered
// (`$10 : for $7 in range(...)`) or not (`for $3 in range(...)`); `shuffle $X[0]` is $X.
TEST(ParserDialect, Taichi05LoopVariablesAndShuffleReadAsTodaysStatements) {
  auto k = parse(kernel_text(
      "  <i32 x1> $0 = alloca\n  <i32 x1> $1 = const [0]\n  <i32 x1> $3 = alloca\n  <i32 x1> $4 = const [10]\n"
      "  for $3 in range($1, $4, step 1) {\n    <i32 x1> $7 = local load [ [$3[0]]]\n"
      "    <i32 x1> $9 = atomic add($0, $7)\n  }\n"
      "  $10 : for $0 in range($1, $4, step 1) {\n  }\n"
      "  <i32 x1> $11 = shuffle $4[0]\n  <i32 x1> $12 = add $11 $11\n"));
  EXPECT_EQ(print_kernel(*k),
            kernel_text("  <*i32> $0 = alloca\n  <i32> $1 = const 0\n  <*i32> $3 = alloca\n  <i32> $4 = const 10\n"
                        "  $13 : for in range($1, $4) block_dim=adaptive {\n    <i32> $14 = loop $13 index 0\n"
                        "    <i32> $15 : local store [$3 <- $14]\n    <i32> $7 = local load [$3]\n"
                        "    <i32> $9 = atomic add($0, $7)\n  }\n"
                        "  $10 : for in range($1, $4) block_dim=adaptive {\n    <i32> $16 = loop $10 index 0\n"
                        "    <i32> $17 : local store [$0 <- $16]\n  }\n"
                        "  <i32> $12 = add $4 $4\n"));
  EXPECT_TRUE(verify(*k).empty());
}

// Taichi <= 0.6 wrote the base of an external pointer in angle brackets (taichi #2884's dump).
TEST(ParserDialect, ExternalPtrWithAnAngledBaseReadsAndPrintsInTodaysForm) {
  auto k = parse_kernel(
      "kernel {\n  <i32> $0 = const [0]\n  <*f64> $1 = arg[0]\n  <*f64> $2 = external_ptr <$1>, [$0]\n}\n", "t.chi");
  EXPECT_EQ(print_kernel(*k),
            "kernel {\n  <i32> $0 = const 0\n  <*f64> $1 = argload[0]\n  <*f64> $2 = external_ptr $1, [$0] layout=AOS "
            "is_grad=false\n}\n");
}

}  // namespace
}  // namespace pb::ir
