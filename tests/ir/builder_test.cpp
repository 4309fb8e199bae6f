// Builder: statements come out typed by the rules, with fresh ids, at the insertion point;
// InsertionGuard restores the point; an ill-typed statement is an internal error.
#include "ir/builder.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/assert.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace pb::ir {
namespace {

std::unique_ptr<Kernel> parse(std::string_view text) { return parse_kernel(text, "test.chi"); }

std::string errors_of(const Kernel& k) {
  std::string out;
  for (const auto& e : verify(k)) out += "\n  " + e.format();
  return out;
}

TEST(Builder, CreatesTypedStatementsWithFreshIdsAtTheInsertionPoint) {
  auto k = parse("field x : f32[4]\nfield n : i32[]\narg 0 : i32\nkernel {\n}\n");
  Builder b(*k);
  ConstStmt* zero = b.const_i32(0);
  ArgLoadStmt* end = b.argload(0, ScalarKind::i32);
  RangeForStmt* loop = b.range_for(zero, end);
  b.set_insertion_point_end(*loop->body);
  LoopIndexStmt* i = b.loop_index(loop);
  GlobalPtrStmt* p = b.global_ptr(*k->find_field("x"), {i});
  GlobalLoadStmt* v = b.global_load(p);
  UnaryOpStmt* s = b.unary(UnaryOp::sin, v);
  BinaryOpStmt* m = b.binary(BinaryOp::mul, v, s);
  BinaryOpStmt* lt = b.binary(BinaryOp::cmp_lt, v, s);
  TernaryOpStmt* sel = b.select(lt, v, m);
  AllocaStmt* a = b.alloca(ScalarKind::f32);
  b.local_store(a, sel);
  LocalLoadStmt* ld = b.local_load(a);
  UnaryOpStmt* f = b.cast(i, ScalarKind::f32);
  AdStackAllocaStmt* st = b.stack_alloc(ScalarKind::f32, 8);
  b.stack_push(st, ld);
  b.stack_load_top(st);
  b.stack_load_top_adj(st);
  b.stack_acc_adj(st, f);
  b.stack_pop(st);
  GlobalPtrStmt* np = b.global_ptr(*k->find_field("n"), {});
  b.atomic(AtomicOp::bit_or, np, i);
  IfStmt* branch = b.if_(lt);
  b.set_insertion_point_end(*branch->true_block);
  b.global_store(p, f);
  b.set_insertion_point_end(branch->ensure_false_block());
  b.create<ContinueStmt>();
  b.set_insertion_point_end(k->root());
  b.range_for(zero, end, /*reversed=*/true);
  EXPECT_EQ(print_kernel(*k),
            "field x : f32[4]\n"
            "field n : i32[]\n"
            "arg 0 : i32\n"
            "kernel {\n"
            "  <i32> $0 = const 0\n"
            "  <i32> $1 = argload[0]\n"
            "  $2 : for in range($0, $1) block_dim=adaptive {\n"
            "    <i32> $3 = loop $2 index 0\n"
            "    <*f32> $4 = global ptr [x], index [$3] activate=true\n"
            "    <f32> $5 = global load $4\n"
            "    <f32> $6 = sin $5\n"
            "    <f32> $7 = mul $5 $6\n"
            "    <u1> $8 = cmp_lt $5 $6\n"
            "    <f32> $9 = select($8, $5, $7)\n"
            "    <*f32> $10 = alloca\n"
            "    <f32> $11 : local store [$10 <- $9]\n"
            "    <f32> $12 = local load [$10]\n"
            "    <f32> $13 = cast_value<f32> $3\n"
            "    <f32> $14 = stack alloc (max_size=8)\n"
            "    <f32> $15 : stack push $14, val = $12\n"
            "    <f32> $16 = stack load top $14\n"
            "    <f32> $17 = stack load top adj $14\n"
            "    <f32> $18 : stack acc adj $14, val = $13\n"
            "    <f32> $19 : stack pop $14\n"
            "    <*i32> $20 = global ptr [n], index [] activate=true\n"
            "    <i32> $21 = atomic bit_or($20, $3)\n"
            "    $22 : if $8 {\n"
            "      $23 : global store [$4 <- $13]\n"
            "    } else {\n"
            "      $24 continue\n"
            "    }\n"
            "  }\n"
            "  $25 : reversed for in range($0, $1) block_dim=adaptive {\n"
            "  }\n"
            "}\n");
  EXPECT_TRUE(verify(*k).empty()) << errors_of(*k);
}

TEST(Builder, FreshIdsContinueAfterTheParsedOnes) {
  auto k = parse("kernel {\n  <i32> $7 = const 1\n  <i32> $3 = const 2\n}\n");
  Builder b(*k);
  EXPECT_EQ(b.const_i32(5)->id, 8);
  EXPECT_EQ(b.const_i32(6)->id, 9);
}

TEST(Builder, ArgloadOfAnNdarrayIsTypedAsAPointerByTheHeader) {
  auto k = parse("arg 0 : ndarray<f32, 1>\nkernel {\n}\n");
  Builder b(*k);
  EXPECT_EQ(b.argload(0, ScalarKind::f32)->type, DataType::pointer_to(ScalarKind::f32));
}

TEST(Builder, InsertTypesAndNumbersAPrebuiltStatement) {
  Kernel k;
  Builder b(k);
  ConstStmt* one = b.const_f32(1.0f);
  Stmt* neg = b.insert(std::make_unique<UnaryOpStmt>(UnaryOp::neg, one));
  EXPECT_EQ(neg->id, 1);
  EXPECT_EQ(neg->type, DataType::of(ScalarKind::f32));
  Stmt* cmp = b.insert(std::make_unique<BinaryOpStmt>(BinaryOp::cmp_eq, one, neg));
  EXPECT_EQ(cmp->type, DataType::of(ScalarKind::u1));
  EXPECT_EQ(b.const_f64(0.5)->type, DataType::of(ScalarKind::f64));
}

TEST(Builder, InsertionPointBeforeAndAfterAStatement) {
  Kernel k;
  Builder b(k);
  ConstStmt* first = b.const_i32(1);
  ConstStmt* last = b.const_i32(3);
  b.set_insertion_point_before(*last);
  b.const_i32(2);
  b.set_insertion_point_after(*first);
  b.const_i32(0);
  b.set_insertion_point_after(*last);
  b.const_i32(4);
  EXPECT_EQ(print_kernel(k),
            "kernel {\n  <i32> $0 = const 1\n  <i32> $3 = const 0\n  <i32> $2 = const 2\n  <i32> $1 = const 3\n"
            "  <i32> $4 = const 4\n}\n");
}

TEST(Builder, InsertionGuardRestoresTheEndOfABlock) {
  Kernel k;
  Builder b(k);
  ConstStmt* c = b.const_i32(1);
  IfStmt* branch = b.if_(c);
  {
    InsertionGuard guard(b);
    b.set_insertion_point_end(*branch->true_block);
    b.const_i32(2);
    EXPECT_EQ(b.block(), branch->true_block.get());
  }
  EXPECT_EQ(b.block(), &k.root());
  EXPECT_EQ(b.before(), nullptr);
  b.const_i32(3);
  EXPECT_EQ(print_kernel(k),
            "kernel {\n  <i32> $0 = const 1\n  $1 : if $0 {\n    <i32> $2 = const 2\n  }\n  <i32> $3 = const 3\n}\n");
}

TEST(Builder, InsertionGuardRestoresAPointBeforeAStatement) {
  Kernel k;
  Builder b(k);
  ConstStmt* c = b.const_i32(1);
  IfStmt* branch = b.if_(c);
  b.set_insertion_point_before(*branch);
  {
    InsertionGuard guard(b);
    b.set_insertion_point_end(*branch->true_block);
    b.const_i32(2);
  }
  EXPECT_EQ(b.before(), branch);
  b.const_i32(3);
  EXPECT_EQ(print_kernel(k),
            "kernel {\n  <i32> $0 = const 1\n  <i32> $3 = const 3\n  $1 : if $0 {\n    <i32> $2 = const 2\n  }\n}\n");
}

TEST(Builder, IllTypedStatementsAreInternalErrors) {
  auto k = parse("field x : f32[4]\nkernel {\n}\n");
  Builder b(*k);
  ConstStmt* f = b.const_f32(1.0f);
  ConstStmt* i = b.const_i32(1);
  AllocaStmt* ia = b.alloca(ScalarKind::i32);
  AdStackAllocaStmt* stack = b.stack_alloc(ScalarKind::f32, 4);
  GlobalPtrStmt* p = b.global_ptr(*k->find_field("x"), {i});
  const size_t size_before = k->root().size();
  EXPECT_THROW(b.binary(BinaryOp::add, f, i), InternalError);
  EXPECT_THROW(b.local_store(ia, f), InternalError);
  EXPECT_THROW(b.local_load(f), InternalError);
  EXPECT_THROW(b.unary(UnaryOp::sin, i), InternalError);
  EXPECT_THROW(b.unary(UnaryOp::cast_value, f), InternalError);
  EXPECT_THROW(b.global_store(p, i), InternalError);
  EXPECT_THROW(b.global_ptr(*k->find_field("x"), {}), InternalError);
  EXPECT_THROW(b.stack_push(stack, i), InternalError);
  EXPECT_THROW(b.stack_pop(f), InternalError);
  EXPECT_THROW(b.atomic(AtomicOp::bit_and, p, f), InternalError);
  EXPECT_THROW(b.loop_index(i), InternalError);
  EXPECT_THROW(b.if_(f), InternalError);
  EXPECT_THROW(b.range_for(f, f), InternalError);
  EXPECT_EQ(k->root().size(), size_before) << "an ill-typed statement was inserted";
  EXPECT_EQ(f->users().size(), 0u) << "a rejected statement still uses its operands";
  try {
    b.binary(BinaryOp::add, f, i);
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("ill-typed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("add operand types differ"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pb::ir
