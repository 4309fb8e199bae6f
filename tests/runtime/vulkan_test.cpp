// The Vulkan runtime (runtime/vulkan) on the device the loader gives (lavapipe here and in CI):
// forward and reverse kernels with autodiff stacks match the reference interpreter under every
// lowering, with more invocations than one workgroup and with a grid stride; an overflow is an
// error and never a value, the flag resets and a larger size then succeeds; size expressions are
// evaluated at launch; the adstack heap grows by doubling and releases what it replaced; a failed
// assert is an error; kernel time comes from timestamps. Tests skip, saying why, only when there
// is no Vulkan device.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "codegen/spirv/compile.h"
#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "kernel_gen.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "runtime/vulkan/run.h"
#include "runtime/vulkan/runtime.h"
#include "vulkan_test_util.h"

namespace pb::runtime::vulkan {
namespace {

using test::device;
using test::expect_same;

// v = x[i]; repeat n[i] times: v = sin(v) * 1.5 - 0.3; y[i] = v. Over `size` elements.
std::string carried(int size) { return bench::carried_loop_kernel(size, 1.5, -0.3); }

std::unique_ptr<ir::Kernel> reverse_of(const std::string& text, const std::string& pipeline = "reverse_ad") {
  auto k = ir::parse_kernel(text, "carried.chi");
  passes::RunOptions ro;
  ro.capture = passes::Capture::none;
  EXPECT_FALSE(passes::run_pipeline(*k, passes::parse_pipeline(pipeline), ro).failed);
  return k;
}

// x[i] = 0.1 * (i % 13) - 0.6, n[i] = i % modulus, y_grad = 1.
State inputs(const ir::Kernel& k, int size, int modulus) {
  State s = make_state(k, nlohmann::json::object());
  for (int i = 0; i < size; ++i) {
    s.fields.at("x").data[static_cast<size_t>(i)] = ir::Value::make_f32(0.1f * static_cast<float>(i % 13) - 0.6f);
    s.fields.at("n").data[static_cast<size_t>(i)] = ir::Value::make_i32(i % modulus);
    s.fields.at("y_grad").data[static_cast<size_t>(i)] = ir::Value::make_f32(1.0f);
  }
  return s;
}

TEST(VulkanRuntime, ForwardAndReverseMatchTheInterpreterUnderEveryLowering) {
  REQUIRE_VULKAN();
  const int size = 300;  // more than one workgroup
  auto forward = ir::parse_kernel(carried(size), "carried.chi");
  auto reverse = reverse_of(carried(size));
  for (const ir::Kernel* k : {forward.get(), reverse.get()}) {
    State state = inputs(*k, size, 7);
    State want = state;
    run_kernel(*k, want);
    for (const codegen::spirv::LoweringOptions& o : codegen::spirv::all_stack_lowerings()) {
      codegen::spirv::CompiledKernel ck = codegen::spirv::compile(*k, o);
      for (bool optimize : {false, true}) {
        State got = state;
        LaunchOptions lo;
        lo.optimize = optimize;
        LaunchResult r = device()->launch(*k, ck, got, lo);
        std::string where = fmt::format("{}{}", codegen::spirv::lowering_name(o), optimize ? ", optimized" : "");
        EXPECT_EQ(r.stack_overflow, 0u) << where;
        EXPECT_GT(expect_same(want, got, where), 0u);
      }
    }
  }
}

TEST(VulkanRuntime, ManyWorkgroupsAndAGridStrideGiveTheInterpretersResult) {
  REQUIRE_VULKAN();
  const int size = 1000;
  auto k = reverse_of(carried(size));
  State state = inputs(*k, size, 5);
  State want = state;
  run_kernel(*k, want);
  for (uint32_t groups : {65535u, 3u, 1u}) {
    State got = state;
    LaunchOptions lo;
    lo.max_workgroups = groups;
    RunReport report = run_kernel(*device(), *k, got, {}, lo);
    ASSERT_FALSE(report.launch.tasks.empty());
    uint64_t launched = 0;
    for (const TaskRun& t : report.launch.tasks) launched = std::max(launched, t.invocations);
    const uint64_t wg = codegen::spirv::LoweringOptions{}.workgroup_size;
    EXPECT_EQ(launched, std::min<uint64_t>((size + wg - 1) / wg * wg, groups * wg)) << groups << " workgroups";
    EXPECT_GT(expect_same(want, got, fmt::format("{} workgroups", groups)), 0u);
  }
}

// An unrolled streaming loop (four iterations per grid-stride step, loads first) gives the
// interpreter's result for trip counts that leave partial steps, forward and reversed ranges,
// from one workgroup to one iteration per invocation.
TEST(VulkanRuntime, UnrolledStepsWithPartialTailsGiveTheInterpretersResult) {
  REQUIRE_VULKAN();
  for (int size : {1, 255, 1000, 5003})
    for (const char* order : {"", "reversed "}) {
      std::string text = fmt::format(R"(field x : f32[{0}]
field y : f32[{0}]
field z : i32[{0}]
kernel "unrolled" {{
  <i32> $0 = const 0
  <i32> $1 = const {0}
  <f32> $2 = const 1.5
  $3 : {1}for in range($0, $1) block_dim=adaptive {{
    <i32> $4 = loop $3 index 0
    <*f32> $5 = global ptr [x], index [$4] activate=true
    <f32> $6 = global load $5
    <f32> $7 = mul $6 $2
    <*f32> $8 = global ptr [y], index [$4] activate=true
    $9 : global store [$8 <- $7]
    <*i32> $10 = global ptr [z], index [$4] activate=true
    $11 : global store [$10 <- $4]
  }}
}}
)",
                                     size, order);
      auto k = ir::parse_kernel(text, "unrolled.chi");
      State state = make_state(*k, nlohmann::json::object());
      for (int i = 0; i < size; ++i)
        state.fields.at("x").data[static_cast<size_t>(i)] = ir::Value::make_f32(static_cast<float>(i % 7) - 2.5f);
      State want = state;
      run_kernel(*k, want);
      for (uint32_t groups : {1u, 3u, 65535u}) {
        State got = state;
        LaunchOptions lo;
        lo.max_workgroups = groups;
        RunReport report = run_kernel(*device(), *k, got, codegen::spirv::parse_lowering("vector=off"), lo);
        ASSERT_EQ(report.compiled.tasks.size(), 1u);
        EXPECT_EQ(report.compiled.tasks[0].unroll, 4u);
        EXPECT_GT(expect_same(want, got, fmt::format("{}{} with {} workgroups", size, order, groups)), 0u);
      }
    }
}

TEST(VulkanRuntime, OverflowIsAnErrorTheFlagResetsAndALargerSizeSucceeds) {
  REQUIRE_VULKAN();
  const int size = 200;
  // Fixed capacities of 6 entries: n[i] up to 4 fits (the reverse pushes 2 + n[i]), 5 does not.
  auto small = reverse_of(carried(size), "reverse_ad{ad_stack_size=6}");
  State state = inputs(*small, size, 9);
  try {
    run_kernel(*device(), *small, state);
    FAIL() << "an overflowing launch returned values";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("adstack overflow in kernel \"carried"), std::string::npos) << m;
    EXPECT_NE(m.find("6 entries"), std::string::npos) << m;
    EXPECT_NE(m.find("task"), std::string::npos) << m;
    EXPECT_NE(m.find("max_size"), std::string::npos) << m;
  }
  // The flag resets: a launch that fits succeeds on the same runtime.
  State fits = inputs(*small, size, 5);
  State want = fits;
  run_kernel(*small, want);
  run_kernel(*device(), *small, fits);
  EXPECT_GT(expect_same(want, fits, "after an overflow"), 0u);
  // A larger size succeeds where the small one overflowed.
  auto large = reverse_of(carried(size), "reverse_ad{ad_stack_size=16}");
  State again = inputs(*large, size, 9);
  want = again;
  run_kernel(*large, want);
  run_kernel(*device(), *large, again);
  EXPECT_GT(expect_same(want, again, "larger size"), 0u);
}

TEST(VulkanRuntime, SizeExpressionsAreEvaluatedAtLaunch) {
  REQUIRE_VULKAN();
  const int size = 130;
  auto k = reverse_of(carried(size));   // size=max(i in range(0, 130): 2 + n[i])
  State state = inputs(*k, size, 100);  // n up to 99: 101 entries, above the default capacity 64
  // Compiled with the default capacity, the launch overflows and says so.
  codegen::spirv::CompiledKernel ck = codegen::spirv::compile(*k, lowering_for(*k, device()->device()));
  State raw = state;
  LaunchResult r = device()->launch(*k, ck, raw);
  EXPECT_NE(r.stack_overflow, 0u);
  auto error = flag_error(ck, r);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("64 entries"), std::string::npos) << error->message;
  // run_kernel evaluates the size against the inputs and compiles that capacity in.
  State want = state, got = state;
  run_kernel(*k, want);
  RunReport report = run_kernel(*device(), *k, got);
  for (const auto& t : report.compiled.tasks)
    for (const auto& s : t.stacks) EXPECT_EQ(s.capacity, 101) << t.name;
  EXPECT_GT(expect_same(want, got, "evaluated size"), 0u);
}

TEST(VulkanRuntime, HeapGrowsByDoublingAndReleasesWhatItReplaced) {
  REQUIRE_VULKAN();
  Runtime runtime;  // a fresh heap
  uint64_t previous_bytes = 0;
  for (int size : {100, 300, 1000, 2500, 300}) {
    auto k = reverse_of(carried(size), "reverse_ad{ad_stack_size=8}");
    State state = inputs(*k, size, 5);
    State want = state;
    run_kernel(*k, want);
    RunReport report = run_kernel(runtime, *k, state);
    EXPECT_GT(expect_same(want, state, fmt::format("{} elements", size)), 0u);
    HeapStats h = runtime.heap_stats();
    uint64_t need = 0;
    for (const TaskRun& t : report.launch.tasks) need = std::max(need, t.heap_bytes);
    ASSERT_GT(need, 0u);
    EXPECT_GE(h.bytes, need);
    EXPECT_GE(h.bytes, previous_bytes) << "the heap never shrinks";
    if (need > previous_bytes) {
      EXPECT_GE(h.bytes, std::min<uint64_t>(2 * previous_bytes, h.bytes));
    }
    EXPECT_EQ(h.retired, 0u) << "every replaced buffer is released once its launch completed";
    EXPECT_EQ(h.released + 1, h.grows);
    previous_bytes = h.bytes;
  }
  EXPECT_GE(runtime.heap_stats().grows, 3u);
}

// A kernel launched again takes its buffers from the pool (no new allocation) and gives the same
// result; a larger launch allocates what the pool cannot serve.
TEST(VulkanRuntime, ALaunchAgainReusesTheBuffersOfTheLastOne) {
  REQUIRE_VULKAN();
  Runtime runtime;  // a fresh pool
  auto k = reverse_of(carried(300), "reverse_ad{ad_stack_size=8}");
  State first = inputs(*k, 300, 5), want = first;
  run_kernel(*k, want);
  run_kernel(runtime, *k, first);
  PoolStats after_first = runtime.pool_stats();
  EXPECT_GT(after_first.allocated, 2u);  // fields, gradients, staging
  EXPECT_EQ(after_first.reused, 0u);
  EXPECT_GT(after_first.pooled_bytes, 0u);
  for (int again = 0; again < 2; ++again) {
    State state = inputs(*k, 300, 5);
    run_kernel(runtime, *k, state);
    EXPECT_GT(expect_same(want, state, fmt::format("launch {}", again + 2)), 0u);
    EXPECT_EQ(runtime.pool_stats().allocated, after_first.allocated) << "launch " << again + 2;
    EXPECT_EQ(runtime.pool_stats().pooled_bytes, after_first.pooled_bytes);
  }
  EXPECT_EQ(runtime.pool_stats().reused, 2 * after_first.allocated);
  auto larger = reverse_of(carried(3000), "reverse_ad{ad_stack_size=8}");
  State big = inputs(*larger, 3000, 5), big_want = big;
  run_kernel(*larger, big_want);
  run_kernel(runtime, *larger, big);
  EXPECT_GT(expect_same(big_want, big, "a larger launch"), 0u);
  EXPECT_GT(runtime.pool_stats().allocated, after_first.allocated);
}

TEST(VulkanRuntime, ADoubledHeapThatCannotBeAllocatedIsRetriedAtTheExactSize) {
  REQUIRE_VULKAN();
  Runtime runtime;
  const int wg = static_cast<int>(codegen::spirv::LoweringOptions{}.workgroup_size);  // one workgroup
  auto k = reverse_of(carried(wg), "reverse_ad{ad_stack_size=8}");
  State state = inputs(*k, wg, 5);
  run_kernel(runtime, *k, state);
  uint64_t first = runtime.heap_stats().bytes;
  ASSERT_GT(first, 0u);
  // Heap sizes in units of the first launch's (one workgroup): allocations above the limit fail.
  auto wide = reverse_of(carried(wg * 5), "reverse_ad{ad_stack_size=8}");
  State wide_state = inputs(*wide, wg * 5, 5);
  State want = wide_state;
  run_kernel(*wide, want);
  runtime.heap().set_allocation_limit(5 * first);
  run_kernel(runtime, *wide, wide_state);  // need 5x; 2 x first < need, so the first try is the need
  EXPECT_EQ(runtime.heap_stats().bytes, 5 * first);
  EXPECT_EQ(runtime.heap_stats().exact_retries, 0u);
  auto wider = reverse_of(carried(wg * 6), "reverse_ad{ad_stack_size=8}");
  State wider_state = inputs(*wider, wg * 6, 5);
  want = wider_state;
  run_kernel(*wider, want);
  runtime.heap().set_allocation_limit(6 * first);
  run_kernel(runtime, *wider, wider_state);  // need 6x; doubling asks for 10x, refused; 6x retried
  EXPECT_EQ(runtime.heap_stats().exact_retries, 1u);
  EXPECT_EQ(runtime.heap_stats().bytes, 6 * first);
  EXPECT_GT(expect_same(want, wider_state, "exact retry"), 0u);
  // Not even the need fits: a user error naming the bytes, with the remedy.
  auto widest = reverse_of(carried(wg * 8), "reverse_ad{ad_stack_size=8}");
  State widest_state = inputs(*widest, wg * 8, 5);
  try {
    run_kernel(runtime, *widest, widest_state);
    FAIL() << "a heap the device cannot allocate was used";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(8 * first) + " bytes"), std::string::npos) << e.what();
  }
}

TEST(VulkanRuntime, AFailedAssertIsAnError) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(R"(kernel "asserting" {
  <i32> $0 = const 0
  <i32> $1 = const 500
  <i32> $2 = const 300
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <u1> $5 = cmp_ne $4 $2
    6 : assert $5, "i must not be %d", $4
  }
}
)",
                            "assert.chi");
  State state = make_state(*k, nlohmann::json::object());
  try {
    run_kernel(*device(), *k, state);
    FAIL() << "a failed assert returned";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("i must not be %d"), std::string::npos) << e.what();
  }
}

// y[i] counts up to arg 0 in a `while` of each invocation: with arg 0 at 2^31 - 1 the loop would
// run for minutes (lavapipe silently leaves any loop after 65,535 iterations, so the budget here
// is below that); the step budget ends it with an error naming the loop, and the same runtime
// then runs a loop that ends within the budget.
TEST(VulkanRuntime, AWhileLoopPastTheStepBudgetIsAnError) {
  REQUIRE_VULKAN();
  auto k = ir::parse_kernel(R"(field y : i32[256]
arg 0 : i32
kernel "spin" {
  <i32> $0 = const 0
  <i32> $1 = const 256
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $10 = argload[0]
    $4 : while true {
      <*i32> $5 = global ptr [y], index [$3] activate=true
      <i32> $6 = global load $5
      <u1> $11 = cmp_lt $6 $10
      $12 : while control nullptr, $11
      <i32> $7 = const 1
      <i32> $8 = add $6 $7
      $9 : global store [$5 <- $8]
    }
  }
}
)",
                            "spin.chi");
  LaunchOptions budget;
  budget.max_steps = 1000;
  State state = make_state(*k, {{"args", {2147483647}}});
  try {
    run_kernel(*device(), *k, state, {}, budget);
    FAIL() << "an endless while returned: y[0] = " << state.fields.at("y").data.at(0).as_i64();
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("exceeded its step budget in kernel \"spin\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("`while` loop $4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("max_steps=1000 "), std::string::npos) << msg;
    EXPECT_NE(msg.find("--max-steps"), std::string::npos) << msg;
  }
  State ends = make_state(*k, {{"args", {900}}});
  run_kernel(*device(), *k, ends, {}, budget);
  for (const ir::Value& v : ends.fields.at("y").data) EXPECT_EQ(v.as_i64(), 900);
}

// A serial loop of `trips` increments: lavapipe leaves it after 65,535 iterations, which the
// loop-exit check turns into an error (a GPU's driver runs it to the end).
TEST(VulkanRuntime, ALoopTheDriverLeavesEarlyIsAnError) {
  REQUIRE_VULKAN();
  auto kernel = [](int trips) {
    return ir::parse_kernel(fmt::format(R"(field y : i32[]
kernel "long_for" {{
  <i32> $0 = const 0
  <i32> $1 = const {}
  <i32> $2 = const 1
  <u1> $9 = cmp_lt $0 $1
  $10 : if $9 {{
    $3 : for in range($0, $1) block_dim=adaptive {{
      <*i32> $4 = global ptr [y], index [] activate=true
      <i32> $5 = global load $4
      <i32> $6 = add $5 $2
      $7 : global store [$4 <- $6]
    }}
  }}
}}
)",
                                        trips),
                            "long_for.chi");
  };
  auto within = kernel(60000);
  State ok = make_state(*within, nlohmann::json::object());
  run_kernel(*device(), *within, ok);
  EXPECT_EQ(ok.fields.at("y").data.at(0).as_i64(), 60000);
  auto beyond = kernel(100000);
  State st = make_state(*beyond, nlohmann::json::object());
  bool lavapipe = device()->device().name.find("llvmpipe") != std::string::npos;
  try {
    run_kernel(*device(), *beyond, st);
    EXPECT_FALSE(lavapipe) << "lavapipe's cut loop went unnoticed: y = " << st.fields.at("y").data.at(0).as_i64();
    EXPECT_EQ(st.fields.at("y").data.at(0).as_i64(), 100000);
  } catch (const UserError& e) {
    EXPECT_TRUE(lavapipe) << e.what();
    EXPECT_NE(std::string(e.what()).find("left loop $3 of kernel \"long_for\" before its end"), std::string::npos)
        << e.what();
  }
}

TEST(VulkanRuntime, KernelTimeComesFromTimestamps) {
  REQUIRE_VULKAN();
  if (!device()->device().timestamps) GTEST_SKIP() << "the device writes no timestamps";
  auto k = ir::parse_kernel(carried(256), "carried.chi");
  State state = inputs(*k, 256, 7);
  RunReport report = run_kernel(*device(), *k, state);
  EXPECT_TRUE(report.launch.timed);
  EXPECT_GT(report.launch.kernel_ms, 0.0);
  EXPECT_GE(report.launch.launch_ms, report.launch.kernel_ms);
  // Repeated dispatches (benchmarks): each repeat timed alone, the median reported, and the
  // result still the interpreter's (the kernel does not read what it writes).
  State want = inputs(*k, 256, 7);
  State repeated = want;
  run_kernel(*k, want);
  LaunchOptions lo;
  lo.dispatch_repeat = 5;
  RunReport again = run_kernel(*device(), *k, repeated, {}, lo);
  ASSERT_EQ(again.launch.tasks.size(), 1u);
  EXPECT_GT(again.launch.kernel_ms, 0.0);
  EXPECT_EQ(again.launch.kernel_ms, again.launch.tasks[0].ms);
  EXPECT_GT(again.launch.kernel_span_ms, 0.0);
  EXPECT_GT(expect_same(want, repeated, "5 repeats"), 0u);
}

TEST(VulkanRuntime, AnUnknownDeviceNameIsAUserErrorListingTheDevices) {
  try {
    Runtime r("no such device name");
    FAIL() << "opened a device that does not exist";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_TRUE(m.find("--device") != std::string::npos || m.find("no Vulkan device") != std::string::npos) << m;
  }
}

// 8- and 16-bit integers (lowered to 32-bit words by codegen/spirv/narrow_ints.h): every
// binary op over edge-value pairs, the unary ops and saturating float casts give the
// interpreter's bits.
TEST(VulkanRuntime, NarrowIntegersMatchTheInterpreterOnEdgeValues) {
  REQUIRE_VULKAN();
  const std::vector<std::string> binary = {"add", "sub",     "mul",    "div",     "floordiv", "mod",     "max",
                                           "min", "bit_and", "bit_or", "bit_xor", "bit_shl",  "bit_shr", "bit_sar"};
  const std::vector<std::string> unary = {"neg", "abs", "bit_not", "sgn"};
  for (const char* t : {"i8", "u8", "i16", "u16"}) {
    SCOPED_TRACE(t);
    const bool sgn = t[0] == 'i';
    const int w = std::string(t) == "i8" || std::string(t) == "u8" ? 8 : 16;
    const int64_t lo = sgn ? -(int64_t{1} << (w - 1)) : 0,
                  hi = sgn ? (int64_t{1} << (w - 1)) - 1 : (int64_t{1} << w) - 1;
    const std::vector<int64_t> as = {lo, lo + 1, -1 & hi, 0, 1, 5, hi, hi - 6};
    const std::vector<int64_t> bs = {lo == 0 ? 2 : lo, 1, 3, 7, 9, hi, sgn ? -1 : hi - 1, sgn ? -3 : 200 % hi};
    const size_t n = as.size() * bs.size(), m = binary.size() + unary.size() + 1;
    std::string body;
    int id = 100;
    auto emit = [&](const std::string& line) { body += "    " + line + "\n"; };
    for (size_t j = 0; j < binary.size() + unary.size() + 1; ++j) {
      std::string v;
      if (j < binary.size()) {
        emit(fmt::format("<{}> ${} = {} $6 $8", t, id, binary[j]));
      } else if (j < binary.size() + unary.size()) {
        emit(fmt::format("<{}> ${} = {} $6", t, id, unary[j - binary.size()]));
      } else {  // a float scaled far past the range: saturates
        emit(fmt::format("<f32> ${} = cast_value<f32> $6", id + 1));
        emit(fmt::format("<f32> ${} = const 1000.5", id + 2));
        emit(fmt::format("<f32> ${} = mul ${} ${}", id + 3, id + 1, id + 2));
        emit(fmt::format("<{}> ${} = cast_value<{}> ${}", t, id, t, id + 3));
      }
      emit(fmt::format("<i32> ${} = const {}", id + 4, j));
      emit(fmt::format("<i32> ${} = add $9 ${}", id + 5, id + 4));
      emit(fmt::format("<*{}> ${} = global ptr [o], index [${}] activate=true", t, id + 6, id + 5));
      emit(fmt::format("${} : global store [${} <- ${}]", id + 7, id + 6, id));
      id += 8;
    }
    const std::string text = fmt::format(R"(field a : {0}[{1}]
field b : {0}[{1}]
field o : {0}[{2}]
kernel "narrow" {{
  <i32> $0 = const 0
  <i32> $1 = const {1}
  <i32> $2 = const {3}
  $3 : for in range($0, $1) block_dim=adaptive {{
    <i32> $4 = loop $3 index 0
    <*{0}> $5 = global ptr [a], index [$4] activate=true
    <{0}> $6 = global load $5
    <*{0}> $7 = global ptr [b], index [$4] activate=true
    <{0}> $8 = global load $7
    <i32> $9 = mul $4 $2
{4}  }}
}}
)",
                                         t, n, n * m, m, body);
    auto k = ir::parse_kernel(text, "narrow.chi");
    nlohmann::json a = nlohmann::json::array(), b = nlohmann::json::array();
    for (int64_t x : as)
      for (int64_t y : bs) {
        a.push_back(x);
        b.push_back(y);
      }
    nlohmann::json in = {{"fields", {{"a", {{"data", a}}}, {"b", {{"data", b}}}}}};
    State want = make_state(*k, in), got = make_state(*k, in);
    run_kernel(*k, want);
    run_kernel(*device(), *k, got, {}, {});
    EXPECT_EQ(expect_same(want, got, t), 2 * n + n * m);  // a, b and every result
  }
}

// f16 lives in f32 words, each result rounded to half in f32 arithmetic (round_half in
// codegen/spirv/task_emitter.h): + - * / sqrt min max and f32 -> f16 conversions give the
// interpreter's bits, through ties, subnormal halves, overflow and signed zeros (a NaN's sign is
// not compared: NVIDIA's sqrt(-7) is +NaN, x86's -NaN).
TEST(VulkanRuntime, HalfRoundingMatchesTheInterpreterBitForBit) {
  REQUIRE_VULKAN();
  const std::vector<double> cs = {2049,    2051,    65519,     65520,  -65520,  1e-7,    3e-8,
                                  2.98e-8, 5.96e-8, 6.1035e-5, 6.1e-5, -0.0,    0.1,     1.0 / 3,
                                  1e30,    -1e-30,  1000.49,   0.5,    -2.5e-5, 33.3333, -7.0};
  const std::vector<std::string> binary = {"add", "sub", "mul", "div", "min", "max"};
  const size_t n = cs.size() + 2, m = binary.size() + 2;  // and NaN, -inf
  std::string body;
  int id = 100;
  auto emit = [&](const std::string& line) { body += "    " + line + "\n"; };
  for (size_t j = 0; j < m; ++j) {
    if (j < binary.size())
      emit(fmt::format("<f16> ${} = {} $6 $8", id, binary[j]));
    else if (j == binary.size())
      emit(fmt::format("<f16> ${} = sqrt $6", id));
    else
      emit(fmt::format("<f16> ${} = cast_value<f16> $8", id));  // already rounded at the load: exact
    emit(fmt::format("<i32> ${} = const {}", id + 1, j));
    emit(fmt::format("<i32> ${} = add $9 ${}", id + 2, id + 1));
    emit(fmt::format("<*f16> ${} = global ptr [o], index [${}] activate=true", id + 3, id + 2));
    emit(fmt::format("${} : global store [${} <- ${}]", id + 4, id + 3, id));
    id += 5;
  }
  const std::string text = fmt::format(R"(field c : f32[{0}]
field h : f16[{0}]
field o : f16[{1}]
kernel "half" {{
  <i32> $0 = const 0
  <i32> $1 = const {0}
  <i32> $2 = const {2}
  $3 : for in range($0, $1) block_dim=adaptive {{
    <i32> $4 = loop $3 index 0
    <*f32> $5 = global ptr [c], index [$4] activate=true
    <f32> $7 = global load $5
    <f16> $6 = cast_value<f16> $7
    <*f16> $10 = global ptr [h], index [$4] activate=true
    $11 : global store [$10 <- $6]
    <i32> $12 = const 1
    <i32> $13 = add $4 $12
    <i32> $14 = mod $13 $1
    <*f32> $15 = global ptr [c], index [$14] activate=true
    <f32> $16 = global load $15
    <f16> $8 = cast_value<f16> $16
    <i32> $9 = mul $4 $2
{3}  }}
}}
)",
                                       n, n * m, m, body);
  auto k = ir::parse_kernel(text, "half.chi");
  nlohmann::json c = nlohmann::json::array();
  for (double v : cs) c.push_back(v);
  c.push_back("nan");
  c.push_back("-inf");
  State want = make_state(*k, {{"fields", {{"c", {{"data", c}}}}}}), got = want;
  run_kernel(*k, want);
  run_kernel(*device(), *k, got, {}, {});
  size_t checked = 0;
  for (const char* f : {"h", "o"})
    for (size_t i = 0; i < want.fields.at(f).data.size(); ++i, ++checked)
      EXPECT_TRUE(got.fields.at(f).data[i].identical(want.fields.at(f).data[i]) ||
                  (std::isnan(got.fields.at(f).data[i].as_f64()) && std::isnan(want.fields.at(f).data[i].as_f64())))
          << f << "[" << i << "]: Vulkan " << got.fields.at(f).data[i].to_string() << ", interpreter "
          << want.fields.at(f).data[i].to_string();
  EXPECT_EQ(checked, n + n * m);
}

}  // namespace
}  // namespace pb::runtime::vulkan
