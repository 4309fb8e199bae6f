// The dynamic global-access check on the CPU backend: the compiled kernel reports its accesses,
// every task runs in the interpreter's order, and the first violation is the interpreter's, word
// for word; an atomic the CPU would fold into a per-chunk sum is still checked; a kernel that
// keeps the rule runs to the interpreter's values.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "runtime/cpu/cpu.h"
#include "runtime/interp/interpreter.h"

namespace pb::runtime::cpu {
namespace {

// The message of the run's UserError, or "" when it ran through.
template <class Run>
std::string error_of(Run run) {
  try {
    run();
  } catch (const UserError& e) {
    return e.diagnostic().message;
  }
  return "";
}

struct Outcome {
  std::string interp, cpu;
  State interp_state, cpu_state;
};

Outcome run_both(const std::string& text, const nlohmann::json& inputs) {
  auto k = ir::parse_kernel(text);
  RunOptions o;
  o.check_global_access = true;
  Outcome out{"", "", make_state(*k, inputs), make_state(*k, inputs)};
  out.interp = error_of([&] { runtime::run_kernel(*k, out.interp_state, o); });
  out.cpu = error_of([&] { cpu::run_kernel(*k, out.cpu_state, o); });
  return out;
}

// The rule fixture whose later top-level loop adds to x[3 - j], which the first loop read in
// iteration 3 - j.
std::string later_loop_kernel() {
  std::ifstream in(std::string(PASSBENCH_SOURCE_DIR) +
                   "/fixtures/global_access/two_loops_read_then_write_violation.chi");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty());
  return text.str();
}

TEST(CpuAccessCheck, ReportsTheInterpretersFirstViolation) {
  Outcome r = run_both(later_loop_kernel(), nlohmann::json::object());
  EXPECT_NE(r.interp.find("global data access rule: field 'x', element [3],"), std::string::npos) << r.interp;
  EXPECT_NE(r.interp.find("in iteration 3 of the top-level loop\n  write: `<f32> $14 = atomic add($13, $2)` in "
                          "iteration 0"),
            std::string::npos)
      << r.interp;
  EXPECT_EQ(r.cpu, r.interp);
}

// A 0-d accumulator whose atomics the CPU folds into one add per chunk when unchecked: s is read
// in the first loop, so the second loop's first atomic add breaks the rule.
TEST(CpuAccessCheck, ChecksAtomicsItWouldOtherwiseFold) {
  const char* text = R"(field s : f32[] grad s_grad
field x : f32[16] grad x_grad
field y : f32[16]
kernel "acc" {
  <i32> $0 = const 0
  <i32> $1 = const 16
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [s], index []
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [$3]
    $7 : global store [$6 <- $5]
  }
  $8 : for in range($0, $1) block_dim=adaptive {
    <i32> $9 = loop $8 index 0
    <*f32> $10 = global ptr [x], index [$9]
    <f32> $11 = global load $10
    <*f32> $12 = global ptr [s], index []
    <f32> $13 = atomic add($12, $11)
  }
}
)";
  Outcome r = run_both(text, nlohmann::json::object());
  EXPECT_NE(r.interp.find("field 's' is written after it was read"), std::string::npos) << r.interp;
  EXPECT_EQ(r.cpu, r.interp);
}

// Reading x and writing y, and an ndarray read then written at another element only in a serial
// task: fine on both, with the interpreter's values.
TEST(CpuAccessCheck, AKernelThatKeepsTheRuleRunsToTheSameValues) {
  const char* text = R"(field x : f32[8] grad x_grad
field y : f32[8] grad y_grad
kernel "fine" {
  <i32> $0 = const 0
  <i32> $1 = const 8
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3]
    <f32> $5 = global load $4
    <f32> $6 = mul $5 $5
    <*f32> $7 = global ptr [y], index [$3]
    $8 : global store [$7 <- $6]
  }
}
)";
  nlohmann::json inputs = {{"fields", {{"x", {{"data", {1, 2, 3, 4, 5, 6, 7, 8}}}}}}};
  Outcome r = run_both(text, inputs);
  EXPECT_EQ(r.interp, "");
  EXPECT_EQ(r.cpu, "");
  ASSERT_EQ(r.cpu_state.fields.at("y").data.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(r.cpu_state.fields.at("y").data[i].as_f64(), r.interp_state.fields.at("y").data[i].as_f64()) << i;
  EXPECT_EQ(r.cpu_state.fields.at("y").data[7].as_f64(), 64.0);
}

// The element of an ndarray argument is named as the interpreter names it.
TEST(CpuAccessCheck, NamesNdarrayElements) {
  const char* text = R"(arg 0 : ndarray<f32, 2>
kernel "nd" {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <i32> $2 = const 1
  <*f32> $3 = argload[0]
  $4 : for in range($0, $1) block_dim=adaptive {
    <i32> $5 = loop $4 index 0
    <*f32> $6 = external_ptr $3, [$5, $2] layout=AOS is_grad=false
    <f32> $7 = global load $6
    <f32> $8 = mul $7 $7
    $9 : global store [$6 <- $8]
  }
}
)";
  nlohmann::json inputs = {{"args", {{{"shape", {3, 2}}, {"data", {1, 2, 3, 4, 5, 6}}}}}};
  Outcome r = run_both(text, inputs);
  EXPECT_NE(r.interp.find("ndarray argument 0, element [0, 1],"), std::string::npos) << r.interp;
  EXPECT_EQ(r.cpu, r.interp);
}

}  // namespace
}  // namespace pb::runtime::cpu
