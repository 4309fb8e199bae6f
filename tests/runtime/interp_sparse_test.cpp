// Sparse SNodes on the interpreter (runtime/core/sparse.h): reads through inactive cells give 0
// and writes without activation are dropped; writes with activation activate every sparse cell
// above the element; nested multi-dimensional spaces number their cells row-major over the full
// shape (the access chain and global ptrs agree); and what has no meaning is a clear run error.
// fixtures/interp/sparse_*.chi cover struct fors, listgen, is_active/deactivate and append.
#include <gtest/gtest.h>

#include "interp_test_util.h"
#include "sparse_kernels.h"

namespace pb::runtime::test {
namespace {

using namespace sparse;  // NOLINT(google-build-using-namespace): the kernels under test

TEST(InterpSparse, InactiveCellsReadZeroAndWritesActivateOnlyWhenAsked) {
  Ran r = run_text(kWrites);
  // x[5] (pointer cell 2): the write without activation is dropped, the read through it gives 0.
  EXPECT_EQ(r.at("x", 5).as_f64(), 0.0);
  EXPECT_EQ(r.at("r", 0).as_f64(), 0.0);
  // x[2] (pointer cell 1): activated by the write, read back.
  EXPECT_EQ(r.at("x", 2).as_f64(), 7.0);
  EXPECT_EQ(r.at("r", 1).as_f64(), 7.0);
  EXPECT_EQ(r.state.activity.at("P"), (std::vector<int64_t>{0, 1, 0, 0}));
}

TEST(InterpSparse, NestedTwoDimensionalCellsAreRowMajorOverTheFullShape) {
  // dense [2, 2] cells of 2 x 2 bitmasked cells: element (3, 1) is dense cell (1, 0) = 2, local
  // cell (1, 1) = 3, bitmasked cell 3 * 4 + 1 = 13.
  Ran r = run_text(kChain);
  const Buffer& x = r.field("S3place<f32>");
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x.data[i].as_f64(), i == 13 ? 4.5 : 0.0) << i;
  std::vector<int64_t> active(16, 0);
  active[13] = 1;
  EXPECT_EQ(r.state.activity.at("S2bitmasked"), active);
}

TEST(InterpSparse, ActivityComesFromTheInputsAndGoesToTheOutput) {
  Ran r = run_text(kWrites, nlohmann::json::parse(R"({"active": {"P": [0, 0, 1, 0]}})"));
  EXPECT_EQ(r.at("r", 0).as_f64(), 7.0);  // x[5] lies in active cell 2 now
  nlohmann::json out = state_to_json(*r.kernel, r.state);
  EXPECT_EQ(out.at("active").at("P"), nlohmann::json::parse("[0, 1, 1, 0]"));
  EXPECT_CONTAINS(run_error(kWrites, nlohmann::json::parse(R"({"active": {"D": [1]}})")),
                  "\"active\" names 'D', which is not a declared pointer or bitmasked space");
  EXPECT_CONTAINS(run_error(kWrites, nlohmann::json::parse(R"({"active": {"P": [0, 2, 0, 0]}})")),
                  "entry 1 is 2, outside 0..1");
  EXPECT_CONTAINS(run_error(kWrites, nlohmann::json::parse(R"({"length": {"P": [1, 0, 0, 0]}})")),
                  "\"length\" names 'P', which is not a declared dynamic space");
}

TEST(InterpSparse, UndeclaredOrMisdeclaredSparseSNodesAreRunErrors) {
  constexpr const char* kUndeclared = R"(kernel "k" {
  $0 = offloaded
  body {
    <*gen> $1 = get root nullptr
    <i32> $2 = const 0
    <*gen> $3 = [S1pointer][pointer]::lookup($1, $2) activate = true
  }
}
)";
  std::string e = run_error(kUndeclared);
  EXPECT_CONTAINS(e, "uses the sparse SNode 'S1pointer', which the header does not declare");
  EXPECT_CONTAINS(e, "pointer S1pointer : [4]");  // the remedy shows the declaration
  std::string declared_dense = "dense S1pointer : [4]\n" + std::string(kUndeclared);
  EXPECT_CONTAINS(run_error(declared_dense), "looks up SNode 'S1pointer' as pointer, but the header declares it dense");
  constexpr const char* kSkipsALevel = R"(pointer P : [2]
dense D : [8] in P
field x : f32[8] in D
kernel {
  <*gen> $0 = get root nullptr
  <*gen> $1 = get child [S0root->D] $0
}
)";
  EXPECT_CONTAINS(run_error(kSkipsALevel), "enters space 'D' from 'S0root', but the header nests it in 'P'");
  std::string quant = kUndeclared;
  quant.replace(quant.find("[S1pointer][pointer]"), 20, "[S1bit_struct][bit_struct]");
  EXPECT_CONTAINS(run_error(quant),
                  "looks up the bit_struct SNode 'S1bit_struct', a quantized layout that the interpreter does not run");
  EXPECT_CONTAINS(run_error("pointer P : [1000000000000]\nkernel {\n}\n"),
                  "index space 'P' of shape [1000000000000] has more cells than the interpreter's limit");
}

TEST(InterpSparse, AppendPastTheCapacityAndOpsWithoutMeaningAreRunErrors) {
  std::string e = run_error(kAppend);
  EXPECT_CONTAINS(e, "append to dynamic SNode 'L'");
  EXPECT_CONTAINS(e, "parent cell 0 is full (2 cells)");
  EXPECT_CONTAINS(e, "kernel \"k\"");
  EXPECT_CONTAINS(run_error(kLengthOnPointer), "SNode op 'length' has no meaning on the pointer SNode 'P'");
  // A dynamic op reached through a cell of another SNode than the dynamic space's parent.
  std::string foreign = run_error(kForeignCell);
  EXPECT_CONTAINS(foreign, "cell 15 is outside SNode 'L' (2 parent cells) at `<i32> $3 = length [L] ptr = $2`");
  EXPECT_CONTAINS(foreign, "kernel \"k\"");
}

TEST(InterpSparse, SNodeOpsOnAGlobalPtrToTheCellRunAsTheirLoweredForm) {
  // Before lower_access an op takes the cell itself: is_active does not activate, activate
  // activates the cells above, append activates its parent cell's chain, length reads it.
  Ran r = run_text(kOps);
  EXPECT_EQ(r.at("r", 0).as_i64(), 0);  // B cell 3 before activate
  EXPECT_EQ(r.at("r", 1).as_i64(), 1);  // after
  EXPECT_EQ(r.at("r", 2).as_i64(), 2);  // two appends under S cell 1
  EXPECT_EQ(r.at("r", 3).as_i64(), 1);  // P cell 1 (above B cell 3) activated with it
  EXPECT_EQ(r.state.activity.at("B"), (std::vector<int64_t>{0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(r.state.activity.at("Q"), (std::vector<int64_t>{0, 1}));  // append activated Q cell 1
  EXPECT_EQ(r.state.activity.at("L"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(r.at("l", 4).as_i64(), 3);
  EXPECT_EQ(r.at("l", 5).as_i64(), 3);
  std::string out_of_bounds = kOps;
  out_of_bounds.replace(out_of_bounds.find("const 3"), 7, "const 8");
  EXPECT_CONTAINS(run_error(out_of_bounds), "index 8 is out of bounds for dimension 0 of SNode 'B' (8 cells)");
}

TEST(InterpSparse, DeactivatingACellDeactivatesTheSparseCellsBelowIt) {
  // x[1] activates P cell 0 and B cell 1; deactivating P cell 0 and activating it again leaves
  // B cell 1 inactive, as a fresh block is.
  Ran r = run_text(kFresh);
  EXPECT_EQ(r.at("r").as_i64(), 0);
  EXPECT_EQ(r.at("x", 1).as_f64(), 0.0);
  EXPECT_EQ(r.state.activity.at("P"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(r.state.activity.at("B"), std::vector<int64_t>(8, 0));
}

TEST(InterpSparse, HashSpacesBehaveAsPointerSpaces) {
  std::string hashed = kWrites;
  hashed.replace(0, std::string("pointer").size(), "hash");
  Ran r = run_text(hashed);
  EXPECT_EQ(r.at("x", 5).as_f64(), 0.0);
  EXPECT_EQ(r.at("x", 2).as_f64(), 7.0);
  EXPECT_EQ(r.state.activity.at("P"), (std::vector<int64_t>{0, 1, 0, 0}));
}

}  // namespace
}  // namespace pb::runtime::test
