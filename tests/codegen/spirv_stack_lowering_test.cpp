// The characteristic shape of each adstack lowering, on hand-written kernels: Function u32
// counts per stack vs one uint array; a selection construct per push (branch) vs none (select);
// the heap stride and offsets; overflow publication; and the clear errors.
#include <fmt/format.h>

#include <set>

#include "ir/diagnostic.h"
#include "spirv_test_util.h"

namespace pb::codegen::spirv {
namespace {

using test::count_opcode;
using test::instructions;
using test::lines_with;
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

// Stacks pushed in a dynamic loop, so no count is known at compile time: $4 and $5 (f32,
// capacities 8 and 16) are pushed and popped alike and share one count; $6 (i32) is pushed
// twice per iteration and has its own. Three pushes and two pops per iteration; then two load
// tops, a load top adj and an acc adj.
constexpr const char* kLoopStacks = R"(field x : f32[16]
field y : f32[16]
field n : i32[]
kernel "loop_stacks" {
  <i32> $0 = const 0
  <i32> $1 = const 16
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <f32> $4 = stack alloc (max_size=8)
    <f32> $5 = stack alloc (max_size=16)
    <i32> $6 = stack alloc (max_size=8)
    <*f32> $7 = global ptr [x], index [$3] activate=true
    <f32> $8 = global load $7
    <*i32> $9 = global ptr [n], index [] activate=true
    <i32> $10 = global load $9
    $11 : for in range($0, $10) block_dim=adaptive {
      <f32> $12 : stack push $4, val = $8
      <f32> $13 : stack push $5, val = $8
      <i32> $14 : stack push $6, val = $3
      <i32> $15 : stack push $6, val = $3
    }
    <f32> $16 = stack load top $4
    <f32> $17 : stack acc adj $4, val = $16
    <f32> $18 = stack load top adj $4
    <f32> $19 = stack load top $5
    <f32> $20 = add $18 $19
    <*f32> $21 = global ptr [y], index [$3] activate=true
    $22 : global store [$21 <- $20]
  }
}
)";

LoweringOptions lowering(const std::string& text) { return parse_lowering(text); }

const TaskInfo& only_loop_task(const CompiledKernel& ck) {
  EXPECT_EQ(ck.tasks.size(), 1u);
  return ck.tasks.front();
}

// OpVariable instructions in Function storage whose pointee is `type_name` (a disassembly name).
size_t function_variables_of(const std::vector<uint32_t>& words, const std::string& type_name) {
  size_t n = 0;
  for (const auto& line : lines_with(words, "OpVariable %_ptr_Function_" + type_name + " Function")) n += !line.empty();
  return n;
}

TEST(StackLowering, PerStackCountsAreOneFunctionU32Each) {
  auto k = parse(kThreeStacks);
  auto ck = compile(*k, lowering("count=per-stack"));
  const auto& words = only_loop_task(ck).spirv;
  EXPECT_EQ(function_variables_of(words, "uint"), 3u + 2u)  // three counts, the grid-stride counter, overflow
      << disassemble(words);
  EXPECT_EQ(lines_with(words, "OpTypeArray %uint").size(), 0u);
}

TEST(StackLowering, SharedArrayCountsAreOneUintArrayIndexedByAccessChain) {
  auto k = parse(kLoopStacks);
  auto ck = compile(*k, lowering("count=shared-array"));
  const auto& words = only_loop_task(ck).spirv;
  EXPECT_EQ(function_variables_of(words, "uint"), 3u);  // the grid-stride and trip counters, the overflow signal
  // One element per count group: {$4, $5} and {$6}.
  EXPECT_EQ(function_variables_of(words, "_arr_uint_uint_2"), 1u) << disassemble(words);
  EXPECT_FALSE(lines_with(words, "OpAccessChain %_ptr_Function_uint %stack_counts %uint_1").empty());
  // Each group's count is stored where the stacks are allocated (0), loaded and stored once per
  // iteration of the loop (+1, +2), and {$4, $5}'s loaded once more for the top accesses: seven
  // accesses for 3 allocs, 4 pushes and 4 top accesses.
  EXPECT_EQ(lines_with(words, "%stack_counts %uint_0").size() + lines_with(words, "%stack_counts %uint_1").size(), 7u)
      << disassemble(words);
}

TEST(StackLowering, StacksWithTheSameCountsShareOneCount) {
  // Every stack of kThreeStacks is allocated, pushed, popped and read in one segment, and is dead
  // after it: one count, never loaded.
  auto k = parse(kThreeStacks);
  auto ck = compile(*k, lowering("count=shared-array"));
  const auto& words = only_loop_task(ck).spirv;
  EXPECT_EQ(function_variables_of(words, "_arr_uint_uint_1"), 1u) << disassemble(words);
  EXPECT_EQ(lines_with(words, "%stack_counts %uint_0").size(), 0u) << disassemble(words);
}

TEST(StackLowering, BranchPushesOpenOneSelectionPerPush) {
  auto k = parse(kThreeStacks);
  for (const char* bounds : {"on", "off"}) {
    auto ck = compile(*k, lowering(fmt::format("push=branch,bounds={}", bounds)));
    const auto& words = only_loop_task(ck).spirv;
    EXPECT_EQ(count_opcode(words, spv::OpSelectionMerge), 5u) << bounds;
    // With the bounds check the overflow branch raises the flag directly, once per push.
    EXPECT_EQ(count_opcode(words, spv::OpAtomicUMax), std::string(bounds) == "on" ? 5u : 0u) << bounds;
  }
}

TEST(StackLowering, SelectPushesClampAndStoreUnconditionally) {
  auto k = parse(kLoopStacks);
  auto ck = compile(*k, lowering("push=select,bounds=on"));
  const auto& words = only_loop_task(ck).spirv;
  // No selection per push: the only one guards the single overflow publication at the end.
  EXPECT_EQ(count_opcode(words, spv::OpSelectionMerge), 1u) << disassemble(words);
  EXPECT_EQ(count_opcode(words, spv::OpAtomicUMax), 1u);
  // Each push clamps its index; so does each top access (two load tops, a load top adj, an acc adj).
  EXPECT_EQ(lines_with(words, "UMin").size(), 4u + 4u);
  // Overflow is checked once per run of pushes where the segment ends: $4 and $5 (capacities 8
  // and 16) at their count, $6 at its count against capacity - 1 (its two pushes).
  EXPECT_EQ(count_opcode(words, spv::OpUGreaterThanEqual), 3u) << disassemble(words);
  std::multiset<std::string> thresholds;
  for (const std::string& line : lines_with(words, "OpUGreaterThanEqual"))
    thresholds.insert(line.substr(line.rfind(' ') + 1));
  EXPECT_EQ(thresholds, (std::multiset<std::string>{"%uint_7", "%uint_8", "%uint_16"})) << disassemble(words);
  auto off = compile(*k, lowering("push=select,bounds=off"));
  EXPECT_EQ(count_opcode(only_loop_task(off).spirv, spv::OpSelectionMerge), 0u);
  EXPECT_EQ(count_opcode(only_loop_task(off).spirv, spv::OpAtomicUMax), 0u);
  EXPECT_EQ(count_opcode(only_loop_task(off).spirv, spv::OpUGreaterThanEqual), 0u);
}

TEST(StackLowering, PushesWithKnownCountsNeedNoClampNorCheck) {
  // kThreeStacks pushes right after the allocs: the entries are constants, and no push overflows.
  auto k = parse(kThreeStacks);
  auto ck = compile(*k, lowering("push=select,bounds=on"));
  const auto& words = only_loop_task(ck).spirv;
  EXPECT_EQ(lines_with(words, "UMin").size(), 0u) << disassemble(words);
  EXPECT_EQ(count_opcode(words, spv::OpUGreaterThanEqual), 0u);
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
  // The heap is an array of invocation slices, each a struct with one array of stacks per element
  // type and capacity (f32 8, i32 4, u1 2) at the offsets above (bytes), every entry a (primal,
  // adjoint) pair; a push is one store of a pair, through an access chain indexed by the invocation.
  EXPECT_EQ(lines_with(t.spirv, "OpTypeRuntimeArray %heap_slice").size(), 1u) << disassemble(t.spirv);
  EXPECT_EQ(lines_with(t.spirv, "OpDecorate %_runtimearr_heap_slice ArrayStride 112").size(), 1u);
  for (const char* member : {"OpMemberDecorate %heap_slice 0 Offset 0", "OpMemberDecorate %heap_slice 1 Offset 64",
                             "OpMemberDecorate %heap_slice 2 Offset 96"})
    EXPECT_EQ(lines_with(t.spirv, member).size(), 1u) << member;
  // Pairs of the stored type: float2, int2, and uint2 for u1 (0/1).
  size_t pairs = 0, chains = 0;
  for (const char* pair : {"v2float", "v2int", "v2uint"}) {
    pairs += lines_with(t.spirv, fmt::format("OpCompositeConstruct %{} ", pair)).size();
    chains +=
        lines_with(t.spirv, fmt::format("OpAccessChain %_ptr_StorageBuffer_{} %heap %uint_0 %invocation %uint_", pair))
            .size();
  }
  EXPECT_EQ(pairs, 5u + 1u);             // 5 pushes, 1 acc adj
  EXPECT_EQ(chains, 5u + 3u + 1u + 1u);  // the pushes, the load tops, the load top adj, the acc adj (one for both)
  // No bitcast for the heap: as many as with Function arrays (the loop index's).
  EXPECT_EQ(count_opcode(t.spirv, spv::OpBitcast),
            count_opcode(only_loop_task(compile(*k, lowering("storage=function"))).spirv, spv::OpBitcast))
      << disassemble(t.spirv);
  bool heap_binding = false;
  for (const Binding& b : ck.bindings) heap_binding |= b.kind == BindingKind::heap;
  EXPECT_TRUE(heap_binding);
  EXPECT_EQ(function_variables_of(t.spirv, "_arr_float_uint_8"), 0u);
}

TEST(StackLowering, FunctionStorageUsesArraysAndNoHeap) {
  auto k = parse(kThreeStacks);
  auto ck = compile(*k, lowering("storage=function"));
  const TaskInfo& t = only_loop_task(ck);
  EXPECT_EQ(t.heap_stride_words, 0u);
  EXPECT_EQ(function_variables_of(t.spirv, "_arr_float_uint_8"), 2u) << disassemble(t.spirv);  // primal, adjoint
  EXPECT_EQ(function_variables_of(t.spirv, "_arr_int_uint_4"), 1u);
  EXPECT_EQ(function_variables_of(t.spirv, "_arr_bool_uint_2"), 1u);
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

TEST(StackLowering, UnsizedAndNonWordHeapStacksAreUserErrors) {
  auto unsized = parse("kernel {\n  <f32> $0 = stack alloc (max_size=0)\n}\n");
  try {
    compile(*unsized);
    FAIL() << "an unsized stack compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("`<f32> $0 = stack alloc (max_size=0)`"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("determine_ad_stack_size"), std::string::npos);
  }
  auto wide = parse("kernel {\n  <f64> $0 = stack alloc (max_size=4)\n}\n");
  LoweringOptions o = lowering("storage=heap,float64=on");
  try {
    compile(*wide, o);
    FAIL() << "an f64 heap stack compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("heap stacks hold f32, i32 or u1 values, not f64"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(compile(*wide, lowering("storage=function,float64=on")));
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
  EXPECT_EQ(
      lines_with(ck.tasks[0].spirv, "OpAccessChain %_ptr_StorageBuffer_v2float %heap %uint_0 %uint_0 %uint_0 %uint_0")
          .size(),
      2u)  // the push and the load top
      << disassemble(ck.tasks[0].spirv);
}

}  // namespace
}  // namespace pb::codegen::spirv
