// Blocks emitted in parts (codegen/llvm/emit_part.cpp) give the interpreter's values: a reverse
// kernel of blocks with adstacks at the default part size and at parts of a few statements; a
// `continue` and a while control that leave their part; thread-local reductions through tls
// prologue and epilogue; a per-chunk reduction into a 0-d field; the stacks' deepest depths. Each checks that the
// module has part functions, so a test that split nothing fails.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "ir/parser.h"
#include "offloaded_kernels.h"
#include "workbench/workspace/compare.h"
#include "workbench/workspace/execute.h"
#include "workbench/workspace/llvm_compile.h"

namespace pb::workbench {
namespace {

// K blocks in one loop iteration: a global load, a stack-carried local updated by sin, mul and
// add in a loop of 4, an atomic add into y (about 28 statements a block after reverse_ad).
std::string block_kernel(int blocks) {
  std::string s = fmt::format("field x : f32[{}] grad x_grad\nfield y : f32[] grad y_grad\n", blocks);
  s += "kernel {\n  <i32> $0 = const 0\n  <i32> $1 = const 4\n  <f32> $2 = const 0.5\n  <i32> $3 = const 1\n";
  s += "  $4 : for in range($0, $3) block_dim=adaptive {\n";
  for (int k = 0; k < blocks; ++k) {
    int i = 10 + 20 * k;
    s += fmt::format(R"(    <i32> ${0} = const {1}
    <*f32> ${2} = global ptr [x], index [${0}] activate=true
    <f32> ${3} = global load ${2}
    <*f32> ${4} = alloca
    <f32> ${5} : local store [${4} <- ${3}]
    ${6} : for in range($0, $1) block_dim=adaptive {{
      <f32> ${7} = local load [${4}]
      <f32> ${8} = sin ${7}
      <f32> ${9} = mul ${8} $2
      <f32> ${10} = add ${9} ${7}
      <f32> ${11} : local store [${4} <- ${10}]
    }}
    <f32> ${12} = local load [${4}]
    <*f32> ${13} = global ptr [y], index [] activate=true
    <f32> ${14} = atomic add(${13}, ${12})
)",
                     i, k, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9, i + 10, i + 11, i + 12,
                     i + 13);
  }
  return s + "  }\n}\n";
}

nlohmann::json block_inputs(int blocks) {
  std::vector<double> x(static_cast<size_t>(blocks));
  for (int k = 0; k < blocks; ++k) x[static_cast<size_t>(k)] = 0.1 + 0.05 * k;
  return {{"fields", {{"x", {{"data", x}}}}}};
}

// Odd iterations only (a `continue`), each stepping a local by 2 until 8 (a while control).
constexpr const char* kControl = R"(field y : i32[8]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 8
  <i32> $2 = const 2
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <i32> $5 = mod $4 $2
    <u1> $6 = cmp_eq $5 $0
    $7 : if $6 {
      $8 continue
    }
    <*i32> $9 = global ptr [y], index [$4] activate=true
    $10 : global store [$9 <- $4]
    <*i32> $11 = alloca
    <i32> $12 : local store [$11 <- $4]
    $13 : while true {
      <i32> $14 = local load [$11]
      <u1> $15 = cmp_lt $14 $1
      $16 : while control nullptr, $15
      <i32> $17 = add $14 $2
      <i32> $18 : local store [$11 <- $17]
      <i32> $19 = atomic add($9, $2)
    }
  }
}
)";

// A per-chunk sum into a 0-d field (the cpu keeps it in an accumulator the parts share).
constexpr const char* kReduction = R"(field x : f32[1000]
field sum : f32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 1000
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = mul $5 $5
    <*f32> $7 = global ptr [sum], index [] activate=true
    <f32> $8 = atomic add($7, $6)
  }
}
)";

nlohmann::json thread_local_inputs() {
  std::vector<double> x(1000);
  for (int i = 0; i < 1000; ++i) x[static_cast<size_t>(i)] = static_cast<double>((i * 37) % 101) / 8.0;
  return {{"fields", {{"x", {{"data", x}}}}}};
}

// The part functions of the module as emitted (every one is `define internal i32 @task..._partN`).
size_t part_functions(const ir::Kernel& k, const std::string& pipeline, int64_t part_statements,
                      const nlohmann::json& inputs) {
  std::string text = compile_llvm(k, pipeline, 0, part_statements, inputs).ir_before;
  size_t n = 0;
  for (size_t at = text.find("define internal i32 @"); at != std::string::npos;
       at = text.find("define internal i32 @", at + 1))
    ++n;
  return n;
}

// Runs the request on the interpreter and on the cpu with parts of `part_statements` (-1: the
// default) and expects every value to match.
void expect_cpu_matches(const ir::Kernel& k, const RunRequest& req, int64_t part_statements) {
  PreparedRequest p = prepare_request(k, req);
  BackendOptions o;
  o.cpu_part_statements = part_statements;
  Comparison c = compare_backends(p, {Backend::interp, Backend::cpu}, o, {});
  EXPECT_TRUE(c.passed()) << "parts of " << part_statements << ":\n" << format_backend_table(c.rows);
  EXPECT_GT(c.values_compared, 0U);
}

// The deepest each stack got (counted inside the parts) is the interpreter's.
void expect_same_stack_depths(const ir::Kernel& k, RunRequest req, int64_t part_statements) {
  req.stack_usage = true;
  PreparedRequest p = prepare_request(k, req);
  BackendOptions o;
  o.cpu_part_statements = part_statements;
  std::vector<StackUse> want = stack_uses(execute_on(Backend::interp, p, o));
  std::vector<StackUse> got = stack_uses(execute_on(Backend::cpu, p, o));
  ASSERT_FALSE(want.empty());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].stack_id, want[i].stack_id);
    EXPECT_EQ(got[i].deepest, want[i].deepest) << "stack " << want[i].stack_id << ", parts of " << part_statements;
  }
}

RunRequest reverse_request(int blocks) {
  RunRequest req;
  req.mode = runtime::Mode::reverse;
  req.inputs = block_inputs(blocks);
  req.seed_grads = {{"y", 1.0}};
  return req;
}

TEST(CpuParts, ReverseKernelAtTheDefaultSizeIsEmittedInParts) {
  auto k = ir::parse_kernel(block_kernel(60));
  EXPECT_GE(part_functions(*k, "reverse_ad", -1, block_inputs(60)), 2U);
  expect_cpu_matches(*k, reverse_request(60), -1);
  expect_same_stack_depths(*k, reverse_request(60), -1);
}

TEST(CpuParts, ReverseKernelInPartsOfAFewStatements) {
  auto k = ir::parse_kernel(block_kernel(6));
  for (int64_t n : {1, 3, 16}) {
    EXPECT_GE(part_functions(*k, "reverse_ad", n, block_inputs(6)), 2U) << n;
    expect_cpu_matches(*k, reverse_request(6), n);
    expect_same_stack_depths(*k, reverse_request(6), n);
  }
}

TEST(CpuParts, ContinueAndWhileControlLeaveTheirPart) {
  auto k = ir::parse_kernel(kControl);
  for (int64_t n : {1, 2, 4}) {
    EXPECT_GE(part_functions(*k, "", n, nlohmann::json::object()), 2U) << n;
    expect_cpu_matches(*k, RunRequest{}, n);
  }
}

TEST(CpuParts, ThreadLocalsAndReductionsCrossParts) {
  for (const char* text : {test::kThreadLocal, kReduction}) {
    auto k = ir::parse_kernel(text);
    for (int64_t n : {1, 3}) {
      EXPECT_GE(part_functions(*k, "", n, thread_local_inputs()), 2U) << n;
      RunRequest req;
      req.inputs = thread_local_inputs();
      expect_cpu_matches(*k, req, n);
    }
  }
}

}  // namespace
}  // namespace pb::workbench
