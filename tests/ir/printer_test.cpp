// Printer: the canonical text is what Quadrants writes; printing a parsed canonical dump gives
// the input back byte for byte, and printing is idempotent for every dialect the parser reads.
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

constexpr const char* kExample = R"chi(kernel {
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
)chi";

constexpr const char* kWithHeader = R"chi(dense S1 : [8, 8]
field x : f32[8, 8] grad x_grad dual x_dual in S1
field n : i32[]
arg 0 : f32
arg 1 : ndarray<f64, 2>
kernel "saxpy" {
  <f32> $0 = argload[0]
  <*f64> $1 = argload[1]
  $2 : struct for in S1 noneblock_dim=128 {
    <i32> $3 = loop $2 index 0
    <i32> $4 = loop $2 index 1
    <*f32> $5 = global ptr [x_grad], index [$3, $4] activate=false
    <f32> $6 = global load volatile $5
    <*f64> $7 = external_ptr $1, [$3, $4] layout=AOS is_grad=true
    <*i32> $8 = alloca
    $9 : while true {
      <i32> $10 = local load [$8]
      <u1> $11 = cmp_ne $10 $3
      $12 : while control $8, $11
      $13 continue
    }
    print "v = ", $6, " \"q\" \\ \t\n"
    15 : assert $11, "raw %d, text", $3, $4
  }
  <i32> $16 = const 3
  $17 : for in range($16, $16) block_dim=adaptive  loop_name=inner{
  }
}
)chi";

TEST(Printer, CanonicalTextPrintsBackUnchanged) {
  EXPECT_EQ(print_kernel(*parse(kExample)), kExample);
  EXPECT_EQ(print_kernel(*parse(kWithHeader)), kWithHeader);
}

TEST(Printer, PrintingAParsedPrintIsIdempotent) {
  const char* old_dump =
      "kernel {\n  <i32 x1> $0 = const [0]\n  <f32*x1> $1 = global ptr [S1place_f32], index [$0] activate=true\n"
      "  $2 = cast_value<f32> $0\n  $3 : for in range($0, $0) (vectorize 1) block_dim=adaptive {\n"
      "    $4 = loop $3 index 0\n    print $4, \"\n\"\n  }\n}\n";
  for (const char* text : {kExample, kWithHeader, old_dump}) {
    std::string once = print_kernel(*parse(text));
    EXPECT_EQ(print_kernel(*parse(once)), once);
  }
}

TEST(Printer, RenumberGivesDensePreorderIdsWithContainersBeforeChildren) {
  auto k = parse(
      "kernel {\n"
      "  <i32> $10 = const 0\n"
      "  $40 : if $10 {\n"
      "    <i32> $7 = const 1\n"
      "  } else {\n"
      "    $90 : for in range($10, $10) block_dim=adaptive {\n"
      "      <i32> $3 = loop $90 index 0\n"
      "    }\n"
      "  }\n"
      "  <i32> $55 = add $10 $10\n"
      "}\n");
  k->renumber();
  EXPECT_EQ(print_kernel(*k),
            "kernel {\n"
            "  <i32> $0 = const 0\n"
            "  $1 : if $0 {\n"
            "    <i32> $2 = const 1\n"
            "  } else {\n"
            "    $3 : for in range($0, $0) block_dim=adaptive {\n"
            "      <i32> $4 = loop $3 index 0\n"
            "    }\n"
            "  }\n"
            "  <i32> $5 = add $0 $0\n"
            "}\n");
  EXPECT_EQ(k->fresh_id(), 6);
}

TEST(Printer, RenumberCanStartAtAnOffset) {
  auto k = parse(kExample);
  k->renumber(100);
  auto all = collect_preorder(k->root());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i]->id, 100 + static_cast<int>(i));
  EXPECT_EQ(k->fresh_id(), 100 + static_cast<int>(all.size()));
}

TEST(Printer, PrintStmtGivesOneLineWithoutIndentOrBody) {
  auto k = parse(kWithHeader);
  auto all = collect_preorder(k->root());
  auto line = [&](int id) {
    for (Stmt* s : all)
      if (s->id == id && !isa<PrintStmt>(s)) return print_stmt(*s, *k);
    return std::string("<none>");
  };
  EXPECT_EQ(line(5), "<*f32> $5 = global ptr [x_grad], index [$3, $4] activate=false");
  EXPECT_EQ(line(2), "$2 : struct for in S1 noneblock_dim=128 {");
  EXPECT_EQ(line(9), "$9 : while true {");
  EXPECT_EQ(line(13), "$13 continue");
  EXPECT_EQ(line(15), "15 : assert $11, \"raw %d, text\", $3, $4");
  EXPECT_EQ(line(17), "$17 : for in range($16, $16) block_dim=adaptive  loop_name=inner{");
  for (Stmt* s : all) {
    if (!isa<PrintStmt>(s)) continue;
    EXPECT_EQ(print_stmt(*s, *k), "print \"v = \", $6, \" \\\"q\\\" \\\\ \\t\\n\"");
  }
}

TEST(Printer, HeaderListsDeclaredFieldsOnceAndSkipsInferredOnes) {
  auto k =
      parse("field x : f32[4] grad gx\nkernel {\n  <*i32> $0 = global ptr [S9place<i32>], index [] activate=true\n}\n");
  EXPECT_EQ(k->fields().size(), 3u);
  EXPECT_EQ(print_header(*k), "field x : f32[4] grad gx\n");
  PrintOptions no_header;
  no_header.header = false;
  EXPECT_EQ(print_kernel(*k, no_header),
            "kernel {\n  <*i32> $0 = global ptr [S9place<i32>], index [] activate=true\n}\n");
}

TEST(Printer, EnsureGradAddsACompanionThatPrintsAndParsesBack) {
  auto k = parse("field x : f32[4]\nkernel {\n}\n");
  FieldId g = k->ensure_grad(*k->find_field("x"));
  EXPECT_EQ(k->field(g).name, "x.grad");
  EXPECT_EQ(k->ensure_grad(*k->find_field("x")), g);
  std::string text = print_kernel(*k);
  EXPECT_EQ(text, "field x : f32[4] grad x.grad\nkernel {\n}\n");
  auto back = parse(text);
  ASSERT_TRUE(back->find_field("x.grad"));
  EXPECT_EQ(back->field(*back->find_field("x.grad")).primal, back->find_field("x"));
}

TEST(Printer, ErasedOperandPrintsAsErased) {
  auto k = parse("kernel {\n  <f32> $0 = const 1\n  <f32> $1 = neg $0\n}\n");
  k->root().erase(k->root().front());
  EXPECT_EQ(print_kernel(*k), "kernel {\n  <f32> $1 = neg $<erased>\n}\n");
}

TEST(Printer, AnnotationsAreTrailingCommentsThatParseBack) {
  auto k = parse(kExample);
  PrintOptions opts;
  opts.annotate = [](const Stmt& s) { return s.id % 2 ? "odd " + std::to_string(s.id) : std::string(); };
  std::string annotated = print_kernel(*k, opts);
  EXPECT_NE(annotated.find("  <i32> $1 = const 0  # odd 1\n"), std::string::npos);
  EXPECT_NE(annotated.find("  <i32> $2 = argload[0]\n"), std::string::npos);
  EXPECT_NE(annotated.find("  $19 : global store [$6 <- $14]  # odd 19\n"), std::string::npos);
  EXPECT_EQ(print_kernel(*parse(annotated)), kExample);
}

TEST(Printer, KernelNameIsQuotedAndEscaped) {
  auto k = parse("kernel {\n}\n");
  k->name = "my \"k\"";
  EXPECT_EQ(print_kernel(*k), "kernel \"my \\\"k\\\"\" {\n}\n");
  EXPECT_EQ(parse(print_kernel(*k))->name, "my \"k\"");
  EXPECT_EQ(print_kernel(*parse("kernel plain {\n}\n")), "kernel \"plain\" {\n}\n");
}

TEST(Printer, ConstantsUseTheShortestRoundTripText) {
  Kernel k;
  for (Value v : {Value::make_f32(0.95f), Value::make_f32(1.0f), Value::make_f32(1e-5f), Value::make_f64(0.1),
                  Value::make_f32(16777216.0f), Value::make_f64(1e16), Value::make_f32(-0.0f), Value::make_bool(true),
                  Value::make_u64(UINT64_MAX)})
    k.root().push_back(k.make<ConstStmt>(v));
  EXPECT_EQ(print_kernel(k),
            "kernel {\n"
            "  <f32> $0 = const 0.95\n"
            "  <f32> $1 = const 1\n"
            "  <f32> $2 = const 1e-05\n"
            "  <f64> $3 = const 0.1\n"
            "  <f32> $4 = const 16777216\n"
            "  <f64> $5 = const 1e+16\n"
            "  <f32> $6 = const -0\n"
            "  <u1> $7 = const true\n"
            "  <u64> $8 = const 18446744073709551615\n"
            "}\n");
}

TEST(Printer, ShapeToString) {
  EXPECT_EQ(shape_to_string({}), "[]");
  EXPECT_EQ(shape_to_string({16}), "[16]");
  EXPECT_EQ(shape_to_string({4, 8, 2}), "[4, 8, 2]");
}

}  // namespace
}  // namespace pb::ir
