// The kinds no backend compiles, on the interpreter: loop_unique and assume_in_range give their
// input, decorate does nothing, external_tensor_shape_along_axis reads the ndarray's shape, SNode
// ops run on dense SNodes, rand draws from the seeded generator, internal calls run as a subgroup
// of one thread; what has no meaning here (mesh kernels among it) is a run error naming the
// statement.
#include <gtest/gtest.h>

#include "interp_test_util.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/every_kind_samples.h"

namespace pb::runtime::test {
namespace {

nlohmann::json ndarray_2x3() {
  return nlohmann::json::parse(R"({"args": [{"shape": [2, 3], "data": [0, 0, 0, 0, 0, 0]}]})");
}

TEST(InterpMore, SampleRunsShapesHintsDenseSNodeOpsAndRand) {
  Ran r = run_text(pb::test::kInterpreterOnly, ndarray_2x3());
  // range(2, 2 + 3): cells 2, 3, 4 are marked active (is_active is 1 on a dense SNode).
  for (size_t i = 0; i < 8; ++i) {
    bool in_range = i >= 2 && i < 5;
    EXPECT_EQ(r.at("n", i).as_i64(), in_range ? 1 : 0) << i;
    double x = r.at("x", i).as_f64();
    if (in_range) {
      EXPECT_GE(x, 0.0) << i;
      EXPECT_LT(x, 1.0) << i;
    } else {
      EXPECT_EQ(x, 0.0) << i;
    }
  }
  EXPECT_NE(r.at("x", 2).as_f64(), r.at("x", 3).as_f64());  // not one constant
}

TEST(InterpMore, RandIsDeterministicForASeedAndDiffersAcrossSeeds) {
  RunOptions a, b;
  a.seed = 1;
  b.seed = 2;
  Ran first = run_text(pb::test::kInterpreterOnly, ndarray_2x3(), a);
  Ran again = run_text(pb::test::kInterpreterOnly, ndarray_2x3(), a);
  Ran other = run_text(pb::test::kInterpreterOnly, ndarray_2x3(), b);
  EXPECT_EQ(first.at("x", 2).as_f64(), again.at("x", 2).as_f64());
  EXPECT_NE(first.at("x", 2).as_f64(), other.at("x", 2).as_f64());
}

constexpr const char* kHints = R"(field y : i32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $4 = loop_unique($3)
    decorate $4 : Loop-unique 1
    <i32> $5 = const 10
    <i32> $6 = mul $4 $5
    <i32> $7 = assume_in_range($6-10 <= $6 < $6+1)
    <*i32> $8 = global ptr [y], index [$4] activate=true
    $9 : global store [$8 <- $7]
  }
}
)";

TEST(InterpMore, LoopUniqueAndRangeAssumptionGiveTheirInput) {
  Ran r = run_text(kHints);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.at("y", i).as_i64(), static_cast<int64_t>(i) * 10) << i;
}

TEST(InterpMore, ABrokenRangeAssumptionIsARunErrorNamingTheStatement) {
  std::string text = kHints;
  text.replace(text.find("$6-10 <= $6 < $6+1"), 18, "$5-10 <= $6 < $5+1");
  std::string e = run_error(text);
  EXPECT_CONTAINS(e, "the assumption does not hold: 20 is outside [0, 11)");
  EXPECT_CONTAINS(e, "`<i32> $7 = assume_in_range($5-10 <= $6 < $5+1)`");
  EXPECT_CONTAINS(e, "in kernel");
}

TEST(InterpMore, ExternalShapeOfAMissingAxisOrAScalarArgumentIsARunError) {
  constexpr const char* kShape = R"(arg 0 : ndarray<i32, 2>
field s : i32[]
kernel {
  <i32> $0 = external_tensor_shape_along_axis 2, arg_id [0]
  <*i32> $1 = global ptr [s], index [] activate=true
  $2 : global store [$1 <- $0]
}
)";
  EXPECT_CONTAINS(run_error(kShape, ndarray_2x3()), "ndarray argument 0 has 2 dimension(s), no axis 2");
  std::string axis1 = kShape;
  axis1.replace(axis1.find("axis 2"), 6, "axis 1");
  Ran r = run_text(axis1, ndarray_2x3());
  EXPECT_EQ(r.at("s").as_i64(), 3);
}

TEST(InterpMore, SparseSNodeOpsAndOpsWithoutADenseMeaningAreRunErrors) {
  constexpr const char* kSparse = R"(kernel "k" {
  <u1> $0 = is_active [S2pointer] 
}
)";
  std::string e = run_error(kSparse);
  EXPECT_CONTAINS(e, "uses the sparse SNode 'S2pointer', which the header does not declare");
  constexpr const char* kLength = R"(kernel "k" {
  <i32> $0 = length [S1dense] 
}
)";
  e = run_error(kLength);
  EXPECT_CONTAINS(e, "SNode op 'length' has no meaning on the dense SNode 'S1dense'");
  EXPECT_CONTAINS(e, "kernel \"k\"");
}

TEST(InterpMore, TrailingSlashCommentsAreSkipped) {
  std::string text = kHints;
  text.replace(text.find("<i32> $5 = const 10"), 19, "<i32> $5 = const 10  // ten");
  text = "// a comment line\n" + text;
  Ran r = run_text(text);
  EXPECT_EQ(r.at("y", 3).as_i64(), 30);
  // After the free-form tail of `get root` too (it stops at the comment).
  auto k = ir::parse_kernel("kernel {\n  <*gen> $0 = get root nullptr  // the root\n}\n");
  EXPECT_EQ(ir::print_kernel(*k), "kernel {\n  <*gen> $0 = get root nullptr\n}\n");
}

constexpr const char* kIntrinsics = R"(field y : i32[4]
field b : i32[4]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $4 = internal call globalInvocationId()
    <i32> $5 = internal call localInvocationId()
    <i32> $6 = internal call subgroupShuffle($4, $5)
    <i32> $7 = internal call subgroupSize()
    <i32> $8 = add $6 $7
    <*i32> $9 = global ptr [y], index [$3] activate=true
    $10 : global store [$9 <- $8]
    <i32> $11 = internal call subgroupBallotU32($3)
    <i32> $12 = internal call workgroupBarrier()
    <i32> $13 = add $11 $12
    <*i32> $14 = global ptr [b], index [$3] activate=true
    $15 : global store [$14 <- $13]
  }
}
)";

// A subgroup and a block of one thread: the global id is the iteration, the local id 0, a shuffle
// from lane 0 the value, the size 1, a ballot the predicate's truth, a barrier nothing.
TEST(InterpMore, InternalCallsRunAsAOneThreadSubgroup) {
  Ran r = run_text(kIntrinsics);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.at("y", i).as_i64(), static_cast<int64_t>(i) + 1) << i;
    EXPECT_EQ(r.at("b", i).as_i64(), i == 0 ? 0 : 1) << i;
  }
}

TEST(InterpMore, InternalCallsWithoutAMeaningHereAreRunErrors) {
  std::string other_lane = kIntrinsics;
  other_lane.replace(other_lane.find("subgroupShuffle($4, $5)"), 23, "subgroupShuffle($4, $3)");
  std::string e = run_error(other_lane);
  EXPECT_CONTAINS(e, "subgroupShuffle reads lane or offset 1 of a one-thread subgroup");
  EXPECT_CONTAINS(e, "`<i32> $6 = internal call subgroupShuffle($4, $3)`");
  std::string unknown = kIntrinsics;
  unknown.replace(unknown.find("subgroupSize()"), 14, "test_stack()");
  EXPECT_CONTAINS(run_error(unknown), "internal function 'test_stack' has no meaning on the interpreter");
}

TEST(InterpMore, ReadOnlyKindsAreRunErrorsNamingTheStatement) {
  std::string e = run_error(pb::test::kReadOnly);
  EXPECT_CONTAINS(e, "block-local storage (block corner index) is not run yet");
  EXPECT_CONTAINS(e, "`<i32> $2 = loop $0 block corner index 0` in kernel \"readonly\"");
  constexpr const char* kCall = R"(kernel {
  <*i32> $0 = alloca
  <*i32> $1 = ref($0)
  <i32> $2 = call "f", args = {$1}
}
)";
  EXPECT_CONTAINS(run_error(kCall), "calls of real functions (\"f\") are not run yet");
  constexpr const char* kBits = R"(field q : i32[]
kernel {
  <*i32> $0 = global ptr [q], index [] activate=true
  <i32> $1 = const 3
  $2 : bit_struct_store $0, ch_ids=[0], values=[$1]
}
)";
  EXPECT_CONTAINS(run_error(kBits), "bit struct (quantized) stores are not run yet");
}

// No mesh model: a mesh kernel is refused before it runs, at its mesh for or mesh_for task.
TEST(InterpMore, MeshKernelsAreRunErrorsNamingTheMeshLoop) {
  std::string e = run_error(pb::test::kMesh, nlohmann::json::parse(R"({"args": [{"shape": [2], "data": [1, 2]}]})"));
  EXPECT_CONTAINS(e,
                  "`$1 : mesh for (verts -> edges) none{` is a mesh statement: passbench reads, prints and "
                  "verifies mesh kernels but does not run them");
  EXPECT_CONTAINS(run_error(pb::test::kMeshOffloaded),
                  "`$0 = offloaded mesh_for(verts -> Unknown) num_patches=8 grid_dim=0 block_dim=128 bls=none` is a "
                  "mesh statement");
}

TEST(InterpMore, ExternalTensorBasePtrIsARunError) {
  constexpr const char* kBase = R"(arg 0 : ndarray<f32, 1>
kernel "base" {
  <*f32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=false)
}
)";
  std::string e = run_error(kBase, nlohmann::json::parse(R"({"args": [{"shape": [2], "data": [1, 2]}]})"));
  EXPECT_CONTAINS(e, "the base address of an ndarray (external_tensor_base_ptr) has no meaning on the interpreter");
  EXPECT_CONTAINS(e, "`<*f32> $0 = external_tensor_base_ptr (arg_id=[0], is_grad=false)` in kernel \"base\"");
}

}  // namespace
}  // namespace pb::runtime::test
