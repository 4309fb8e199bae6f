// scalarize against the interpreter: a tensor kernel computes the same fields and ndarrays, bit for
// bit, before and after (the interpreter runs tensors natively), the output has no tensor type
// and verifies; what scalarize cannot rewrite is a located error that leaves the kernel alone.
#include "passes/scalarize.h"

#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "ir/type_uses.h"
#include "pass_test_util.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "tests/every_kind_samples.h"

using namespace pb;

namespace {

const char* const kRunnable = R"chi(field v : [Tensor (2, 2) f32][3] grad v_grad
field out : f32[3, 2]
arg 0 : ndarray<[Tensor (3) f32], 1>
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <*[Tensor (3) f32]> $2 = argload[0]
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    <*[Tensor (2, 2) f32]> $5 = global ptr [v], index [$4] activate=true
    <[Tensor (2, 2) f32]> $6 = global load $5
    <[Tensor (2, 2) f32]> $7 = sin $6
    <[Tensor (2, 2) f32]> $8 = mul $6 $7
    <f32> $9 = get_element($8, 1, 0)
    <f32> $10 = get_element($6, 3)
    <[Tensor (2) f32]> $11 = [$9, $10]
    <*[Tensor (2) f32]> $12 = alloca
    <[Tensor (2) f32]> $13 : local store [$12 <- $11]
    <i32> $14 = const 1
    <*f32> $15 = shift ptr [$12 + $14]
    <f32> $16 = local load [$15]
    <[Tensor (2) f32]> $17 = local load [$12]
    <[Tensor (2) u1]> $18 = cmp_lt $17 $11
    <[Tensor (2) f32]> $19 = select($18, $17, $11)
    <*f32> $20 = global ptr [out], index [$4, $0] activate=true
    $21 : global store [$20 <- $16]
    <*f32> $22 = shift ptr [$5 + $4]
    <f32> $23 = atomic add($22, $16)
    <*[Tensor (3) f32]> $24 = external_ptr $2, [$4] layout=AOS is_grad=false
    <[Tensor (3) f32]> $25 = [$16, $9, $10]
    <[Tensor (3) f32]> $26 = atomic add($24, $25)
    <*f32> $27 = global ptr [out], index [$4, $14] activate=true
    <f32> $28 = get_element($26, 2)
    <f32> $29 = get_element($19, 0)
    <f32> $30 = add $28 $29
    $31 : global store [$27 <- $30]
  }
}
)chi";

nlohmann::json runnable_inputs() {
  return nlohmann::json::parse(R"({"fields": {"v": {"data": [0.5, 1.0, -0.25, 2.0, 1.5, 0.75, -1.0, 0.3, 2.5, 0.1,
      0.2, 0.3]}}, "args": [{"data": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]}]})");
}

nlohmann::json run(const ir::Kernel& k, const nlohmann::json& inputs) {
  runtime::State st = runtime::make_state(k, inputs);
  runtime::run_kernel(k, st);
  return runtime::state_to_json(k, st);
}

bool has_tensor(const ir::Kernel& k) {
  return ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); }).has_value();
}

}  // namespace

TEST(Scalarize, RunsTheSameAsTheTensorKernelBitForBit) {
  auto k = test::parse(kRunnable);
  ASSERT_EQ(test::verify_text(*k), "");
  nlohmann::json before = run(*k, runnable_inputs());
  passes::ScalarizeResult r = passes::scalarize(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_FALSE(has_tensor(*k)) << test::print(*k);
  EXPECT_EQ(r.fields, 3);  // v, its gradient field v_grad, and the ndarray
  EXPECT_GT(r.tensor_statements, 10);
  EXPECT_EQ(run(*k, runnable_inputs()).dump(), before.dump()) << test::print(*k);
  // The data moved: v's cells are now its last two dimensions.
  EXPECT_NE(test::print(*k).find("field v : f32[3, 2, 2] grad v_grad"), std::string::npos) << test::print(*k);
  EXPECT_NE(test::print(*k).find("arg 0 : ndarray<f32, 2>"), std::string::npos);
}

TEST(Scalarize, EveryTensorKindOfTheSampleBecomesScalars) {
  auto k = test::parse(test::kTensor);
  passes::scalarize(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_FALSE(has_tensor(*k)) << test::print(*k);
  // The sample's tensors of pointers do not run natively; scalarized, the kernel runs.
  auto inputs = nlohmann::json::parse(R"({"args": [{"shape": [4, 3]}]})");
  EXPECT_NO_THROW(run(*k, inputs)) << test::print(*k);
}

TEST(Scalarize, AVariableOffsetIntoAFieldCellComputesTheElementIndices) {
  auto k = test::parse(R"(field v : [Tensor (2, 3) i32][2]
field out : i32[2, 6]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  <i32> $2 = const 6
  $3 : for in range($0, $1) block_dim=adaptive {
    <i32> $4 = loop $3 index 0
    $5 : for in range($0, $2) block_dim=adaptive {
      <i32> $6 = loop $5 index 0
      <*[Tensor (2, 3) i32]> $7 = global ptr [v], index [$4] activate=true
      <*i32> $8 = shift ptr [$7 + $6]
      <i32> $9 = global load $8
      <*i32> $10 = global ptr [out], index [$4, $6] activate=true
      $11 : global store [$10 <- $9]
    }
  }
}
)");
  auto inputs = nlohmann::json::parse(R"({"fields": {"v": {"data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}}})");
  nlohmann::json before = run(*k, inputs);
  EXPECT_EQ(before["fields"]["out"]["data"], before["fields"]["v"]["data"]);
  passes::scalarize(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_EQ(run(*k, inputs).dump(), before.dump()) << test::print(*k);
}

TEST(Scalarize, RefusesAVariableOffsetIntoALocalTensorAndLeavesTheKernelAlone) {
  const char* text = R"(kernel {
  <i32> $0 = const 1
  <*[Tensor (2) f32]> $1 = alloca
  <*f32> $2 = shift ptr [$1 + $0]
  <i32> $3 = add $0 $0
  <*f32> $4 = shift ptr [$1 + $3]
}
)";
  auto k = test::parse(text);
  try {
    passes::scalarize(*k);
    FAIL() << "scalarize accepted a variable offset into a local tensor";
  } catch (const UserError& e) {
    EXPECT_NE(e.diagnostic().message.find("<*f32> $4 = shift ptr [$1 + $3]"), std::string::npos)
        << e.diagnostic().message;
    EXPECT_NE(e.diagnostic().message.find("variable offset into a local tensor"), std::string::npos);
  }
  EXPECT_EQ(test::print(*k), text);
}

TEST(Scalarize, OtherPassesRefuseTensorKernelsAndNameScalarize) {
  auto k = test::parse(kRunnable);
  auto refused = passes::run_pipeline(*k, passes::parse_pipeline("simplify"));
  ASSERT_EQ(refused.records.size(), 1u);
  EXPECT_NE(refused.records[0].failure.find("simplify runs on scalar kernels"), std::string::npos)
      << refused.records[0].failure;
  EXPECT_NE(refused.records[0].failure.find("scalarize"), std::string::npos);
  auto ok = passes::run_pipeline(*k, passes::parse_pipeline("scalarize,simplify,dce"));
  for (const auto& rec : ok.records) EXPECT_EQ(rec.failure, "") << rec.pass;
  EXPECT_FALSE(has_tensor(*k));
}

TEST(Scalarize, TheRunTimeGlobalAccessCheckTakesTheScalarizedKernel) {
  // kRunnable reads v[i] as a tensor and then adds into one of its elements through a shift ptr.
  auto k = test::parse(kRunnable);
  runtime::RunOptions check;
  check.check_global_access = true;
  runtime::State native = runtime::make_state(*k, runnable_inputs());
  try {
    runtime::run_kernel(*k, native, check);
    FAIL() << "the check ran a tensor kernel, whose tensor accesses it does not track";
  } catch (const UserError& e) {
    EXPECT_NE(e.diagnostic().message.find("uses a tensor type"), std::string::npos) << e.diagnostic().message;
    EXPECT_NE(e.diagnostic().remedy.find("scalarize"), std::string::npos) << e.diagnostic().remedy;
  }
  passes::scalarize(*k);
  runtime::State scalar = runtime::make_state(*k, runnable_inputs());
  try {
    runtime::run_kernel(*k, scalar, check);
    FAIL() << "no violation found in\n" << test::print(*k);
  } catch (const UserError& e) {
    EXPECT_NE(e.diagnostic().message.find("field 'v', element [0, 0, 0], is written after it was read"),
              std::string::npos)
        << e.diagnostic().message;
  }
}

TEST(Scalarize, AStructForOverATensorFieldKeepsWalkingItsCells) {
  // Walking v : f32[4, 3] would run each cell's body three times (y three times too big).
  auto k = test::parse(R"(field v : [Tensor (3) f32][4] grad v_grad
field y : f32[4] grad y_grad
kernel {
  $1 : struct for in v block_dim=adaptive {
    <i32> $2 = loop $1 index 0
    <*[Tensor (3) f32]> $3 = global ptr [v], index [$2] activate=true
    <[Tensor (3) f32]> $4 = global load $3
    <f32> $5 = get_element($4, 0)
    <f32> $6 = get_element($4, 2)
    <f32> $7 = mul $5 $6
    <*f32> $8 = global ptr [y], index [$2] activate=true
    <f32> $9 = atomic add($8, $7)
  }
  $10 : struct for in v block_dim=adaptive {
    <i32> $11 = loop $10 index 0
    <*f32> $12 = global ptr [y], index [$11] activate=true
    <f32> $13 = global load $12
    <f32> $14 = atomic add($12, $13)
  }
}
)");
  auto inputs =
      nlohmann::json::parse(R"({"fields": {"v": {"data": [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]}}})");
  nlohmann::json before = run(*k, inputs);
  EXPECT_EQ(before["fields"]["y"]["data"], nlohmann::json({6.0, 48.0, 126.0, 240.0}));
  passes::scalarize(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  std::string text = test::print(*k);
  EXPECT_NE(text.find("dense v.cells : [4]"), std::string::npos) << text;
  EXPECT_NE(text.find("$1 : struct for in v.cells"), std::string::npos) << text;
  EXPECT_NE(text.find("$10 : struct for in v.cells"), std::string::npos) << text;
  EXPECT_EQ(run(*k, inputs).dump(), before.dump()) << text;
}

TEST(Scalarize, RefusesAStructForOverATensorFieldOfUnknownShape) {
  // No header: v is inferred from its pointer's hint, its shape comes with the inputs.
  const char* text = R"(kernel {
  $1 : struct for in v block_dim=adaptive {
    <i32> $2 = loop $1 index 0
    <*[Tensor (2) f32]> $3 = global ptr [v], index [$2] activate=true
    <[Tensor (2) f32]> $4 = global load $3
    $5 : global store [$3 <- $4]
  }
}
)";
  auto k = test::parse(text);
  try {
    passes::scalarize(*k);
    FAIL() << "scalarize accepted a struct for over the cells of a field of unknown shape";
  } catch (const UserError& e) {
    EXPECT_NE(e.diagnostic().message.find("tensor field 'v', whose shape is not declared"), std::string::npos)
        << e.diagnostic().message;
    EXPECT_NE(e.diagnostic().remedy.find("field v : [Tensor (2) f32][N]"), std::string::npos) << e.diagnostic().remedy;
  }
  EXPECT_EQ(test::print(*k), text);
}
