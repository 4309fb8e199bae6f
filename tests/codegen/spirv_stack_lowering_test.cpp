// The adstack lowerings' records and errors: the heap stride and offsets, capacities, bindings,
// every combination validating, and the clear errors. The SPIR-V each lowering emits (counts per
// stack vs one array, a selection per push vs clamped stores, heap vs Function storage, overflow
// publication) is checked with FileCheck in tests/codegen/spirv_adstack_*.chi.
#include "ir/diagnostic.h"
#include "spirv_test_util.h"

namespace pb::codegen::spirv {
namespace {

using test::parse;

// Three stacks (f32, i32, u1) with capacities 8, 4, 2 in one parallel loop; 5 pushes.
constexpr const char* kThreeStacks = R"(field x : f32[16]
field y : f32[16]
kernel "stacks" {
  <i32> $0 = const 0
  <i32> $1 = const 16
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <f32> $4 = stack alloc (max_size=8)
    <i32> $5 = stack alloc (max_size=4)
    <u1> $6 = stack alloc (max_size=2)
    <*f32> $7 = global ptr [x], index [$3] activate=true
    <f32> $8 = global load $7
    <f32> $9 : stack push $4, val = $8
    <f32> $10 : stack push $4, val = $8
    <i32> $11 : stack push $5, val = $3
    <u1> $12 = cmp_lt $3 $1
    <u1> $13 : stack push $6, val = $12
    <u1> $14 : stack push $6, val = $12
    <f32> $15 = stack load top $4
    <f32> $16 : stack acc adj $4, val = $15
    <f32> $17 = stack load top adj $4
    <f32> $18 : stack pop $4
    <i32> $19 = stack load top $5
    <u1> $20 = stack load top $6
    <f32> $21 = cast_value<f32> $19
    <f32> $22 = select($20, $21, $17)
    <*f32> $23 = global ptr [y], index [$3] activate=true
    $24 : global store [$23 <- $22]
  }
}
)";

LoweringOptions lowering(const std::string& text) { return parse_lowering(text); }

const TaskInfo& only_loop_task(const CompiledKernel& ck) {
  EXPECT_EQ(ck.tasks.size(), 1u);
  return ck.tasks.front();
}

TEST(StackLowering, HeapStrideIsTheSumOfTheStacksWords) {
  auto k = parse(kThreeStacks);
  auto ck = compile(*k, lowering("storage=heap"));
  const TaskInfo& t = only_loop_task(ck);
  ASSERT_EQ(t.stacks.size(), 3u);
  // Every entry is a (primal, adjoint) word pair, whatever the stack's type.
  EXPECT_EQ(t.stacks[0].heap_words, 16u);
  EXPECT_EQ(t.stacks[1].heap_words, 8u);
  EXPECT_EQ(t.stacks[2].heap_words, 4u);
  EXPECT_EQ(t.stacks[0].heap_offset, 0u);
  EXPECT_EQ(t.stacks[1].heap_offset, 16u);
  EXPECT_EQ(t.stacks[2].heap_offset, 24u);
  EXPECT_EQ(t.heap_stride_words, 2u * (8 + 4 + 2));
  bool heap_binding = false;
  for (const Binding& b : ck.bindings) heap_binding |= b.kind == BindingKind::heap;
  EXPECT_TRUE(heap_binding);
}

TEST(StackLowering, FunctionStorageUsesArraysAndNoHeap) {
  auto k = parse(kThreeStacks);
  auto ck = compile(*k, lowering("storage=function"));
  const TaskInfo& t = only_loop_task(ck);
  EXPECT_EQ(t.heap_stride_words, 0u);
  for (const Binding& b : ck.bindings) EXPECT_NE(b.kind, BindingKind::heap);
}

TEST(StackLowering, EveryCombinationValidates) {
  auto k = parse(kThreeStacks);
  for (const LoweringOptions& o : all_stack_lowerings()) EXPECT_NO_THROW(compile(*k, o)) << lowering_name(o);
}

TEST(StackLowering, SymbolicSizesGetTheConfiguredCapacity) {
  auto k = parse(R"(field n : i32[]
field x : f32[4]
kernel {
  $0 : struct for in x block_dim=adaptive {
    <f32> $1 = stack alloc (max_size=0, size=2 + n[])
    <f32> $2 = const 1
    <f32> $3 : stack push $1, val = $2
  }
}
)");
  LoweringOptions o;
  o.symbolic_stack_capacity = 40;
  auto ck = compile(*k, o);
  ASSERT_EQ(ck.tasks[0].stacks.size(), 1u);
  EXPECT_EQ(ck.tasks[0].stacks[0].capacity, 40);
  EXPECT_EQ(ck.tasks[0].stacks[0].size_expr, "2 + n[]");
  EXPECT_EQ(ck.tasks[0].heap_stride_words, 80u);
  o.stack_capacity_by_stmt[1] = 5;
  EXPECT_EQ(compile(*k, o).tasks[0].stacks[0].capacity, 5);
}

TEST(StackLowering, UnsizedStacksAreUserErrorsAndWideStacksLiveOnTheHeap) {
  auto unsized = parse("kernel {\n  <f32> $0 = stack alloc (max_size=0)\n}\n");
  try {
    compile(*unsized);
    FAIL() << "an unsized stack compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("`<f32> $0 = stack alloc (max_size=0)`"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("determine_ad_stack_size"), std::string::npos);
  }
  // f64 entries are (primal, adjoint) double pairs: 4 words each, 16-byte aligned after an f32
  // stack's 2-word entries, and the slice a multiple of 16 bytes.
  auto wide = parse(
      "kernel {\n  <f32> $0 = stack alloc (max_size=3)\n  <f64> $1 = stack alloc (max_size=4)\n"
      "  <i64> $2 = stack alloc (max_size=1)\n}\n");
  CompiledKernel heap = compile(*wide, lowering("storage=heap,float64=on,int64=on"));
  ASSERT_EQ(heap.tasks.size(), 1u);
  const TaskInfo& t = heap.tasks[0];
  ASSERT_EQ(t.stacks.size(), 3u);
  EXPECT_EQ(t.stacks[0].heap_words, 6u);
  EXPECT_EQ(t.stacks[1].heap_words, 16u);
  EXPECT_EQ(t.stacks[2].heap_words, 4u);
  for (const auto& s : t.stacks)
    if (s.element != ir::ScalarKind::f32) EXPECT_EQ(s.heap_offset % 4, 0u) << s.stmt_id;
  EXPECT_EQ(t.heap_stride_words % 4, 0u);
  EXPECT_GE(t.heap_stride_words, 6u + 16u + 4u);
  EXPECT_TRUE(validate(t.spirv).ok);
  // Without the capability, the error names the alloc.
  try {
    compile(*wide, lowering("storage=heap"));
    FAIL() << "an f64 heap stack compiled without float64";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("`<f64> $1 = stack alloc (max_size=4)`"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(compile(*wide, lowering("storage=function,float64=on,int64=on")));
}

TEST(StackLowering, StacksOfSerialTasksUseSliceZero) {
  auto k = parse(
      "field r : f32[1]\nkernel {\n  <f32> $0 = stack alloc (max_size=4)\n  <f32> $1 = const 1\n"
      "  <f32> $2 : stack push $0, val = $1\n  <f32> $3 = stack load top $0\n  <i32> $4 = const 0\n"
      "  <*f32> $5 = global ptr [r], index [$4] activate=true\n  $6 : global store [$5 <- $3]\n}\n");
  auto ck = compile(*k);
  ASSERT_EQ(ck.tasks.size(), 1u);
  EXPECT_EQ(ck.tasks[0].kind, TaskKind::serial);
  EXPECT_EQ(ck.tasks[0].invocations, 1u);
}

}  // namespace
}  // namespace pb::codegen::spirv
