// Tasks, bindings, push constants and statement lowerings on hand-written kernels: how a kernel
// splits into tasks and values cross them, control flow, print/assert, 64-bit types. The SPIR-V
// of atomics, loops, division and asserts is checked with FileCheck in tests/codegen/spirv_*.chi.
#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "spirv_test_util.h"

namespace pb::codegen::spirv {
namespace {

using test::lines_with;
using test::parse;

std::string error_of(const ir::Kernel& k, const LoweringOptions& o = {}) {
  try {
    compile(k, o);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Serial statements, a range for with a field bound, a struct for: three tasks.
constexpr const char* kThreeTasks = R"(field n : i32[]
field x : f32[8] grad x_grad
dense S1dense : [2, 4]
field m : f32[2, 4] in S1dense
arg 0 : f32
kernel "mix" {
  <i32> $0 = const 0
  <i32> $1 = const 5
  <*i32> $2 = global ptr [n], index [] activate=true
  $3 : global store [$2 <- $1]
  <i32> $4 = global load $2
  $5 : for in range($0, $4) block_dim=64 {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = global ptr [x], index [$6] activate=true
    <f32> $8 = argload[0]
    $9 : global store [$7 <- $8]
  }
  $10 : struct for in S1dense block_dim=adaptive {
    <i32> $11 = loop $10 index 0
    <i32> $12 = loop $10 index 1
    <*f32> $13 = global ptr [m], index [$11, $12] activate=true
    <f32> $14 = cast_value<f32> $12
    <f32> $15 = atomic add($13, $14)
  }
}
)";

TEST(Tasks, SplitSerialRangeAndStructTasksWithDispatchMetadata) {
  auto k = parse(kThreeTasks);
  auto ck = compile(*k);
  ASSERT_EQ(ck.tasks.size(), 3u);
  EXPECT_EQ(ck.tasks[0].kind, TaskKind::serial);
  EXPECT_EQ(ck.tasks[0].name, "mix_t0_serial");
  EXPECT_EQ(ck.tasks[0].invocations, 1u);
  EXPECT_EQ(ck.tasks[0].workgroup_size, 1u);
  const TaskInfo& range = ck.tasks[1];
  EXPECT_EQ(range.kind, TaskKind::range_for);
  EXPECT_EQ(range.name, "mix_t1_range_for_5");
  EXPECT_EQ(range.begin.constant, 0);
  EXPECT_FALSE(range.end.constant);
  EXPECT_EQ(range.end.source, "n[]");
  EXPECT_FALSE(range.invocations);  // dynamic: any grid works, the loop strides over the range
  EXPECT_EQ(range.workgroup_size, 64u);
  const TaskInfo& sf = ck.tasks[2];
  EXPECT_EQ(sf.kind, TaskKind::struct_for);
  EXPECT_EQ(sf.space, "S1dense");
  EXPECT_EQ(sf.invocations, 8u);
  EXPECT_EQ(sf.workgroup_size, 256u);
  for (const TaskInfo& t : ck.tasks) {
    EXPECT_EQ(lines_with(t.spirv, fmt::format("OpEntryPoint GLCompute %{} \"{}\"", t.name, t.name)).size(), 1u);
  }
  // The range for's bound is read again in its own task: nothing writes n in between.
  EXPECT_FALSE(lines_with(range.spirv, "OpAccessChain %_ptr_StorageBuffer_int %n %uint_0 %uint_0").empty())
      << disassemble(range.spirv);
  EXPECT_EQ(ck.temps_words, 0u);
}

TEST(Tasks, BindingsAndPushConstantsAreKernelWide) {
  auto k = parse(kThreeTasks);
  auto ck = compile(*k);
  ASSERT_EQ(ck.bindings.size(), 3u);  // n, x, m (x_grad is not used)
  EXPECT_EQ(ck.bindings[0].name, "n");
  EXPECT_EQ(ck.bindings[0].kind, BindingKind::field);
  EXPECT_EQ(ck.bindings[0].storage_type, "int");
  EXPECT_EQ(ck.bindings[2].name, "m");
  EXPECT_EQ(ck.bindings[2].elements, 8u);
  ASSERT_EQ(ck.push_constants.size(), 1u);
  EXPECT_EQ(ck.push_constants[0].name, "arg0");
  EXPECT_EQ(ck.push_constants[0].type, ir::ScalarKind::f32);
  EXPECT_EQ(ck.push_constant_bytes, 4u);
  EXPECT_EQ(ck.tasks[1].bindings, (std::vector<uint32_t>{0, 1}));  // n for the bound, x
  EXPECT_EQ(ck.tasks[2].bindings, (std::vector<uint32_t>{2}));
  EXPECT_FALSE(lines_with(ck.tasks[1].spirv, "OpDecorate %x Binding 1").empty());
  auto j = to_json(ck);
  EXPECT_EQ(j["tasks"][1]["end"]["source"], "n[]");
  EXPECT_EQ(j["bindings"][1]["kind"], "field");
}

TEST(Tasks, RootValuesWrittenInBetweenCrossThroughTemps) {
  // The bound is read before the first loop stores to n: the second loop must see the old value.
  auto k = parse(R"(field n : i32[]
field x : i32[8]
kernel {
  <i32> $0 = const 0
  <*i32> $1 = global ptr [n], index [] activate=true
  <i32> $2 = global load $1
  $3 : for in range($0, $2) block_dim=adaptive {
    <i32> $4 = const 1
    <i32> $5 = atomic add($1, $4)
  }
  $6 : for in range($0, $2) block_dim=adaptive {
    <i32> $7 = loop $6 index 0
    <*i32> $8 = global ptr [x], index [$7] activate=true
    $9 : global store [$8 <- $2]
  }
}
)");
  auto ck = compile(*k);
  ASSERT_EQ(ck.tasks.size(), 3u);  // the load must run (and be stored) before the first loop
  EXPECT_EQ(ck.tasks[0].kind, TaskKind::serial);
  EXPECT_EQ(ck.temps_words, 1u);
  bool temps = false;
  for (const Binding& b : ck.bindings) temps |= b.kind == BindingKind::temps;
  EXPECT_TRUE(temps);
  EXPECT_FALSE(lines_with(ck.tasks[0].spirv, "OpStore").empty());
  EXPECT_FALSE(lines_with(ck.tasks[2].spirv, "%temps %uint_0 %uint_0").empty()) << disassemble(ck.tasks[2].spirv);
}

TEST(Tasks, RootAllocasSharedBetweenTasksLiveInTemps) {
  auto k = parse(R"(field y : i32[]
kernel {
  <*i32> $0 = alloca
  <i32> $1 = const 0
  <i32> $2 = const 4
  $3 : for in range($1, $2) block_dim=adaptive {
    <i32> $4 = const 1
    <i32> $5 = atomic add($0, $4)
  }
  <i32> $6 = local load [$0]
  <*i32> $7 = global ptr [y], index [] activate=true
  $8 : global store [$7 <- $6]
}
)");
  auto ck = compile(*k);
  ASSERT_EQ(ck.tasks.size(), 3u);
  EXPECT_EQ(ck.temps_words, 1u);
  // The loop's atomic on the temps word: tests/codegen/spirv_tasks.chi.
}

TEST(ControlFlow, WhileContinueAndNestedLoopsValidate) {
  auto k = parse(R"(field x : i32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*i32> $4 = alloca
    <i32> $5 = const 1
    <i32> $6 : local store [$4 <- $5]
    <*i32> $7 = alloca
    $8 : while true {
      <i32> $9 = local load [$7]
      <u1> $10 = cmp_lt $9 $3
      $11 : while control $4, $10
      <i32> $12 = add $9 $5
      <i32> $13 : local store [$7 <- $12]
      <u1> $14 = cmp_eq $12 $1
      $15 : if $14 {
        $16 continue
      }
    }
    $17 : reversed for in range($0, $3) block_dim=adaptive {
      <i32> $18 = loop $17 index 0
      <u1> $19 = cmp_eq $18 $5
      $20 : if $19 {
        $21 continue
      } else {
        <*i32> $22 = global ptr [x], index [$18] activate=true
        <i32> $23 = atomic add($22, $5)
      }
    }
  }
}
)");
  auto ck = compile(*k);
  ASSERT_EQ(ck.tasks.size(), 1u);
  // Its three structured loops: tests/codegen/spirv_control_flow.chi.
}

TEST(ControlFlow, WhileControlInsideANestedForIsRejected) {
  auto k = parse(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <*i32> $2 = alloca
  $3 : while true {
    $4 : for in range($0, $1) block_dim=adaptive {
      <u1> $5 = const false
      $6 : while control $2, $5
    }
  }
}
)");
  std::string e = error_of(*k);
  EXPECT_NE(e.find("cannot lower `$6 : while control $2, $5`"), std::string::npos) << e;
  EXPECT_NE(e.find("leaves two loops at once"), std::string::npos) << e;
}

TEST(PrintAndAssert, PrintIsDroppedWithANoteOrRejected) {
  auto k = parse("kernel {\n  <i32> $0 = const 1\n  print \"x = \", $0, \"\\n\"\n}\n");
  auto ck = compile(*k);
  ASSERT_EQ(ck.notes.size(), 1u);
  EXPECT_NE(ck.notes[0].find("print $1 dropped"), std::string::npos) << ck.notes[0];
  LoweringOptions o;
  o.print = PrintLowering::error;
  EXPECT_NE(error_of(*k, o).find("SPIR-V has no print"), std::string::npos);
}

TEST(PrintAndAssert, AssertRaisesTheFlagWordToItsCode) {
  auto k = parse(
      "arg 0 : i32\nkernel {\n  <i32> $0 = argload[0]\n  <i32> $1 = const 0\n  <u1> $2 = cmp_gt $0 $1\n"
      "  3 : assert $2, \"n must be positive, got %d\", $0\n}\n");
  auto ck = compile(*k);
  ASSERT_EQ(ck.asserts.size(), 1u);
  EXPECT_EQ(ck.asserts[0].code, 1u);
  EXPECT_EQ(ck.asserts[0].message, "n must be positive, got %d");
  EXPECT_EQ(ck.bindings.back().kind, BindingKind::flags);
  // The atomic max on flags word 1: tests/codegen/spirv_control_flow.chi.
}

TEST(Types, SixtyFourBitValuesNeedTheirCapabilityOption) {
  auto k = parse(
      "field y : f64[]\nkernel {\n  <f64> $0 = const 0.5\n  <*f64> $1 = global ptr [y], index [] activate=true\n"
      "  $2 : global store [$1 <- $0]\n}\n");
  std::string e = error_of(*k);
  EXPECT_NE(e.find("cannot lower `<f64> $0 = const 0.5`"), std::string::npos) << e;
  EXPECT_NE(e.find("f64 needs the Float64 capability"), std::string::npos) << e;
  LoweringOptions o;
  o.float64 = true;
  auto ck = compile(*k, o);
  EXPECT_EQ(lines_with(ck.tasks[0].spirv, "OpCapability Float64").size(), 1u);
  auto i = parse(
      "field z : i64[]\nkernel {\n  <i64> $0 = const 7\n  <i64> $1 = mul $0 $0\n"
      "  <*i64> $2 = global ptr [z], index [] activate=true\n  $3 : global store [$2 <- $1]\n}\n");
  EXPECT_NE(error_of(*i).find("i64 needs the Int64 capability"), std::string::npos);
  o.int64 = true;
  EXPECT_NO_THROW(compile(*i, o));
}

TEST(Types, NarrowTypesNeedNoCapabilityAndQuantTypesAreRefusedNamingTheFirstUse) {
  auto h = parse(
      "field y : f16[]\nfield z : i8[]\nkernel {\n  <f16> $0 = const 0.5\n"
      "  <*f16> $1 = global ptr [y], index [] activate=true\n  $2 : global store [$1 <- $0]\n"
      "  <i8> $3 = const -7\n  <*i8> $4 = global ptr [z], index [] activate=true\n  $5 : global store [$4 <- $3]\n}\n");
  auto ck = compile(*h);
  for (const char* cap : {"Float16", "Int8", "Int16", "StorageBuffer16BitAccess", "StorageBuffer8BitAccess"})
    EXPECT_TRUE(lines_with(ck.tasks[0].spirv, fmt::format("OpCapability {}", cap)).empty()) << cap;
  auto q = parse(
      "kernel {\n  <i32> $0 = const 3\n  <*qi2> $1 = global ptr [S2place<qi2><bit>], index [$0] activate=false\n"
      "  $2 : global store [$1 <- $0]\n}\n");
  std::string e = error_of(*q);
  EXPECT_NE(e.find("the SPIR-V backend does not compile quant types yet: `<*qi2> $1 = global ptr "
                   "[S2place<qi2><bit>], index [$0] activate=false` is *qi2"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("--backend=interp"), std::string::npos) << e;
}

// Vulkan leaves OpSRem/OpSMod undefined for negative operands (NVIDIA's H100 driver gave
// mod(-128, 3) = 2 and floordiv(-128, 3) = -42): the remainder comes from OpSDiv instead.
TEST(Types, SignedRemainderAvoidsOpSRemAndOpSMod) {
  for (const char* t : {"i32", "i64", "i8"}) {
    auto k = parse(
        fmt::format("field a : {0}[2]\nfield o : {0}[2]\nkernel {{\n  <i32> $0 = const 0\n  <i32> $1 = const 1\n"
                    "  <*{0}> $2 = global ptr [a], index [$0] activate=true\n  <{0}> $3 = global load $2\n"
                    "  <*{0}> $4 = global ptr [a], index [$1] activate=true\n  <{0}> $5 = global load $4\n"
                    "  <{0}> $6 = mod $3 $5\n  <{0}> $7 = floordiv $3 $5\n"
                    "  <*{0}> $8 = global ptr [o], index [$0] activate=true\n  $9 : global store [$8 <- $6]\n"
                    "  <*{0}> $10 = global ptr [o], index [$1] activate=true\n  $11 : global store [$10 <- $7]\n}}\n",
                    t));
    LoweringOptions o;
    o.int64 = true;
    auto ck = compile(*k, o);
    EXPECT_TRUE(lines_with(ck.tasks[0].spirv, "OpSRem").empty()) << t;
    EXPECT_TRUE(lines_with(ck.tasks[0].spirv, "OpSMod").empty()) << t;
    EXPECT_FALSE(lines_with(ck.tasks[0].spirv, "OpSDiv").empty()) << t;
  }
}

TEST(Options, ParseAndNameLowerings) {
  auto o = parse_lowering("storage=function,count=per-stack,push=branch,bounds=off,float64=on,capacity=9");
  EXPECT_EQ(lowering_name(o), "storage=function,count=per-stack,push=branch,bounds=off");
  EXPECT_TRUE(o.float64);
  EXPECT_EQ(o.symbolic_stack_capacity, 9);
  EXPECT_EQ(lowering_name(LoweringOptions{}), "storage=heap,count=shared-array,push=select,bounds=on");
  EXPECT_EQ(all_stack_lowerings().size(), 16u);
  EXPECT_THROW(parse_lowering("storage=disk"), UserError);
  EXPECT_THROW(parse_lowering("colour=red"), UserError);
}

// A task whose module only loads and stores is streaming (the runtime gives it fewer, longer-
// lived invocations); an atomic or a sparse activation in the module makes it not.
TEST(Tasks, ATaskWithoutAtomicsOrStacksIsStreamingAndUnrolled) {
  const char* plain = R"(field x : f32[64]
field y : f32[64]
field total : f32[]
kernel "k" {
  <i32> $0 = const 0
  <i32> $1 = const 64
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [$3] activate=true
    $7 : global store [$6 <- $5]
  }
  $8 : for in range($0, $1) block_dim=adaptive {
    <i32> $9 = loop $8 index 0
    <*f32> $10 = global ptr [x], index [$9] activate=true
    <f32> $11 = global load $10
    <*f32> $12 = global ptr [total], index [] activate=true
    <f32> $13 = atomic add($12, $11)
  }
}
)";
  CompiledKernel ck = compile(*parse(plain), parse_lowering("unroll=4"));
  ASSERT_EQ(ck.tasks.size(), 2u);
  EXPECT_EQ(compile(*parse(plain), LoweringOptions{}).tasks[0].unroll, 1u) << "compile alone does not unroll";
  EXPECT_TRUE(ck.tasks[0].streaming);
  EXPECT_FALSE(ck.tasks[1].streaming);
  EXPECT_TRUE(to_json(ck)["tasks"][0].value("streaming", false));
  // The first loop qualifies for unrolling (its loads come before its stores); the second has an
  // atomic; a loop that stores to what it loads does not qualify, nor does unroll=1.
  EXPECT_EQ(ck.tasks[0].unroll, 4u);
  EXPECT_EQ(ck.tasks[1].unroll, 1u);
  std::string asm_text = disassemble(ck.tasks[0].spirv);
  size_t first_load = asm_text.find("OpLoad %float"), last_load = asm_text.rfind("OpLoad %float");
  ASSERT_NE(first_load, std::string::npos) << asm_text;
  EXPECT_LT(last_load, asm_text.find("OpStore", first_load)) << asm_text;
  EXPECT_EQ(test::count_opcode(ck.tasks[0].spirv, spv::OpLoad) >= 4, true);
  std::string in_place = plain;
  in_place.replace(in_place.find("global ptr [y], index [$3]"), 26, "global ptr [x], index [$3]");
  EXPECT_EQ(compile(*parse(in_place), parse_lowering("unroll=4")).tasks[0].unroll, 1u);
  EXPECT_EQ(compile(*parse(plain), parse_lowering("unroll=1")).tasks[0].unroll, 1u);
  EXPECT_THROW(parse_lowering("unroll=17"), UserError);
  std::string sparse = std::string("pointer P : [8]\ndense D : [64] in P\n") + plain;
  sparse.replace(sparse.find("field x : f32[64]"), 17, "field x : f32[64] in D");
  CompiledKernel activating = compile(*parse(sparse), LoweringOptions{});
  EXPECT_FALSE(activating.tasks[0].streaming) << "its write activates cells with an atomic or";
}

// Vector steps: a loop that qualifies for unrolled steps and reaches a 32-bit buffer at its own
// index takes four consecutive iterations per step, those buffers as 4-vectors; only when asked
// (the runtime asks; compile alone does not), and not where no buffer is at the loop's index.
TEST(Tasks, ALoopAtItsOwnIndexTakesVectorStepsWhenAsked) {
  const char* text = R"(field x : f32[64]
field y : f32[64]
field d : f64[64]
kernel "k" {
  <i32> $0 = const 0
  <i32> $1 = const 64
  <i32> $14 = const 1
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [$3] activate=true
    $7 : global store [$6 <- $5]
  }
  $8 : for in range($0, $1) block_dim=adaptive {
    <i32> $9 = loop $8 index 0
    <i32> $15 = add $9 $14
    <*f32> $10 = global ptr [x], index [$15] activate=true
    <f32> $11 = global load $10
    <f64> $16 = cast_value<f64> $11
    <*f64> $12 = global ptr [d], index [$9] activate=true
    $13 : global store [$12 <- $16]
  }
}
)";
  CompiledKernel on = compile(*parse(text), parse_lowering("vector=on,float64=on,int64=on"));
  ASSERT_EQ(on.tasks.size(), 2u);
  EXPECT_EQ(on.tasks[0].vector, 4u);
  EXPECT_EQ(to_json(on)["tasks"][0].value("vector", 0), 4);
  EXPECT_NE(disassemble(on.tasks[0].spirv).find("OpTypeVector %float 4"), std::string::npos);
  EXPECT_EQ(on.tasks[1].vector, 1u) << "x at i + 1 and a 64-bit d are no 4-vectors of 32-bit elements";
  EXPECT_EQ(compile(*parse(text), parse_lowering("float64=on,int64=on")).tasks[0].vector, 1u)
      << "compile alone takes no vector steps";
  EXPECT_EQ(compile(*parse(text), parse_lowering("vector=off,float64=on,int64=on")).tasks[0].vector, 1u);
  EXPECT_THROW(parse_lowering("vector=4"), UserError);
}

}  // namespace
}  // namespace pb::codegen::spirv
