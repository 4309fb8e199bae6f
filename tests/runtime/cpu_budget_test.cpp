// The LLVM CPU backend's step budget: an endless `while` or a huge trip count ends with an error
// naming the kernel, task, loop and budget (never a hang: ctest's TIMEOUT fails this test on a JIT
// without a budget); the budget counts loop iterations exactly (a parallel task's trip count,
// nested trip counts, `while` iterations) over the whole launch; the flag resets between launches.
#include <gtest/gtest.h>

#include <string>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "runtime/cpu/cpu.h"
#include "runtime/interp/interpreter.h"

namespace pb::runtime::cpu {
namespace {

// The error of running `text` on the cpu with `max_steps` ("" when it runs).
std::string cpu_error(const std::string& text, uint64_t max_steps, const nlohmann::json& inputs = nullptr) {
  auto k = ir::parse_kernel(text);
  State st = make_state(*k, inputs);
  RunOptions o;
  o.max_steps = max_steps;
  try {
    cpu::run_kernel(*k, st, o);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(CpuStepBudget, WhileTrueInASerialTaskEndsWithTheDefaultBudget) {
  std::string msg = cpu_error("kernel \"spin\" {\n  $1 : while true {\n  }\n}\n", kDefaultMaxSteps);
  EXPECT_CONTAINS(msg, "exceeded its step budget");
  EXPECT_CONTAINS(msg, "kernel \"spin\"");
  EXPECT_CONTAINS(msg, "task task0_serial");
  EXPECT_CONTAINS(msg, "`$1 : while true");
  EXPECT_CONTAINS(msg, "max_steps=1000000000");
  EXPECT_CONTAINS(msg, "--max-steps");
}

// Every iteration of a parallel loop spins with a side effect; each chunk leaves its loop.
constexpr const char* kSpinEach = R"(field y : i32[64]
kernel "spin_each" {
  <i32> $0 = const 0
  <i32> $1 = const 64
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    $4 : while true {
      <*i32> $5 = global ptr [y], index [$3] activate=true
      <i32> $6 = global load $5
      <i32> $7 = const 1
      <i32> $8 = add $6 $7
      $9 : global store [$5 <- $8]
    }
  }
}
)";

TEST(CpuStepBudget, WhileTrueInAParallelLoopEnds) {
  std::string msg = cpu_error(kSpinEach, 1'000'000);
  EXPECT_CONTAINS(msg, "kernel \"spin_each\"");
  EXPECT_CONTAINS(msg, "`$4 : while true");
  EXPECT_CONTAINS(msg, "max_steps=1000000");
}

// A nested trip count of 2e9 is refused at the loop's entry, without running it.
TEST(CpuStepBudget, HugeNestedTripCountIsRefusedAtTheLoop) {
  std::string msg = cpu_error(R"(field y : i32[4]
kernel "big" {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <i32> $2 = const 2000000000
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : for in range($0, $2) block_dim=adaptive {
      <*i32> $6 = global ptr [y], index [$4] activate=true
      <i32> $7 = atomic add($6, $1)
    }
  }
}
)",
                              kDefaultMaxSteps);
  EXPECT_CONTAINS(msg, "kernel \"big\"");
  EXPECT_CONTAINS(msg, "`$5 : for in range($0, $2)");
  EXPECT_CONTAINS(msg, "max_steps=1000000000");
}

// A parallel loop longer than the budget is refused before it runs.
TEST(CpuStepBudget, ParallelTripCountOverTheBudgetIsRefused) {
  std::string msg = cpu_error(R"(field y : i32[]
kernel "wide" {
  <i32> $0 = const 0
  <i32> $1 = const 2000
  $2 : for in range($0, $1) block_dim=adaptive {
    <*i32> $3 = global ptr [y], index [] activate=true
    <i32> $4 = atomic add($3, $1)
  }
}
)",
                              1000);
  EXPECT_CONTAINS(msg, "kernel \"wide\"");
  EXPECT_CONTAINS(msg, "`$2 : for in range($0, $1)");
  EXPECT_CONTAINS(msg, "max_steps=1000");
}

// 100 parallel iterations, each with 7 nested ones: 800 steps, counted exactly whatever the
// chunking, so 800 runs and 799 fails; 0 is no limit.
constexpr const char* kCounted = R"(field y : i32[100]
kernel "counted" {
  <i32> $0 = const 0
  <i32> $1 = const 100
  <i32> $2 = const 7
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : for in range($0, $2) block_dim=adaptive {
      <*i32> $6 = global ptr [y], index [$4] activate=true
      <i32> $7 = global load $6
      <i32> $8 = add $7 $2
      $9 : global store [$6 <- $8]
    }
  }
}
)";

TEST(CpuStepBudget, CountsLoopIterationsExactlyOverTheLaunch) {
  EXPECT_EQ(cpu_error(kCounted, 800), "");
  EXPECT_EQ(cpu_error(kCounted, 0), "");
  std::string msg = cpu_error(kCounted, 799);
  EXPECT_CONTAINS(msg, "kernel \"counted\"");
  EXPECT_CONTAINS(msg, "max_steps=799");
  // The interpreter counts statements too: its budget is never the looser one.
  auto k = ir::parse_kernel(kCounted);
  State st = make_state(*k, nullptr);
  RunOptions o;
  o.max_steps = 800;
  EXPECT_THROW(runtime::run_kernel(*k, st, o), UserError);
}

// The budget spans the launch's tasks: two loops of 50 iterations need 100.
TEST(CpuStepBudget, TheBudgetSpansTheTasksOfALaunch) {
  constexpr const char* two = R"(field y : i32[50]
kernel "two" {
  <i32> $0 = const 0
  <i32> $1 = const 50
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*i32> $4 = global ptr [y], index [$3] activate=true
    $5 : global store [$4 <- $3]
  }
  $6 : for in range($0, $1) block_dim=adaptive {
    <i32> $7 = loop $6 index 0
    <*i32> $8 = global ptr [y], index [$7] activate=true
    $9 : global store [$8 <- $0]
  }
}
)";
  EXPECT_EQ(cpu_error(two, 100), "");
  std::string msg = cpu_error(two, 99);
  EXPECT_CONTAINS(msg, "task task2_range_for");
  EXPECT_CONTAINS(msg, "`$6 : for in range($0, $1)");
}

// The flag resets: the same runtime and compiled kernel run with a budget that fits.
TEST(CpuStepBudget, ALaunchAfterAnExceededBudgetRuns) {
  auto k = ir::parse_kernel(kCounted);
  State st = make_state(*k, nullptr);
  CpuKernel ck(*k, st);
  CpuRuntime rt;
  DeviceMemory m = pack(ck, st);
  EXPECT_THROW(rt.launch(ck, m, 500), UserError);
  DeviceMemory m2 = pack(ck, st);
  EXPECT_NO_THROW(rt.launch(ck, m2, 800));
  unpack(ck, m2, st);
  EXPECT_EQ(st.fields.at("y").data.at(99).as_i64(), 49);
}

}  // namespace
}  // namespace pb::runtime::cpu
