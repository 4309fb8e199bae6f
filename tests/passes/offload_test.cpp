// offload against the interpreter: every fixture kernel that runs gives the same fields, ndarrays,
// printed text and return values before and after offloading (and so does the kernel its
// pipeline makes, reverse kernels included); plus the pass's statistics and errors.
#include "passes/offload.h"

#include <gtest/gtest.h>

#include "fixture_runs.h"

using namespace pb;

TEST(Offload, EveryFixtureKernelRunsTheSameOffloaded) {
  test::Tally plain, piped;
  test::compare_fixture_kernels(
      [](ir::Kernel& k) {
        if (test::has_tensor_type(k)) return test::Change::none;  // offload takes scalar kernels
        passes::OffloadResult r = passes::offload(k);
        if (r.serial + r.range_for + r.struct_for == 0) return test::Change::none;  // offloaded already, or empty
        return r.temporaries > 0 ? test::Change::notable : test::Change::some;
      },
      plain, piped);
  std::cout << "offload compared " << plain.compared << " fixture kernels (" << plain.notable
            << " carrying values between tasks; " << plain.skipped << " did not run or were offloaded already) and "
            << piped.compared << " pipeline outputs (" << piped.notable << " carrying; " << piped.skipped
            << " skipped)\n";
  // A comparison of nothing proves nothing: most of the 500-odd runnable fixtures must take part.
  EXPECT_GE(plain.compared, 300);
  EXPECT_GE(piped.compared, 100);
  EXPECT_GE(plain.notable + piped.notable, 40);
}

namespace {

const char* kShared = R"(field x : f32[8]
field total : f32[]
arg 0 : i32
kernel shared {
  <*f32> $0 = alloca
  <i32> $1 = argload[0]
  <i32> $2 = const 0
  <f64> $3 = const 2.5
  <f32> $4 = cast_value<f32> $3
  $5 : for in range($2, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = global ptr [x], index [$6] activate=true
    <f32> $8 = global load $7
    <f32> $9 = mul $8 $4
    <f32> $10 = atomic add($0, $9)
  }
  <f32> $11 = local load [$0]
  <*f32> $12 = global ptr [total], index [] activate=true
  $13 : global store [$12 <- $11]
}
)";

}  // namespace

TEST(Offload, StatisticsCountTasksTemporariesAndCopies) {
  auto k = test::parse(kShared);
  passes::OffloadResult r = passes::offload(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_EQ(r.serial, 2);
  EXPECT_EQ(r.range_for, 1);
  EXPECT_EQ(r.struct_for, 0);
  EXPECT_EQ(r.temporaries, 3);  // the end bound $1, the factor $4, the local $0
  EXPECT_EQ(r.temporary_bytes, 12);
  EXPECT_EQ(r.cloned, 0);
  auto out = test::detail::run(
      *k, nlohmann::json::parse(R"({"fields": {"x": {"data": [1, 2, 3, 4, 5, 6, 7, 8]}}, "args": [4]})"), {}, false);
  EXPECT_EQ(out.state["fields"]["total"]["data"][0], 25.0);  // 2.5 * (1 + 2 + 3 + 4)
}

TEST(Offload, AnOffloadedKernelIsLeftAsItIs) {
  auto k = test::parse(kShared);
  passes::offload(*k);
  const std::string once = test::print(*k);
  passes::OffloadResult r = passes::offload(*k);
  EXPECT_EQ(r.serial + r.range_for + r.struct_for + r.temporaries + r.cloned, 0);
  EXPECT_EQ(test::print(*k), once);
}

TEST(Offload, RefusesAMixOfTasksAndStatements) {
  auto k = test::parse(R"(kernel {
  $0 = offloaded
  body {
    <i32> $1 = const 1
  }
  <i32> $2 = const 2
}
)");
  try {
    passes::offload(*k);
    FAIL() << "a mixed top level was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes offloaded tasks with top-level statements (`<i32> $2 = const 2`)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Offload, RefusesAStackUsedByAnotherTask) {
  auto k = test::parse(R"(kernel {
  <f32> $0 = stack alloc (max_size=4)
  <i32> $1 = const 0
  <i32> $2 = const 4
  $3 : for in range($1, $2) block_dim=adaptive {
    <f32> $4 = const 1
    <f32> $5 : stack push $0, val = $4
  }
}
)");
  try {
    passes::offload(*k);
    FAIL() << "a stack shared by two tasks was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the autodiff stack of `<f32> $0 = stack alloc (max_size=4)` is used by "
                                         "another task"),
              std::string::npos)
        << e.what();
  }
}
