// The LLVM CPU backend's run time: adstack overflow is an error naming kernel, task, stack and
// capacity (never a wrong value), the flag resets and a later launch with a larger size succeeds;
// the heap grows across launches (doubling, or exactly when doubling fails); many more iterations
// than threads give the interpreter's results (no slice is shared between threads).
#include "runtime/cpu/cpu.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "kernel_gen.h"
#include "runtime/interp/interpreter.h"
#include "workbench/workspace/gradient.h"

namespace pb::runtime::cpu {
namespace {

// Each of N iterations pushes arg(0) values onto a stack whose capacity is arg(1), then stores
// the sum of what it pops into y.
std::string stack_kernel(int n) {
  return fmt::format(R"(field x : f32[{0}]
field y : f32[{0}]
arg 0 : i32
arg 1 : i32
kernel "pushes" {{
  <i32> $0 = const 0
  <i32> $1 = argload[0]
  <i32> $2 = const {0}
  $3 : for in range($0, $2) block_dim=adaptive {{
    <i32> $4 = loop $3 index 0
    <*f32> $5 = global ptr [x], index [$4] activate=true
    <f32> $6 = global load $5
    <f32> $7 = stack alloc (max_size=0, size=arg(1))
    $8 : for in range($0, $1) block_dim=adaptive {{
      <i32> $9 = loop $8 index 0
      <f32> $10 = cast_value<f32> $9
      <f32> $11 = mul $6 $10
      <f32> $12 : stack push $7, val = $11
    }}
    <*f32> $13 = alloca
    $14 : for in range($0, $1) block_dim=adaptive {{
      <f32> $15 = stack load top $7
      <f32> $16 : stack pop $7
      <f32> $17 = local load [$13]
      <f32> $18 = add $17 $15
      <f32> $19 : local store [$13 <- $18]
    }}
    <f32> $20 = local load [$13]
    <*f32> $21 = global ptr [y], index [$4] activate=true
    $22 : global store [$21 <- $20]
  }}
}}
)",
                     n);
}

nlohmann::json stack_inputs(int n, int pushes, int capacity) {
  std::vector<double> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.5 + 0.25 * (i % 7);
  return {{"fields", {{"x", {{"data", x}}}}}, {"args", {pushes, capacity}}};
}

// Runs `k` on the interpreter and on `rt` (through a kernel compiled for the state) and expects
// every element of every field to match; returns how many were compared.
size_t expect_same(const ir::Kernel& k, const nlohmann::json& inputs, CpuRuntime& rt) {
  State a = make_state(k, inputs), b = make_state(k, inputs);
  runtime::run_kernel(k, a);
  CpuKernel ck(k, b);
  DeviceMemory m = pack(ck, b);
  rt.launch(ck, m);
  unpack(ck, m, b);
  size_t compared = 0;
  for (const auto& [name, buf] : a.fields) {
    const Buffer& other = b.fields.at(name);
    EXPECT_EQ(buf.size(), other.size());
    for (size_t i = 0; i < buf.size() && i < other.size(); ++i, ++compared) {
      double x = buf.data[i].as_f64(), y = other.data[i].as_f64();
      EXPECT_NEAR(x, y, 1e-5 * std::max(std::fabs(x), std::fabs(y))) << name << "[" << i << "]";
    }
  }
  return compared;
}

TEST(CpuAdstack, OverflowIsAnErrorAndALaterLargerLaunchSucceeds) {
  auto k = ir::parse_kernel(stack_kernel(64));
  CpuRuntime rt;
  State st = make_state(*k, stack_inputs(64, 5, 2));
  CpuKernel ck(*k, st);
  DeviceMemory m = pack(ck, st);
  try {
    rt.launch(ck, m);
    FAIL() << "an overflowing push did not fail the launch";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("autodiff stack overflow"), std::string::npos) << msg;
    EXPECT_NE(msg.find("kernel \"pushes\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("task task1_range_for"), std::string::npos) << msg;
    EXPECT_NE(msg.find("stack $7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("capacity of 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("raise ad_stack_size"), std::string::npos) << msg;
  }
  // The interpreter fails too (never a wrong value on one side only).
  State si = make_state(*k, stack_inputs(64, 5, 2));
  EXPECT_THROW(runtime::run_kernel(*k, si), UserError);
  // Same runtime, same compiled kernel, a capacity that fits: the flag was reset.
  EXPECT_GT(expect_same(*k, stack_inputs(64, 5, 5), rt), 0u);
  State s2 = make_state(*k, stack_inputs(64, 5, 5));
  DeviceMemory m2 = pack(ck, s2);
  EXPECT_NO_THROW(rt.launch(ck, m2));
}

TEST(CpuAdstack, HeapGrowsAcrossLaunchesByDoubling) {
  auto k = ir::parse_kernel(stack_kernel(32));
  CpuRuntime rt;
  int64_t last_bytes = 0, last_allocations = 0;
  for (int cap : {1, 2, 3, 40, 41, 1000}) {
    EXPECT_GT(expect_same(*k, stack_inputs(32, cap, cap), rt), 0u);
    // One slice per thread of the task's stride: 8-byte count + cap (primal, adjoint) f32 pairs.
    int64_t stride = (8 + 2 * cap * 4 + 15) / 16 * 16;
    stride = (stride + 63) / 64 * 64;
    EXPECT_EQ(rt.heap_needed_bytes() >= stride * rt.threads(), true);
    EXPECT_GE(rt.heap_bytes(), stride * rt.threads());
    EXPECT_LE(rt.heap_bytes(), 2 * std::max(rt.heap_needed_bytes(), last_bytes));
    EXPECT_GE(rt.heap_bytes(), last_bytes);  // never shrinks
    EXPECT_GE(rt.heap_allocations(), last_allocations);
    last_bytes = rt.heap_bytes();
    last_allocations = rt.heap_allocations();
  }
  EXPECT_GE(last_allocations, 2) << "the heap never grew";
}

// Heap bytes per worker slice of stack_kernel with capacity `cap`: an 8-byte count and `cap`
// (primal, adjoint) f32 pairs, 16-byte aligned, the stride 64-byte aligned.
int64_t slice_bytes(int64_t cap) { return ((8 + 2 * cap * 4 + 15) / 16 * 16 + 63) / 64 * 64; }

TEST(CpuAdstack, ExactSizeRetryWhenDoublingFails) {
  auto k = ir::parse_kernel(stack_kernel(8));
  CpuRuntime plain(2, 0);
  expect_same(*k, stack_inputs(8, 10, 10), plain);
  EXPECT_EQ(plain.heap_bytes(), 2 * slice_bytes(10));
  expect_same(*k, stack_inputs(8, 20, 20), plain);
  EXPECT_EQ(plain.heap_bytes(), 2 * (2 * slice_bytes(10))) << "did not grow by doubling";
  // With a limit between the exact need and the doubled size, the exact retry succeeds.
  int64_t need = 2 * slice_bytes(20);
  ASSERT_GT(2 * 2 * slice_bytes(10), need + 32);
  CpuRuntime limited(2, need + 32);
  expect_same(*k, stack_inputs(8, 10, 10), limited);
  EXPECT_EQ(limited.heap_bytes(), 2 * slice_bytes(10));
  EXPECT_GT(expect_same(*k, stack_inputs(8, 20, 20), limited), 0u);
  EXPECT_EQ(limited.heap_bytes(), need) << "not retried at exactly the required size";
  // Beyond the limit even exactly: a clear error, not a crash.
  State st = make_state(*k, stack_inputs(8, 400, 400));
  CpuKernel ck(*k, st);
  DeviceMemory m = pack(ck, st);
  try {
    limited.launch(ck, m);
    FAIL() << "a heap beyond the limit was allocated";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate the adstack heap"), std::string::npos) << e.what();
  }
}

TEST(CpuAdstack, ManyMoreIterationsThanThreadsMatchTheInterpreter) {
  CpuRuntime rt;
  auto k = ir::parse_kernel(stack_kernel(10000));
  EXPECT_EQ(expect_same(*k, stack_inputs(10000, 7, 7), rt), 20000u);
}

// The reverse kernel of a loop-carried dynamic loop (stacks sized by a size expression over a
// field) over 5000 iterations: forward + reverse on both backends.
TEST(CpuAdstack, ReverseLoopCarriedKernelMatchesTheInterpreter) {
  const int n = 5000;
  auto forward = ir::parse_kernel(bench::carried_loop_kernel(n, 0.5, 1.5), "carried.chi");
  std::vector<double> x(n), counts(n);
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = 0.1 + 0.001 * i;
    counts[static_cast<size_t>(i)] = i % 13;
  }
  workbench::RunRequest req;
  req.inputs = {{"fields", {{"x", {{"data", x}}}, {"n", {{"data", counts}}}}}};
  req.seed_grads = {{"y", 1.0}};
  auto a = workbench::run_with_gradients(*forward, "reverse_ad", req);
  req.backend = workbench::Backend::cpu;
  auto b = workbench::run_with_gradients(*forward, "reverse_ad", req);
  const auto& ga = a.values["fields"]["x"]["grad"];
  const auto& gb = b.values["fields"]["x"]["grad"];
  ASSERT_EQ(ga.size(), static_cast<size_t>(n));
  ASSERT_EQ(gb.size(), static_cast<size_t>(n));
  size_t nonzero = 0;
  for (size_t i = 0; i < ga.size(); ++i) {
    double p = ga[i].get<double>(), q = gb[i].get<double>();
    nonzero += p != 0;
    EXPECT_NEAR(p, q, 1e-5 * std::max(std::fabs(p), std::fabs(q))) << "x_grad[" << i << "]";
  }
  EXPECT_GT(nonzero, 0u);
}

TEST(CpuErrors, OutOfBoundsIndexIsAnErrorNamingTheStatement) {
  auto k = ir::parse_kernel(R"(field x : f32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 5
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = const 1
    $6 : global store [$4 <- $5]
  }
}
)");
  State st = make_state(*k, nullptr);
  try {
    cpu::run_kernel(*k, st);
    FAIL() << "an out-of-bounds store ran";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index out of bounds for field 'x'"), std::string::npos) << e.what();
  }
}

TEST(CpuErrors, IntegerDivisionByZeroIsAnError) {
  auto k = ir::parse_kernel(R"(field y : i32[]
kernel {
  <i32> $0 = argload[0]
  <i32> $1 = const 7
  <i32> $2 = div $1 $0
  <*i32> $3 = global ptr [y], index [] activate=true
  $4 : global store [$3 <- $2]
}
)");
  State st = make_state(*k, {{"args", {0}}});
  try {
    cpu::run_kernel(*k, st);
    FAIL() << "a division by zero ran";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
  State ok = make_state(*k, {{"args", {2}}});
  cpu::run_kernel(*k, ok);
  EXPECT_EQ(ok.fields.at("y").data.at(0).as_i64(), 3);
}

}  // namespace
}  // namespace pb::runtime::cpu

namespace pb::runtime::cpu {
namespace {

// A construct the backend cannot lower is a UserError naming the statement, not a crash.
TEST(CpuErrors, UnloweredStatementIsAnErrorNamingIt) {
  auto k = ir::parse_kernel(R"(field x : i32[8]
kernel {
  $0 = offloaded range_for(0, 8) grid_dim=0 block_dim=64
  body {
    <*i32> $1 = thread local ptr (offset = 4096 B)
    <i32> $2 = const 1
    $3 : global store [$1 <- $2]
  }
}
)");
  State st = make_state(*k, nullptr);
  try {
    cpu::run_kernel(*k, st);
    FAIL() << "thread-local storage at 4096 bytes was lowered";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("the cpu backend cannot lower `"), std::string::npos) << msg;
    EXPECT_NE(msg.find("thread local ptr"), std::string::npos) << msg;
    EXPECT_NE(msg.find("beyond 512 bytes"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace pb::runtime::cpu

namespace pb::runtime::cpu {
namespace {

// The cpu tracks each stack's deepest depth (max over the launch's calls), as the interpreter does.
TEST(CpuAdstack, DeepestDepthMatchesTheInterpreters) {
  auto k = ir::parse_kernel(stack_kernel(64));
  State a = make_state(*k, stack_inputs(64, 5, 8)), b = make_state(*k, stack_inputs(64, 5, 8));
  RunResult interp = runtime::run_kernel(*k, a);
  RunResult cpu = cpu::run_kernel(*k, b);
  ASSERT_EQ(interp.max_stack_depth.count(7), 1u);
  EXPECT_EQ(interp.max_stack_depth.at(7), 5);
  EXPECT_EQ(cpu.max_stack_depth, interp.max_stack_depth);
  EXPECT_EQ(cpu.stack_capacity.at(7), 8);
}

// f64 mode runs the kernel widened to f64: 1 + 1e-9 survives, as on the interpreter.
TEST(CpuF64, F64ModeComputesF32InF64) {
  auto k = ir::parse_kernel(R"(field x : f32[2]
field y : f32[2]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = const 1e-09
    <f32> $7 = add $5 $6
    <f32> $8 = sub $7 $5
    <*f32> $9 = global ptr [y], index [$3] activate=true
    $10 : global store [$9 <- $8]
  }
}
)");
  nlohmann::json in = {{"fields", {{"x", {{"data", {1.0, 2.0}}}}}}};
  RunOptions f64;
  f64.f64 = true;
  State wide_interp = make_state(*k, in), wide_cpu = make_state(*k, in), narrow = make_state(*k, in);
  runtime::run_kernel(*k, wide_interp, f64);
  cpu::run_kernel(*k, wide_cpu, f64);
  cpu::run_kernel(*k, narrow);
  EXPECT_EQ(narrow.fields.at("y").data.at(0).as_f64(), 0.0);  // f32: 1 + 1e-9 == 1
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(wide_cpu.fields.at("y").dtype, ir::ScalarKind::f64);
    EXPECT_NEAR(wide_cpu.fields.at("y").data.at(i).as_f64(), 1e-9, 1e-15);
    EXPECT_EQ(wide_cpu.fields.at("y").data.at(i).as_f64(), wide_interp.fields.at("y").data.at(i).as_f64());
  }
}

// A stack's size is evaluated again at a launch only when what it reads changed: the trip counts
// grow between two launches of one compiled kernel on the same memory, and the second launch
// gets the larger capacity (a kept one would overflow).
TEST(CpuAdstack, SizeIsEvaluatedAgainWhenTheFieldItReadsChanges) {
  auto forward = ir::parse_kernel(bench::carried_loop_kernel(16, 0.5, 1.5));
  auto reverse = workbench::make_reverse_kernel(*forward, "reverse_ad");
  nlohmann::json in = {
      {"fields", {{"n", {{"data", std::vector<int>(16, 2)}}}, {"y_grad", {{"data", std::vector<float>(16, 1.0f)}}}}}};
  State st = make_state(*forward, in);
  CpuKernel ck(*reverse, st);
  DeviceMemory m = pack(ck, st);
  CpuRuntime rt(1);
  LaunchReport first = rt.launch(ck, m);
  ASSERT_EQ(first.stack_capacity.size(), 1u);
  const int64_t small = first.stack_capacity.begin()->second;
  EXPECT_EQ(small, 4);                                                // 2 + max n
  EXPECT_EQ(rt.launch(ck, m).stack_capacity.begin()->second, small);  // unchanged inputs: the same

  // The same memory, new contents: n (i32, packed four bytes each) becomes 6 everywhere.
  auto n_id = reverse->find_field("n");
  ASSERT_TRUE(n_id);
  auto* trips = reinterpret_cast<int32_t*>(m.fields.at(static_cast<size_t>(*n_id)).data());
  for (int i = 0; i < 16; ++i) trips[i] = 6;
  LaunchReport second = rt.launch(ck, m);
  EXPECT_EQ(second.stack_capacity.begin()->second, 8);  // 2 + 6, and no overflow
}

// Interpreter-only options are refused, never ignored: a check that did not run did not pass.
TEST(CpuBackend, InterpreterOnlyOptionsAreRefused) {
  auto k = ir::parse_kernel(stack_kernel(8));
  for (int which = 0; which < 2; ++which) {
    RunOptions o;
    (which == 0 ? o.shuffle : o.trace_decisions) = true;
    State st = make_state(*k, stack_inputs(8, 4, 2));
    try {
      cpu::run_kernel(*k, st, o);
      ADD_FAILURE() << "option " << which << " was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("interpreter options"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pb::runtime::cpu

namespace pb::runtime::cpu {
namespace {

// Every primitive type runs on the CPU with the interpreter's values, bit for bit: half
// rounding at each operation (2048 + 1 = 2048, overflow to inf, 0.1 as its nearest half) and
// integer wrap-around at 8 and 16 bits.
TEST(CpuTypes, NarrowTypesMatchTheInterpreterBitForBit) {
  const char* text = R"(field h : f16[3]
field b : i8[3]
field w : u16[3]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <f16> $2 = const 2048
  <i8> $3 = const 100
  <u16> $4 = const 65000
  $5 : for in range($0, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f16> $7 = global ptr [h], index [$6] activate=true
    <f16> $8 = global load $7
    <f16> $9 = mul $8 $2
    <f16> $10 = add $9 $8
    <f16> $11 = sqrt $10
    $12 : global store [$7 <- $11]
    <*i8> $13 = global ptr [b], index [$6] activate=true
    <i8> $14 = cast_value<i8> $6
    <i8> $15 = mul $14 $3
    <i8> $16 = atomic add($13, $15)
    <*u16> $17 = global ptr [w], index [$6] activate=true
    <u16> $18 = cast_value<u16> $6
    <u16> $19 = mul $18 $4
    $20 : global store [$17 <- $19]
  }
}
)";
  auto k = ir::parse_kernel(text);
  nlohmann::json inputs = {{"fields", {{"h", {{"data", {0.1, 40, -3}}}}, {"b", {{"data", {1, 2, 3}}}}}}};
  State si = make_state(*k, inputs), sc = make_state(*k, inputs);
  runtime::run_kernel(*k, si);
  cpu::run_kernel(*k, sc);
  for (const char* f : {"h", "b", "w"})
    for (size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(fmt::format("{}[{}]", f, i));
      EXPECT_TRUE(sc.fields.at(f).data[i].identical(si.fields.at(f).data[i]))
          << sc.fields.at(f).data[i].to_string() << " vs " << si.fields.at(f).data[i].to_string();
    }
  EXPECT_TRUE(std::isinf(si.fields.at("h").data[1].as_f64()));  // 40 * 2048 overflows f16
  EXPECT_TRUE(std::isnan(si.fields.at("h").data[2].as_f64()));  // sqrt of a negative
  EXPECT_EQ(si.fields.at("b").data[2].as_i64(), static_cast<int8_t>(203));
  EXPECT_EQ(si.fields.at("w").data[2].as_i64(), (2 * 65000) % 65536);
}

TEST(CpuTypes, QuantTypesAreRefusedNamingTheFirstUse) {
  auto k = ir::parse_kernel(
      "kernel {\n  <i32> $0 = const 3\n  <*qi4> $1 = global ptr [S3place<qi4><bit>], index [$0] activate=false\n"
      "  $2 : global store [$1 <- $0]\n}\n");
  State s = make_state(*k, {{"fields", {{"S3place<qi4><bit>", {{"shape", {4}}}}}}});
  try {
    cpu::run_kernel(*k, s);
    ADD_FAILURE() << "a quant kernel ran on the CPU";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not compile quant types yet: `<*qi4> $1 = global ptr"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pb::runtime::cpu

namespace pb::runtime::cpu {
namespace {

// LLVM registers the host target on the first compile. Eight threads making their first kernels
// at once (each test runs in a process of its own) must all get the target: registered twice,
// every lookup failed with "Cannot choose between targets".
TEST(CpuCompile, FirstCompilesOnManyThreadsAtOnce) {
  auto k = ir::parse_kernel(stack_kernel(16));
  State st = make_state(*k, stack_inputs(16, 3, 4));
  constexpr int kThreads = 8;
  std::atomic<int> waiting{kThreads}, compiled{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();
      try {
        CpuKernel ck(*k, st);
        ++compiled;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(compiled.load(), kThreads);
}

}  // namespace
}  // namespace pb::runtime::cpu
