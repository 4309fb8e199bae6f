// lower_access against the interpreter: every fixture kernel that runs gives the same fields,
// ndarrays, printed text and return values with its field pointers lowered to the SNode access
// chain, before and after offloading (the reference lowers after offload); plus the SNode names
// the pass gives.
#include "passes/lower_access.h"

#include <gtest/gtest.h>

#include "fixture_runs.h"
#include "passes/offload.h"

using namespace pb;

namespace {

test::Change lowered(const passes::LowerAccessResult& r) {
  if (r.lowered == 0) return test::Change::none;
  return r.skipped > 0 ? test::Change::notable : test::Change::some;
}

}  // namespace

TEST(LowerAccess, EveryFixtureKernelRunsTheSameLowered) {
  test::Tally plain, piped;
  test::compare_fixture_kernels([](ir::Kernel& k) { return lowered(passes::lower_access(k)); }, plain, piped);
  std::cout << "lower_access compared " << plain.compared << " fixture kernels (" << plain.skipped
            << " did not run or access no field of known shape) and " << piped.compared << " pipeline outputs\n";
  EXPECT_GE(plain.compared, 300);
  EXPECT_GE(piped.compared, 100);
}

TEST(LowerAccess, EveryFixtureKernelRunsTheSameOffloadedThenLowered) {
  test::Tally plain, piped;
  test::compare_fixture_kernels(
      [](ir::Kernel& k) {
        if (test::has_tensor_type(k)) return test::Change::none;  // offload takes scalar kernels
        passes::offload(k);
        return lowered(passes::lower_access(k));
      },
      plain, piped);
  std::cout << "offload,lower_access compared " << plain.compared << " fixture kernels and " << piped.compared
            << " pipeline outputs\n";
  EXPECT_GE(plain.compared, 300);
  EXPECT_GE(piped.compared, 100);
}

TEST(LowerAccess, DenseNamesAvoidFieldsAndSpacesAndShapelessFieldsAreSkipped) {
  auto k = test::parse(R"(dense T : [2, 3]
field S1dense : i32[4]
field a : f32[2, 3] in T
field b : f32[]
kernel {
  <i32> $0 = const 1
  <*i32> $1 = global ptr [S1dense], index [$0] activate=true
  <i32> $2 = global load $1
  <*f32> $3 = global ptr [a], index [$0, $2] activate=true
  <*f32> $4 = global ptr [b], index [] activate=true
  <f32> $5 = global load $4
  <f32> $6 = atomic add($3, $5)
  <*f32> $7 = global ptr [c_f32], index [$0] activate=true
  $8 : global store [$7 <- $5]
}
)");
  passes::LowerAccessResult r = passes::lower_access(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_EQ(r.lowered, 3);
  EXPECT_EQ(r.skipped, 1);  // c_f32 (inferred): its shape comes with the inputs only
  const std::string text = test::print(*k);
  EXPECT_NE(text.find("get child [S0root->S2dense]"), std::string::npos) << text;  // S1dense is a field's name
  EXPECT_NE(text.find("= [S2dense][dense]::lookup("), std::string::npos) << text;
  EXPECT_NE(text.find("get child [S2dense->S1dense]"), std::string::npos) << text;
  EXPECT_NE(text.find("get child [T->a]"), std::string::npos) << text;  // a's declared space
  EXPECT_NE(text.find("linearized(ind {$"), std::string::npos) << text;
  EXPECT_NE(text.find("stride {2, 3})"), std::string::npos) << text;
  EXPECT_NE(text.find("get child [S3dense->b]"), std::string::npos) << text;
  EXPECT_NE(text.find("global ptr [c_f32]"), std::string::npos) << text;
  EXPECT_EQ(text.find("global ptr [a]"), std::string::npos) << text;  // erased once unused
}

TEST(LowerAccess, AtomicsStayOnGlobalPointersWhenAsked) {
  auto k = test::parse(R"(field x : i32[4]
kernel {
  <i32> $0 = const 1
  <*i32> $1 = global ptr [x], index [$0] activate=true
  <i32> $2 = atomic add($1, $0)
}
)");
  passes::LowerAccessResult r = passes::lower_access(*k, false);
  EXPECT_EQ(r.lowered, 0);
  EXPECT_NE(test::print(*k).find("atomic add($1, $0)"), std::string::npos) << test::print(*k);
}
