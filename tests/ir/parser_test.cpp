// Parser: every statement kind of the modern (Quadrants) dialect, the header and header-less
// dumps (the older Taichi dialects: parser_dialect_test.cpp).
#include "ir/parser.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

// Wraps two-space-indented statement lines in a header-less kernel.
std::string kernel_text(std::string_view body) { return "kernel {\n" + std::string(body) + "}\n"; }

// The statements of the kernel in pre-order.
std::vector<Stmt*> stmts(const Kernel& k) { return collect_preorder(k.root()); }

// Parses `text`, checks that it prints back unchanged and verifies cleanly, and returns it.
std::unique_ptr<Kernel> parse_canonical(const std::string& text) {
  auto k = parse(text);
  EXPECT_EQ(print_kernel(*k), text);
  for (const auto& e : verify(*k)) ADD_FAILURE() << "verifier: " << e.format();
  return k;
}

TEST(ParserModern, ConstantsOfEveryTypeKeepTheirValue) {
  auto k = parse_canonical(
      kernel_text("  <u1> $0 = const true\n  <u1> $1 = const false\n  <i32> $2 = const -7\n"
                  "  <i64> $3 = const -9223372036854775808\n  <u32> $4 = const 4294967295\n"
                  "  <u64> $5 = const 18446744073709551615\n  <f32> $6 = const 1e-05\n  <f32> $7 = const inf\n"
                  "  <f32> $8 = const nan\n  <f32> $9 = const -0\n  <f64> $10 = const 0.1\n  <f64> $11 = const -inf\n"
                  "  <f32> $12 = const 0.95\n"));
  const std::vector<Value> expected = {
      Value::make_bool(true),      Value::make_bool(false),     Value::make_i32(-7),    Value::make_i64(INT64_MIN),
      Value::make_u32(UINT32_MAX), Value::make_u64(UINT64_MAX), Value::make_f32(1e-5f), Value::make_f32(INFINITY),
      Value::make_f32(NAN),        Value::make_f32(-0.0f),      Value::make_f64(0.1),   Value::make_f64(-INFINITY),
      Value::make_f32(0.95f)};
  auto s = stmts(*k);
  ASSERT_EQ(s.size(), expected.size());
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_TRUE(dyn_cast<ConstStmt>(s[i])->value.identical(expected[i])) << "$" << i;
    EXPECT_EQ(s[i]->type, DataType::of(expected[i].kind())) << "$" << i;
  }
}

TEST(ParserModern, HintlessConstantInfersItsKindFromTheText) {
  auto k =
      parse(kernel_text("  $0 = const 3\n  $1 = const 1.5\n  $2 = const true\n  $3 = const nan\n  $4 = const 1e-05\n"));
  EXPECT_EQ(print_kernel(*k), kernel_text("  <i32> $0 = const 3\n  <f32> $1 = const 1.5\n  <u1> $2 = const true\n"
                                          "  <f32> $3 = const nan\n  <f32> $4 = const 1e-05\n"));
}

TEST(ParserModern, ArgloadAllocaLocalAndGlobalLoadsAndStores) {
  auto k = parse_canonical("field x : f32[4]\n" +
                           kernel_text("  <f32> $0 = argload[0]\n  <*f32> $1 = alloca\n"
                                       "  <f32> $2 : local store [$1 <- $0]\n  <f32> $3 = local load [$1]\n"
                                       "  <i32> $4 = const 0\n  <*f32> $5 = global ptr [x], index [$4] activate=true\n"
                                       "  <f32> $6 = global load $5\n  <f32> $7 = global load volatile $5\n"
                                       "  $8 : global store [$5 <- $7]\n"));
  auto s = stmts(*k);
  EXPECT_EQ(dyn_cast<ArgLoadStmt>(s[0])->arg_index, 0);
  EXPECT_EQ(s[1]->type, DataType::pointer_to(ScalarKind::f32));
  auto* store = dyn_cast<LocalStoreStmt>(s[2]);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->dest(), s[1]);
  EXPECT_EQ(store->val(), s[0]);
  EXPECT_EQ(dyn_cast<LocalLoadStmt>(s[3])->src(), s[1]);
  EXPECT_FALSE(dyn_cast<GlobalLoadStmt>(s[6])->is_volatile);
  EXPECT_TRUE(dyn_cast<GlobalLoadStmt>(s[7])->is_volatile);
  auto* global_store = dyn_cast<GlobalStoreStmt>(s[8]);
  ASSERT_NE(global_store, nullptr);
  EXPECT_EQ(global_store->dest(), s[5]);
  EXPECT_FALSE(global_store->type.known());
}

TEST(ParserModern, GlobalPtrWithZeroOneAndTwoIndices) {
  auto k = parse_canonical("field s : f32[]\nfield v : f32[8]\nfield m : i32[4, 4]\n" +
                           kernel_text("  <i32> $0 = const 1\n"
                                       "  <*f32> $1 = global ptr [s], index [] activate=true\n"
                                       "  <*f32> $2 = global ptr [v], index [$0] activate=false\n"
                                       "  <*i32> $3 = global ptr [m], index [$0, $0] activate=true\n"));
  auto s = stmts(*k);
  auto* p0 = dyn_cast<GlobalPtrStmt>(s[1]);
  auto* p1 = dyn_cast<GlobalPtrStmt>(s[2]);
  auto* p2 = dyn_cast<GlobalPtrStmt>(s[3]);
  ASSERT_TRUE(p0 && p1 && p2);
  EXPECT_EQ(k->field(p0->field).name, "s");
  EXPECT_EQ(k->field(p0->field).shape, Shape{});
  EXPECT_EQ(p0->indices().size(), 0u);
  EXPECT_EQ(p1->indices().size(), 1u);
  EXPECT_FALSE(p1->activate);
  EXPECT_TRUE(p2->activate);
  EXPECT_EQ(p2->indices().size(), 2u);
  EXPECT_EQ(k->field(p2->field).shape, (Shape{4, 4}));
}

TEST(ParserModern, ExternalPtrIntoAnNdarrayArgument) {
  auto k = parse_canonical("arg 0 : i32\narg 1 : ndarray<f32, 1>\n" +
                           kernel_text("  <*f32> $0 = argload[1]\n  <i32> $1 = argload[0]\n"
                                       "  <*f32> $2 = external_ptr $0, [$1] layout=AOS is_grad=false\n"
                                       "  <f32> $3 = global load $2\n"));
  ASSERT_EQ(k->args.size(), 2u);
  EXPECT_TRUE(k->args[1].ndarray);
  EXPECT_EQ(k->args[1].ndim, 1);
  EXPECT_EQ(k->args[1].dtype, ScalarKind::f32);
  auto* e = dyn_cast<ExternalPtrStmt>(stmts(*k)[2]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->base(), stmts(*k)[0]);
  EXPECT_EQ(e->layout, "AOS");
  EXPECT_FALSE(e->is_grad);
}

// A tensor passed by value, as the reference prints its load; and the element arguments scalarize
// makes of one.
TEST(ParserModern, TensorArgumentPassedByValue) {
  auto k =
      parse_canonical("arg 2 : [Tensor (2, 2) f32]\n" +
                      kernel_text("  <[Tensor (2, 2) f32]> $0 = argload[2]\n  <f32> $1 = get_element($0, 1, 0)\n"));
  ASSERT_EQ(k->args.size(), 1u);
  EXPECT_FALSE(k->args[0].ndarray);
  EXPECT_TRUE(k->args[0].by_value_tensor());
  EXPECT_EQ(to_string(stmts(*k)[0]->type), "[Tensor (2, 2) f32]");

  auto e = parse_canonical("arg 3 : f32 element 1 of arg 2\n" + kernel_text("  <f32> $0 = argload[3]\n"));
  ASSERT_EQ(e->args.size(), 1u);
  EXPECT_EQ(e->args[0].element_of, 2);
  EXPECT_EQ(e->args[0].element, 1);
}

TEST(ParserModern, AtomicWithEveryOp) {
  for (std::string op : {"add", "sub", "mul", "min", "max", "bit_and", "bit_or", "bit_xor"}) {
    SCOPED_TRACE(op);
    std::string t = op.rfind("bit_", 0) == 0 ? "i32" : "f32";
    auto k = parse_canonical(fmt::format(
        "field x : {0}[]\nkernel {{\n  <{0}> $0 = const 1\n  <*{0}> $1 = global ptr [x], index [] activate=true\n"
        "  <{0}> $2 = atomic {1}($1, $0)\n}}\n",
        t, op));
    auto* a = dyn_cast<AtomicOpStmt>(stmts(*k)[2]);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(op_name(a->op), op);
  }
}

TEST(ParserModern, UnaryWithEveryOp) {
  const std::vector<std::string> float_ops = {"neg",  "sqrt", "rsqrt", "sin", "cos", "tan",   "tanh", "asin",
                                              "acos", "exp",  "log",   "abs", "sgn", "floor", "ceil", "round"};
  for (const auto& op : float_ops) {
    SCOPED_TRACE(op);
    auto k = parse_canonical(kernel_text("  <f32> $0 = const 0.5\n  <f32> $1 = " + op + " $0\n"));
    auto* u = dyn_cast<UnaryOpStmt>(stmts(*k)[1]);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(op_name(u->op), op);
  }
  for (std::string op : {"bit_not", "logic_not", "neg", "abs"}) {
    SCOPED_TRACE(op);
    parse_canonical(kernel_text("  <i32> $0 = const 5\n  <i32> $1 = " + op + " $0\n"));
  }
}

TEST(ParserModern, CastsCarryTheirTargetType) {
  auto k = parse_canonical(
      kernel_text("  <i32> $0 = const 3\n  <f32> $1 = cast_value<f32> $0\n  <i32> $2 = reinterpret_cast_bits<i32> $1\n"
                  "  <f64> $3 = cast_value<f64> $2\n"));
  auto s = stmts(*k);
  EXPECT_EQ(dyn_cast<UnaryOpStmt>(s[1])->op, UnaryOp::cast_value);
  EXPECT_EQ(s[1]->type, DataType::of(ScalarKind::f32));
  EXPECT_EQ(dyn_cast<UnaryOpStmt>(s[2])->op, UnaryOp::cast_bits);
  EXPECT_EQ(s[2]->type, DataType::of(ScalarKind::i32));
  EXPECT_EQ(s[3]->type, DataType::of(ScalarKind::f64));
}

TEST(ParserModern, BinaryWithEveryOp) {
  struct Case {
    std::string op, operand, result;
  };
  std::vector<Case> cases;
  for (std::string op : {"add", "sub", "mul", "div", "floordiv", "mod", "pow", "atan2", "max", "min"})
    cases.push_back({op, "f32", "f32"});
  for (std::string op : {"cmp_lt", "cmp_le", "cmp_gt", "cmp_ge", "cmp_eq", "cmp_ne"})
    cases.push_back({op, "f32", "u1"});
  for (std::string op : {"bit_and", "bit_or", "bit_xor", "bit_shl", "bit_shr", "bit_sar", "logical_and", "logical_or"})
    cases.push_back({op, "i32", "i32"});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op);
    auto k = parse_canonical(
        fmt::format("kernel {{\n  <{0}> $0 = const 2\n  <{0}> $1 = const 3\n  <{1}> $2 = {2} $0 $1\n}}\n", c.operand,
                    c.result, c.op));
    auto* b = dyn_cast<BinaryOpStmt>(stmts(*k)[2]);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(op_name(b->op), c.op);
    EXPECT_EQ(b->lhs(), stmts(*k)[0]);
    EXPECT_EQ(b->rhs(), stmts(*k)[1]);
  }
}

TEST(ParserModern, SelectTakesConditionThenBothValues) {
  auto k = parse_canonical(kernel_text(
      "  <f32> $0 = const 1\n  <f32> $1 = const 2\n  <u1> $2 = cmp_lt $0 $1\n  <f32> $3 = select($2, $0, $1)\n"));
  auto s = stmts(*k);
  auto* sel = dyn_cast<TernaryOpStmt>(s[3]);
  ASSERT_NE(sel, nullptr);
  EXPECT_EQ(sel->cond(), s[2]);
  EXPECT_EQ(sel->a(), s[0]);
  EXPECT_EQ(sel->b(), s[1]);
}

TEST(ParserModern, IfWithAndWithoutElse) {
  auto k = parse_canonical(kernel_text(
      "  <i32> $0 = const 1\n"
      "  $1 : if $0 {\n    <i32> $2 = const 2\n  } else {\n    <i32> $3 = const 3\n    <i32> $4 = const 4\n  }\n"
      "  $5 : if $0 {\n  }\n"));
  auto* with_else = dyn_cast<IfStmt>(k->root().front()->next());
  auto* without_else = dyn_cast<IfStmt>(k->root().back());
  ASSERT_TRUE(with_else && without_else);
  EXPECT_EQ(with_else->true_block->size(), 1u);
  ASSERT_NE(with_else->false_block, nullptr);
  EXPECT_EQ(with_else->false_block->size(), 2u);
  EXPECT_EQ(with_else->false_block->front()->parent_stmt(), with_else);
  EXPECT_TRUE(without_else->true_block->empty());
  EXPECT_EQ(without_else->false_block, nullptr);
}

TEST(ParserModern, RangeForReversedBlockDimAndLoopName) {
  auto k = parse_canonical(kernel_text(
      "  <i32> $0 = const 0\n  <i32> $1 = const 8\n"
      "  $2 : for in range($0, $1) block_dim=adaptive {\n  }\n"
      "  $3 : reversed for in range($0, $1) block_dim=adaptive {\n  }\n"
      "  $4 : for in range($0, $1) block_dim=64 {\n  }\n"
      "  $5 : for in range($0, $1) block_dim=adaptive  loop_name=foo{\n    <i32> $6 = loop $5 index 0\n  }\n"));
  auto s = stmts(*k);
  auto* plain = dyn_cast<RangeForStmt>(s[2]);
  auto* reversed = dyn_cast<RangeForStmt>(s[3]);
  auto* dim = dyn_cast<RangeForStmt>(s[4]);
  auto* named = dyn_cast<RangeForStmt>(s[5]);
  ASSERT_TRUE(plain && reversed && dim && named);
  EXPECT_FALSE(plain->reversed);
  EXPECT_EQ(plain->block_dim, 0);
  EXPECT_TRUE(reversed->reversed);
  EXPECT_EQ(dim->block_dim, 64);
  EXPECT_EQ(named->loop_name, "foo");
  EXPECT_EQ(named->begin(), s[0]);
  EXPECT_EQ(named->end(), s[1]);
  EXPECT_EQ(dyn_cast<LoopIndexStmt>(s[6])->loop(), named);
}

TEST(ParserModern, StructForOverADeclaredSpaceAnInferredSpaceAndAField) {
  const std::string body =
      "  $0 : struct for in S1dense noneblock_dim=adaptive {\n    <i32> $1 = loop $0 index 0\n  }\n";
  auto declared = parse_canonical("dense S1dense : [16]\n" + kernel_text(body));
  auto* f = dyn_cast<StructForStmt>(declared->root().front());
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->space, "S1dense");
  EXPECT_TRUE(f->none_marker);
  EXPECT_EQ(declared->find_space("S1dense")->shape, Shape{16});

  auto inferred = parse_canonical(kernel_text(body));
  ASSERT_NE(inferred->find_space("S1dense"), nullptr);
  EXPECT_FALSE(inferred->find_space("S1dense")->declared);
  EXPECT_FALSE(inferred->find_space("S1dense")->shape.has_value());

  auto over_field = parse_canonical(
      "field x : f32[8]\n" + kernel_text("  $0 : struct for in x block_dim=adaptive {\n    <i32> $1 = loop $0 index 0\n"
                                         "    <*f32> $2 = global ptr [x], index [$1] activate=true\n  }\n"));
  auto* g = dyn_cast<StructForStmt>(over_field->root().front());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->space, "x");
  EXPECT_FALSE(g->none_marker);
  EXPECT_TRUE(over_field->spaces.empty());
}

TEST(ParserModern, WhileControlAndContinue) {
  auto k =
      parse_canonical(kernel_text("  <i32> $0 = const 1\n  <*i32> $1 = alloca\n"
                                  "  $2 : while true {\n    $3 : while control $1, $0\n    $4 continue\n  }\n"));
  auto s = stmts(*k);
  auto* w = dyn_cast<WhileStmt>(s[2]);
  auto* control = dyn_cast<WhileControlStmt>(s[3]);
  ASSERT_TRUE(w && control);
  EXPECT_EQ(control->mask(), s[1]);
  EXPECT_EQ(control->cond(), s[0]);
  EXPECT_TRUE(isa<ContinueStmt>(s[4]));
  EXPECT_EQ(s[4]->id, 4);
  EXPECT_EQ(s[4]->parent_stmt(), w);
}

TEST(ParserModern, AContinueKeepsItsScope) {
  // As the reference prints it: the scope is the loop the continue skips, here a while inside a
  // range for; it follows the loop through renumbering and JSON.
  const std::string body =
      "  <i32> $0 = const 0\n  <i32> $1 = const 4\n  $2 : for in range($0, $1) block_dim=adaptive {\n"
      "    $3 continue (scope=$2)\n    $4 : while true {\n      $5 continue (scope=$4)\n    }\n    $6 continue\n  }\n";
  auto k = parse_canonical(kernel_text(body));
  EXPECT_TRUE(dyn_cast<ContinueStmt>(stmts(*k)[3])->scoped);
  EXPECT_FALSE(dyn_cast<ContinueStmt>(stmts(*k)[6])->scoped);
  EXPECT_EQ(print_kernel(*from_json(to_json(*k))), kernel_text(body));
  // One printer printed the continue's own number as its scope; read as the loop it skips.
  auto own = parse(kernel_text("  $0 : while true {\n    $1 continue (scope=$1)\n  }\n"));
  EXPECT_EQ(print_kernel(*own), kernel_text("  $0 : while true {\n    $1 continue (scope=$0)\n  }\n"));
}

TEST(ParserModern, AContinueScopeOtherThanItsLoopIsALocatedError) {
  try {
    parse(
        kernel_text("  <i32> $0 = const 0\n  $1 : for in range($0, $0) block_dim=adaptive {\n"
                    "    $2 : while true {\n      $3 continue (scope=$1)\n    }\n  }\n"));
    FAIL() << "accepted a continue scoped to an outer loop";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().line, 5);
    EXPECT_NE(e.diagnostic().message.find("the innermost loop around it is $2"), std::string::npos)
        << e.diagnostic().message;
  }
}

TEST(ParserModern, TheSixStackStatements) {
  auto k =
      parse_canonical(kernel_text("  <f32> $0 = const 1\n  <f32> $1 = stack alloc (max_size=16)\n"
                                  "  <f32> $2 : stack push $1, val = $0\n  <f32> $3 = stack load top $1\n"
                                  "  <f32> $4 = stack load top adj $1\n  <f32> $5 : stack acc adj $1, val = $0\n"
                                  "  <f32> $6 : stack pop $1\n"));
  auto s = stmts(*k);
  EXPECT_EQ(dyn_cast<AdStackAllocaStmt>(s[1])->max_size, 16);
  EXPECT_EQ(dyn_cast<AdStackPushStmt>(s[2])->val(), s[0]);
  EXPECT_EQ(dyn_cast<AdStackLoadTopStmt>(s[3])->stack(), s[1]);
  EXPECT_EQ(dyn_cast<AdStackLoadTopAdjStmt>(s[4])->stack(), s[1]);
  EXPECT_EQ(dyn_cast<AdStackAccAdjointStmt>(s[5])->val(), s[0]);
  EXPECT_EQ(dyn_cast<AdStackPopStmt>(s[6])->stack(), s[1]);
}

TEST(ParserModern, PrintHasNoIdAndKeepsItsItemsInOrder) {
  auto k = parse_canonical(kernel_text("  <i32> $5 = const 7\n  print \"x = \", $5, \"\\n\"\n"));
  auto* p = dyn_cast<PrintStmt>(k->root().back());
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->items.size(), 3u);
  EXPECT_EQ(std::get<std::string>(p->items[0]), "x = ");
  EXPECT_EQ(p->operand(std::get<size_t>(p->items[1])), k->root().front());
  EXPECT_EQ(std::get<std::string>(p->items[2]), "\n");
  EXPECT_NE(p->id, 5);
}

TEST(ParserModern, AssertHasABareIdAndARawMessage) {
  auto k = parse_canonical(
      kernel_text("  <i32> $3 = const 1\n  <u1> $14 = cmp_lt $3 $3\n  15 : assert $14, \"msg %d\", $3\n"));
  auto* a = dyn_cast<AssertStmt>(k->root().back());
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->id, 15);
  EXPECT_EQ(a->message, "msg %d");
  ASSERT_EQ(a->args().size(), 1u);
  EXPECT_EQ(a->args()[0]->id, 3);
}

TEST(ParserModern, HeaderDeclaresFieldsCompanionsSpacesArgsAndTheKernelName) {
  auto k = parse_canonical(
      "dense S1 : [4, 4]\nfield x : f32[16] grad x_grad dual x_dual\nfield y : i32[4, 4] in S1\n"
      "arg 0 : i32\narg 1 : ndarray<f64, 2>\nkernel \"my_kernel\" {\n}\n");
  EXPECT_EQ(k->name, "my_kernel");
  FieldId x = *k->find_field("x");
  ASSERT_TRUE(k->field(x).grad && k->field(x).dual);
  const Field& grad = k->field(*k->field(x).grad);
  EXPECT_EQ(grad.name, "x_grad");
  EXPECT_EQ(grad.primal, x);
  EXPECT_EQ(grad.shape, Shape{16});
  EXPECT_EQ(grad.dtype, ScalarKind::f32);
  EXPECT_EQ(k->field(*k->field(x).dual).name, "x_dual");
  EXPECT_EQ(k->field(*k->find_field("y")).space, "S1");
  EXPECT_TRUE(k->field(x).declared);
  ASSERT_EQ(k->args.size(), 2u);
  EXPECT_EQ(k->args[0].dtype, ScalarKind::i32);
  EXPECT_EQ(k->args[1].ndim, 2);
}

TEST(ParserModern, HeaderlessFieldsTakeTheirTypeFromTheHintOrTheName) {
  auto k =
      parse(kernel_text("  <*f32> $0 = global ptr [S2place<f32>], index [] activate=true\n"
                        "  $1 = global ptr [S6place_i32], index [] activate=true\n"
                        "  $2 = global ptr [S7place<f64>], index [] activate=true\n"
                        "  <*u32> $3 = global ptr [anything], index [] activate=true\n"));
  auto dtype = [&](const char* name) { return k->field(*k->find_field(name)).dtype; };
  EXPECT_EQ(dtype("S2place<f32>"), ScalarKind::f32);
  EXPECT_EQ(dtype("S6place_i32"), ScalarKind::i32);
  EXPECT_EQ(dtype("S7place<f64>"), ScalarKind::f64);
  EXPECT_EQ(dtype("anything"), ScalarKind::u32);
  for (const Field& f : k->fields()) {
    EXPECT_FALSE(f.declared) << f.name;
    EXPECT_FALSE(f.shape.has_value()) << f.name;
  }
  EXPECT_EQ(print_header(*k), "");
  EXPECT_EQ(stmts(*k)[1]->type, DataType::pointer_to(ScalarKind::i32));
}

TEST(ParserModern, CommentsBlankLinesAndALogLineAreSkipped) {
  auto k = parse(
      "# a dump\n"
      "\n"
      "[I 11/22/26 10:00:00.000 4242] [ir_printer.cpp:operator()@42] [k_c76_0] Simplified I:\n"
      "kernel {\n"
      "  # inside\n"
      "\n"
      "  <i32> $0 = const 1  # trailing note\n"
      "}\n"
      "# after\n");
  EXPECT_EQ(print_kernel(*k), kernel_text("  <i32> $0 = const 1\n"));
}

// BUG(ir/lexer.cpp, Cursor::read_until): with CRLF line endings the '\r' stays in a constant's
// text, so `const 0\r` is rejected as "'0' is not a valid i32 constant".
TEST(ParserModern, CrlfLineEndingsAreAccepted) {
  auto k = parse(
      "kernel {\r\n  <i32> $0 = const 0\r\n  <f32> $1 = const 1.5\r\n"
      "  $2 = global ptr [S1place_f32], index [] activate=true\r\n}\r\n");
  EXPECT_EQ(print_kernel(*k), kernel_text("  <i32> $0 = const 0\n  <f32> $1 = const 1.5\n"
                                          "  <*f32> $2 = global ptr [S1place_f32], index [] activate=true\n"));
}

// Regression: a print has no id in the text; the id it is given must not collide with a later
// statement's number.
TEST(ParserModern, PrintIdsNeverCollideWithLaterStatements) {
  auto k = parse(kernel_text("  <i32> $0 = const 0\n  print $0\n  <i32> $1 = const 1\n"));
  std::vector<int> ids;
  for (Stmt* s : stmts(*k)) ids.push_back(s->id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "duplicate statement id";
  EXPECT_TRUE(verify(*k).empty());
}

}  // namespace
}  // namespace pb::ir
