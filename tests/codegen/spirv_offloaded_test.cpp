// Kernels in the offloaded stage: one module per serial / range_for / struct_for task (list
// maintenance over dense SNodes gets none), dispatch metadata from the task statements, global
// temporaries as the first temps words and values crossing tasks after them, the access chain
// and thread-local storage in the modules; and the located errors for what has no meaning here.
// Every module passes spirv-val (compile validates). The SPIR-V text is checked with FileCheck
// in tests/codegen/spirv_offloaded.chi; runs on the device in tests/runtime/vulkan_offloaded_test.cpp.
#include <fmt/format.h>

#include <algorithm>

#include "ir/diagnostic.h"
#include "spirv_test_util.h"

namespace pb::codegen::spirv {
namespace {

using test::count_opcode;
using test::lines_with;
using test::parse;

std::string error_of(const std::string& text) {
  try {
    compile(*parse(text));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kTasks = R"(dense S : [4, 6]
field a : f32[4, 6] in S
field n : i32[]
field y : i32[32]
kernel "tasks" {
  $0 = offloaded
  body {
    <*i32> $1 = global ptr [n], index [] activate=true
    <i32> $2 = global load $1
    <*i32> $3 = global tmp var (offset = 4 B)
    $4 : global store [$3 <- $2]
  }
  $5 = offloaded clear_list S
  $6 = offloaded listgen S0root->S
  $7 = offloaded struct_for(S) grid_dim=0 block_dim=16 bls=none
  body {
    <i32> $8 = loop $7 index 0
    <i32> $9 = loop $7 index 1
    <*gen> $10 = get root [S0root][root]
    <i32> $11 = linearized(ind {}, stride {})
    <*gen> $12 = [S0root][root]::lookup($10, $11) activate = false
    <*gen> $13 = get child [S0root->S] $12
    <i32> $14 = linearized(ind {$8, $9}, stride {4, 6})
    <*gen> $15 = [S][dense]::lookup($13, $14) activate = false
    <*f32> $16 = get child [S->a] $15
    <f32> $17 = global load $16
    <f32> $18 = add $17 $17
    $19 : global store [$16 <- $18]
  }
  $20 = offloaded range_for($2, tmp(offset=4B)) grid_dim=0 block_dim=32
  body {
    <i32> $21 = loop $20 index linear
    <*i32> $22 = global ptr [y], index [$21] activate=true
    $23 : global store [$22 <- $21]
  }
  $24 = offloaded garbage collect S
}
)";

TEST(Offloaded, EachTaskStatementIsATaskWithItsDispatch) {
  auto ck = compile(*parse(kTasks));
  ASSERT_EQ(ck.tasks.size(), 3u);  // clear_list, listgen and gc of a dense SNode: no task
  EXPECT_EQ(ck.tasks[0].kind, TaskKind::serial);
  EXPECT_EQ(ck.tasks[0].name, "tasks_t0_serial");
  EXPECT_EQ(ck.tasks[0].invocations, 1u);
  const TaskInfo& sf = ck.tasks[1];
  EXPECT_EQ(sf.kind, TaskKind::struct_for);
  EXPECT_EQ(sf.name, "tasks_t1_struct_for_7");
  EXPECT_EQ(sf.space, "S");
  EXPECT_EQ(sf.invocations, 24u);
  EXPECT_EQ(sf.workgroup_size, 16u);
  const TaskInfo& rf = ck.tasks[2];
  EXPECT_EQ(rf.kind, TaskKind::range_for);
  EXPECT_FALSE(rf.begin.constant);
  EXPECT_EQ(rf.begin.source, "n[]");
  EXPECT_FALSE(rf.end.constant);
  EXPECT_EQ(rf.end.source, "tmp(offset=4B)");
  EXPECT_FALSE(rf.invocations);  // computed in the task: any grid works
  EXPECT_EQ(rf.workgroup_size, 32u);
  for (const TaskInfo& t : ck.tasks)
    EXPECT_EQ(lines_with(t.spirv, fmt::format("OpEntryPoint GLCompute %{} \"{}\"", t.name, t.name)).size(), 1u);
}

TEST(Offloaded, TemporariesComeFirstInTempsAndValuesCrossingTasksAfterThem) {
  auto ck = compile(*parse(kTasks));
  // Temporary bytes [4, 8): words 0 and 1; $2 (a load of the serial task, the last task's
  // begin) goes to word 2.
  EXPECT_EQ(ck.temps_words, 3u);
  EXPECT_FALSE(lines_with(ck.tasks[0].spirv, "OpAccessChain %_ptr_StorageBuffer_uint %temps %uint_0 %uint_1").empty())
      << disassemble(ck.tasks[0].spirv);
  EXPECT_FALSE(lines_with(ck.tasks[0].spirv, "OpAccessChain %_ptr_StorageBuffer_uint %temps %uint_0 %uint_2").empty())
      << disassemble(ck.tasks[0].spirv);
  EXPECT_FALSE(lines_with(ck.tasks[2].spirv, "OpAccessChain %_ptr_StorageBuffer_uint %temps %uint_0 %uint_2").empty())
      << disassemble(ck.tasks[2].spirv);
  // The field reached through `get child` is bound like one reached through `global ptr`.
  bool a_bound = false;
  for (const Binding& b : ck.bindings) a_bound |= b.name == "a" && b.kind == BindingKind::field;
  EXPECT_TRUE(a_bound);
}

TEST(Offloaded, ThreadLocalStorageIsAFunctionVariableReducedByTheEpilogue) {
  auto ck = compile(*parse(R"(field total : i32[]
kernel "tls" {
  $0 = offloaded range_for(0, 100) grid_dim=0 block_dim=64
  tls prologue {
    <*i32> $1 = thread local ptr (offset = 0 B)
    <i32> $2 = const 0
    $3 : global store [$1 <- $2]
  }
  body {
    <i32> $4 = loop $0 index 0
    <*i32> $5 = thread local ptr (offset = 0 B)
    <i32> $6 = global load $5
    <i32> $7 = add $6 $4
    $8 : global store [$5 <- $7]
  }
  tls_epilogue {
    <*i32> $9 = thread local ptr (offset = 0 B)
    <i32> $10 = global load $9
    <*i32> $11 = global ptr [total], index [] activate=true
    <i32> $12 = atomic add($11, $10)
  }
}
)"));
  ASSERT_EQ(ck.tasks.size(), 1u);
  const auto& words = ck.tasks[0].spirv;
  EXPECT_EQ(lines_with(words, "%tls0 = OpVariable %_ptr_Function_int Function").size(), 1u) << disassemble(words);
  EXPECT_EQ(count_opcode(words, spv::OpAtomicIAdd), 1u);  // the epilogue only: tls accesses are plain
  EXPECT_EQ(ck.temps_words, 0u);
}

// f64 and i64 temporaries (an atomic on each) take aligned word pairs of temps, through a 64-bit
// view of the same binding: u64 words with int64=on, f64 ones without (no 64-bit atomic then).
constexpr const char* kWideTemporaries = R"(field x : f64[64]
field s : f64[]
field m : i64[]
kernel "wide" {
  $0 = offloaded
  body {
    <*f64> $1 = global ptr [s], index [] activate=true
    <f64> $2 = global load $1
    <*f64> $3 = global tmp var (offset = 8 B)
    $4 : global store [$3 <- $2]
  }
  $5 = offloaded range_for(0, 64) grid_dim=0 block_dim=16
  body {
    <i32> $6 = loop $5 index 0
    <*f64> $7 = global ptr [x], index [$6] activate=true
    <f64> $8 = global load $7
    <*f64> $9 = global tmp var (offset = 8 B)
    <f64> $10 = atomic add($9, $8)
    <*i64> $11 = global tmp var (offset = 16 B)
    <i64> $12 = cast_value<i64> $6
    <i64> $13 = atomic max($11, $12)
  }
}
)";

TEST(Offloaded, SixtyFourBitTemporariesUseAlignedWordPairs) {
  LoweringOptions o;
  o.float64 = o.int64 = true;
  auto ck = compile(*parse(kWideTemporaries), o);
  EXPECT_EQ(ck.temps_words, 6u);  // bytes [8, 24): words 2..5; 0 and 1 unused
  const auto& loop = ck.tasks.at(1).spirv;
  EXPECT_FALSE(lines_with(loop, "OpDecorate %temps_u64 Binding").empty()) << disassemble(loop);
  EXPECT_FALSE(lines_with(loop, "OpAccessChain %_ptr_StorageBuffer_ulong %temps_u64 %uint_0 %uint_1").empty());
  EXPECT_FALSE(lines_with(loop, "OpAccessChain %_ptr_StorageBuffer_ulong %temps_u64 %uint_0 %uint_2").empty());
  EXPECT_EQ(count_opcode(loop, spv::OpAtomicCompareExchange), 2u);  // f64 add and i64 max on the bits
  EXPECT_NE(std::find(ck.tasks[1].bindings.begin(), ck.tasks[1].bindings.end(), ck.bindings.size() - 1),
            ck.tasks[1].bindings.end());  // temps, the last binding, is listed though only the view uses it
  // Without int64 the serial task's view holds f64 values.
  LoweringOptions f64_only;
  f64_only.float64 = true;
  auto serial = parse(R"(field s : f64[]
kernel "f64_only" {
  $0 = offloaded
  body {
    <*f64> $1 = global ptr [s], index [] activate=true
    <f64> $2 = global load $1
    <*f64> $3 = global tmp var (offset = 0 B)
    $4 : global store [$3 <- $2]
  }
}
)");
  auto ck2 = compile(*serial, f64_only);
  EXPECT_FALSE(
      lines_with(ck2.tasks.at(0).spirv, "OpAccessChain %_ptr_StorageBuffer_double %temps_f64 %uint_0 %uint_0").empty())
      << disassemble(ck2.tasks[0].spirv);
}

// The statement each error names, and a part of its reason.
struct Refusal {
  const char* kernel;
  const char* statement;
  const char* reason;
};

TEST(Offloaded, WhatHasNoMeaningHereIsALocatedError) {
  const Refusal refusals[] = {
      {R"(field x : i32[8]
kernel "mixed" {
  <i32> $0 = const 1
  $1 = offloaded range_for(0, 8) grid_dim=0 block_dim=32
  body {
    <i32> $2 = loop $1 index 0
    <*i32> $3 = global ptr [x], index [$2] activate=true
    $4 : global store [$3 <- $0]
  }
}
)",
       "<i32> $0 = const 1", "holds only offloaded tasks at its root"},
      {R"(kernel "misaligned" {
  $0 = offloaded
  body {
    <*f64> $1 = global tmp var (offset = 4 B)
    <f64> $2 = const 1.5
    $3 : global store [$1 <- $2]
  }
}
)",
       "<*f64> $1 = global tmp var (offset = 4 B)", "a global temporary of 8 bytes must lie at an offset"},
      {R"(kernel "ret" {
  $0 = offloaded range_for(0, 4) grid_dim=0 block_dim=32
  body {
    <i32> $1 = loop $0 index 0
    $2 : return $1
  }
}
)",
       "$2 : return $1", "a return inside a parallel loop"},
      {R"(field x : f32[8]
kernel "mixed_tls" {
  $0 = offloaded range_for(0, 8) grid_dim=0 block_dim=32
  body {
    <*i32> $1 = thread local ptr (offset = 0 B)
    <*f32> $2 = thread local ptr (offset = 0 B)
    <f32> $3 = global load $2
  }
}
)",
       "<*f32> $2 = thread local ptr (offset = 0 B)", "used as both i32 and f32"},
      {R"(field x : f32[8]
kernel "unknown_cells" {
  $0 = offloaded range_for(0, 8) grid_dim=0 block_dim=32
  body {
    <i32> $1 = loop $0 index 0
    <*gen> $2 = get root nullptr
    <*gen> $3 = [S1dense][dense]::lookup($2, $1) activate = false
    <*f32> $4 = get child [S1dense->x] $3
    <f32> $5 = global load $4
  }
}
)",
       "[S1dense][dense]::lookup($2, $1)", "the number of cells of SNode 'S1dense' is not known"},
      {R"(dense S : [8]
field x : f32[8] in S
kernel "bls" {
  $0 = offloaded struct_for(S) grid_dim=0 block_dim=8 bls=x
  bls prologue {
    <i32> $1 = const 0
  }
  body {
    <i32> $2 = loop $0 index 0
  }
}
)",
       "$0 = offloaded struct_for(S)", "block-local storage blocks"},
      {R"(kernel "index_in_prologue" {
  $0 = offloaded range_for(0, 8) grid_dim=0 block_dim=32
  tls prologue {
    <i32> $1 = loop $0 index 0
  }
  body {
    <i32> $2 = loop $0 index 0
  }
}
)",
       "<i32> $1 = loop $0 index 0", "in the task's tls prologue or epilogue"},
  };
  for (const Refusal& r : refusals) {
    std::string e = error_of(r.kernel);
    EXPECT_NE(e.find("cannot lower `"), std::string::npos) << e;
    EXPECT_NE(e.find(r.statement), std::string::npos) << e;
    EXPECT_NE(e.find(r.reason), std::string::npos) << e;
  }
  // A sparse SNode the header does not declare: the whole kernel is refused before planning,
  // naming the first use (its cells would otherwise be taken for a dense space's).
  std::string e = error_of("kernel \"sparse\" {\n  $0 = offloaded listgen S1dense->S2bitmasked\n}\n");
  EXPECT_NE(e.find("`$0 = offloaded listgen S1dense->S2bitmasked` uses the sparse SNode 'S2bitmasked', which the "
                   "header does not declare"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace pb::codegen::spirv
