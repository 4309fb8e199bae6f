// The offloaded stage on the interpreter: tasks (serial, range_for with constant, temporary and
// statement bounds, struct_for, listgen/gc, thread-local prologue/epilogue), global temporaries,
// the dense SNode access chain (get root, lookup, get child, linearized, offset), bit_extract,
// the linear loop index and return; each also prints back, reparses and survives JSON.
#include <gtest/gtest.h>

#include "interp_test_util.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace pb::runtime::test {
namespace {

constexpr const char* kChain = R"(kernel {
  $0 = offloaded range_for(0, 8) grid_dim=0 block_dim=128
  body {
    <i32> $1 = loop $0 index 0
    <*gen> $2 = get root nullptr
    <i32> $3 = linearized(ind {$1}, stride {8})
    <*gen> $4 = [S1dense][dense]::lookup($2, $3) activate = false
    <*f32> $5 = get child [S1dense->S2place<f32>] $4
    <f32> $6 = global load $5
    <f32> $7 = mul $6 $6
    <*f32> $8 = get child [S1dense->S3place<f32>] $4
    $9 : global store [$8 <- $7]
    <*i32> $10 = global tmp var (offset = 0 B)
    <i32> $11 = atomic add($10, $1)
  }
  $12 = offloaded
  body {
    <*i32> $13 = global tmp var (offset = 0 B)
    <i32> $14 = global load $13
    <i32> $15 = bit_extract($14) bit_range=[0, 4)
    <i32> $16 = offset $15 + 100
    $17 : return $16
    print $14, " ", $16, "\n"
  }
  $18 = offloaded range_for(0, tmp(offset=0B)) grid_dim=0 block_dim=64
  body {
    <i32> $19 = loop $18 index linear
    <*i32> $20 = global tmp var (offset = 4 B)
    <i32> $21 = atomic add($20, $19)
  }
  $22 = offloaded
  body {
    <*i32> $23 = global tmp var (offset = 4 B)
    <i32> $24 = global load $23
    print $24, "\n"
  }
}
)";

nlohmann::json chain_inputs() {
  return nlohmann::json::parse(
      R"({"fields": {"S2place<f32>": {"shape": [8], "data": [1,2,3,4,5,6,7,8]}, "S3place<f32>": {"shape": [8]}}})");
}

TEST(InterpOffloaded, AccessChainTemporariesBitExtractAndReturnRun) {
  Ran r = run_text(kChain, chain_inputs());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(r.at("S3place<f32>", i).as_f64(), double((i + 1) * (i + 1))) << i;
  // 0 + ... + 7 = 28 in the temporary; bits [0, 4) of 28 are 12; the third task runs 28 times.
  EXPECT_EQ(r.result.printed, "28 112\n378\n");
  ASSERT_EQ(r.result.returned.size(), 1u);
  EXPECT_EQ(r.result.returned[0].as_i64(), 112);
}

TEST(InterpOffloaded, PrintsBackReparsesAndSurvivesJson) {
  auto k = ir::parse_kernel(kChain);
  EXPECT_TRUE(ir::verify(*k).empty());
  std::string text = ir::print_kernel(*k);
  EXPECT_EQ(ir::print_kernel(*ir::parse_kernel(text)), text);
  EXPECT_EQ(ir::print_kernel(*ir::from_json(nlohmann::json::parse(ir::to_json(*k).dump()))), text);
  // The body of kChain prints as written (the header adds the inferred place fields only when
  // declared, which they are not).
  EXPECT_EQ(ir::print_kernel(*k, {.header = false, .annotate = {}}), kChain);
}

TEST(InterpOffloaded, LookupOutOfBoundsIsAnErrorNamingTheSNode) {
  std::string text = kChain;
  text.replace(text.find("range_for(0, 8)"), 15, "range_for(0, 9)");
  EXPECT_CONTAINS(run_error(text, chain_inputs()), "cell 8 is out of bounds for SNode 'S1dense' of 8 cell(s)");
}

TEST(InterpOffloaded, StructForTaskWalksItsFieldAndTlsBlocksRunOnce) {
  const char* text = R"(field x : f32[2, 3]
kernel {
  $0 = offloaded struct_for(x) grid_dim=0 block_dim=64 bls=none
  tls prologue {
    <*i32> $1 = global tmp var (offset = 0 B)
    <i32> $2 = const 5
    $3 : global store [$1 <- $2]
  }
  body {
    <i32> $4 = loop $0 index 0
    <i32> $5 = loop $0 index 1
    <i32> $6 = loop $0 index linear
    <*f32> $7 = global ptr [x], index [$4, $5]
    <f32> $8 = cast_value<f32> $6
    $9 : global store [$7 <- $8]
    <*i32> $10 = global tmp var (offset = 0 B)
    <i32> $11 = atomic add($10, $5)
  }
  tls_epilogue {
    <*i32> $12 = global tmp var (offset = 0 B)
    <i32> $13 = global load $12
    print $13
  }
  $14 = offloaded listgen S0root->S1dense
  $15 = offloaded garbage collect S1dense
}
)";
  Ran r = run_text(text);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(r.at("x", i).as_f64(), double(i));
  EXPECT_EQ(r.result.printed, "11");  // 5 + (0 + 1 + 2) * 2
  auto k = ir::parse_kernel(text);
  EXPECT_EQ(ir::print_kernel(*ir::parse_kernel(ir::print_kernel(*k))), ir::print_kernel(*k));
  EXPECT_EQ(ir::print_kernel(*ir::from_json(nlohmann::json::parse(ir::to_json(*k).dump()))), ir::print_kernel(*k));
}

TEST(InterpOffloaded, OlderDialectsReadAndPrintInTodaysSyntax) {
  // Taichi <= 0.6: the body follows the task line's `{`; bit_extract with a lane offset;
  // Taichi 0.7: `kernel return`.
  const char* text = R"(kernel {
  $0 = offloaded range_for(0, 4) block_dim=adaptive {
    <i32> $1 = loop $0 index 0
    <i32> $2 = bit_extract($1 + 0, 1~3)
    print $2
  }
  $3 = offloaded {
    <i32> $4 = const 7
    $5 : kernel return $4
  }
}
)";
  Ran r = run_text(text);
  EXPECT_EQ(r.result.printed, "0011");
  EXPECT_EQ(r.result.returned.at(0).as_i64(), 7);
  std::string printed = ir::print_kernel(*r.kernel);
  EXPECT_NE(printed.find("$0 = offloaded range_for(0, 4) grid_dim=0 block_dim=0\n  body {\n"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("$5 : return $4"), std::string::npos) << printed;
  EXPECT_EQ(ir::print_kernel(*ir::parse_kernel(printed)), printed);
}

TEST(InterpOffloaded, BadTaskLinesAreLocatedErrors) {
  auto error = [](const std::string& body) {
    try {
      ir::parse_kernel("kernel {\n" + body + "}\n", "t.chi");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_CONTAINS(error("  $0 = offloaded range_for(0, 4) grid_dim=0 colour=red\n  body {\n  }\n"),
                  "t.chi:2:45: error: unexpected 'colour=red'");
  EXPECT_CONTAINS(error("  $0 = offloaded range_for(0, 4) grid_dim=0 block_dim=1\n  <i32> $1 = const 0\n"),
                  "followed by its `body {` block");
  EXPECT_CONTAINS(
      error("  $0 = offloaded\n  body {\n    <*gen> $1 = get root\n    <*f32> $2 = get child [S1dense->x-y] $1\n  }\n"),
      "name 'x-y' holds '-'");
}

TEST(InterpOffloaded, BlockLocalStorageIsARunErrorNotAWrongAnswer) {
  const char* text = R"(field x : f32[4]
kernel {
  $0 = offloaded struct_for(x) grid_dim=0 block_dim=64 bls=none
  bls prologue {
  }
  body {
  }
}
)";
  EXPECT_CONTAINS(run_error(text), "block-local storage blocks, which the interpreter does not run");
}

}  // namespace
}  // namespace pb::runtime::test

namespace pb::runtime::test {
namespace {

// `while control nullptr, $c` (the reference's while without a mask): leaves when c is 0; prints
// back and survives JSON as written.
TEST(InterpWhileControl, NullptrMaskLeavesWhenTheConditionIsFalse) {
  const char* text = R"(field y : i32[]
kernel {
  <*i32> $0 = alloca
  <i32> $1 = const 10
  <i32> $2 = const 1
  $3 : while true {
    <i32> $4 = local load [$0]
    <u1> $5 = cmp_lt $4 $1
    $6 : while control nullptr, $5
    <i32> $7 = add $4 $2
    <i32> $8 : local store [$0 <- $7]
  }
  <i32> $9 = local load [$0]
  <*i32> $10 = global ptr [y], index [] activate=true
  $11 : global store [$10 <- $9]
}
)";
  Ran r = run_text(text);
  EXPECT_EQ(r.at("y").as_i64(), 10);
  EXPECT_EQ(ir::print_kernel(*r.kernel), text);
  EXPECT_EQ(ir::print_kernel(*ir::from_json(nlohmann::json::parse(ir::to_json(*r.kernel).dump()))), text);
}

// A tensor in a global temporary carries a tensor value from one task to the next (the
// half2 pass's output keeps them), element by element; a scalar read inside its bytes is refused.
TEST(InterpOffloaded, TensorGlobalTemporariesCarryTensorsBetweenTasks) {
  constexpr const char* kTensorTemp = R"(field out : f32[2]
kernel {
  $0 = offloaded
  body {
    <f32> $1 = const 1.5
    <f32> $2 = const 2.5
    <[Tensor (2) f32]> $3 = [$1, $2]
    <*[Tensor (2) f32]> $4 = global tmp var (offset = 8 B)
    $5 : global store [$4 <- $3]
    <[Tensor (2) f32]> $6 = atomic add($4, $3)
  }
  $7 = offloaded
  body {
    <*[Tensor (2) f32]> $8 = global tmp var (offset = 8 B)
    <[Tensor (2) f32]> $9 = global load $8
    <f32> $10 = get_element($9, 1)
    <f32> $11 = get_element($9, 0)
    <i32> $12 = const 0
    <i32> $13 = const 1
    <*f32> $14 = global ptr [out], index [$12] activate=true
    $15 : global store [$14 <- $11]
    <*f32> $16 = global ptr [out], index [$13] activate=true
    $17 : global store [$16 <- $10]
  }
}
)";
  Ran r = run_text(kTensorTemp);
  EXPECT_EQ(r.at("out", 0).as_f64(), 3.0);
  EXPECT_EQ(r.at("out", 1).as_f64(), 5.0);
  std::string overlap = kTensorTemp;
  overlap.replace(overlap.find("<*[Tensor (2) f32]> $8 = global tmp var (offset = 8 B)"), 54,
                  "<*f32> $8 = global tmp var (offset = 12 B)");
  overlap.replace(overlap.find("<[Tensor (2) f32]> $9 = global load $8"), 38, "<f32> $9 = global load $8");
  overlap.replace(overlap.find("<f32> $10 = get_element($9, 1)"), 30, "<f32> $10 = neg $9");
  overlap.replace(overlap.find("<f32> $11 = get_element($9, 0)"), 30, "<f32> $11 = neg $9");
  EXPECT_CONTAINS(run_error(overlap), "byte 12 of the global temporaries lies in a tensor temporary");
}

// lower_access turns `global ptr [x], index []` into a chain of 0-d lookups; an undeclared field
// reached so is 0-d, as before the pass (a fuzz finding: it had no buffer after the pass).
TEST(InterpOffloaded, AnUndeclaredFieldReachedByA0dChainIs0d) {
  constexpr const char* k0d = R"(kernel {
  $0 = offloaded
  body {
    <i32> $1 = const 7
    <*gen> $2 = get root nullptr
    <i32> $3 = linearized(ind {}, stride {})
    <*gen> $4 = [S0root][root]::lookup($2, $3) activate = false
    <*gen> $5 = get child [S0root->S1dense] $4
    <i32> $6 = linearized(ind {}, stride {})
    <*gen> $7 = [S1dense][dense]::lookup($5, $6) activate = false
    <*i32> $8 = get child [S1dense->S2place_i32] $7
    $9 : global store [$8 <- $1]
  }
}
)";
  Ran r = run_text(k0d);
  EXPECT_TRUE(r.field("S2place_i32").shape.empty());
  EXPECT_EQ(r.at("S2place_i32").as_i64(), 7);
}

}  // namespace
}  // namespace pb::runtime::test
