// check_global_access: what it refuses, what it reports (notes with the read, the write, their
// lines and the fix), strict mode, and the cross-iteration "maybe". Both verdicts of many more
// kernels, static and dynamic, are in fixtures/global_access.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/pass_manager.h"

using namespace pb;

namespace {

passes::PipelineRun check(const std::string& text, const std::string& pipeline = "check_global_access") {
  auto k = test::parse(text);
  return passes::run_pipeline(*k, passes::parse_pipeline(pipeline));
}

// y[i] = y[i] + x[i]: read, then written; reverse mode tolerates it (the value is not needed).
const char* kAccumulate = R"(field x : f32[4] grad x_grad
field y : f32[4] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [y], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [x], index [$3] activate=true
    <f32> $7 = global load $6
    <f32> $8 = add $5 $7
    $9 : global store [$4 <- $8]
  }
}
)";

TEST(CheckGlobalAccess, ReportsAProvenFindingWithLinesAndTheFix) {
  auto run = check(kAccumulate);
  ASSERT_FALSE(run.failed) << run.records[run.failed_index].failure;
  const auto& rec = run.records.front();
  EXPECT_EQ(rec.stats.at("findings"), 1);
  EXPECT_EQ(rec.stats.at("proven"), 1);
  EXPECT_EQ(rec.stats.at("maybe"), 0);
  ASSERT_EQ(rec.notes.size(), 1u);
  EXPECT_EQ(rec.notes[0],
            "field 'y' is read and then written in one launch (the same element, later in the same iteration):\n"
            "  read:  `<f32> $5 = global load $4` (line 9)\n"
            "  write: `$9 : global store [$4 <- $8]` (line 13)\n"
            "  fix: write the new values to a second field (or ndarray), or split the kernel in two at the write");
}

TEST(CheckGlobalAccess, StrictRefusesProvenFindingsAndReverseAdTolerates) {
  auto strict = check(kAccumulate, "check_global_access{strict=true}");
  ASSERT_TRUE(strict.failed);
  EXPECT_NE(strict.records[strict.failed_index].failure.find("global data access rule (strict)"), std::string::npos);
  EXPECT_FALSE(check(kAccumulate, "reverse_ad").failed);
}

TEST(CheckGlobalAccess, AnotherIterationMayWriteIsAMaybe) {
  // y[i] = sin(x[i]) then x[3 - i] += 0.5: iteration 3 - i writes what iteration i read.
  std::string k = kAccumulate;
  k = R"(field x : f32[4] grad x_grad
field y : f32[4] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <i32> $10 = const 3
  <f32> $11 = const 0.5
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [$3] activate=true
    $7 : global store [$6 <- $5]
    <i32> $8 = sub $10 $3
    <*f32> $9 = global ptr [x], index [$8] activate=true
    <f32> $12 = atomic add($9, $11)
  }
}
)";
  auto run = check(k);
  ASSERT_FALSE(run.failed) << run.records[run.failed_index].failure;
  const auto& rec = run.records.front();
  EXPECT_EQ(rec.stats.at("maybe"), 1);
  ASSERT_EQ(rec.notes.size(), 1u);
  EXPECT_NE(rec.notes[0].find("maybe the same element, later in the same iteration"), std::string::npos)
      << rec.notes[0];
}

TEST(CheckGlobalAccess, StillRefusesWhatBreaksReverseMode) {
  // x[i] is read for sin and then overwritten: the reverse kernel would read the new value.
  std::string k = kAccumulate;
  k.replace(k.find("<f32> $8 = add $5 $7"), 20, "<f32> $8 = sin $7");
  k.replace(k.find("$9 : global store [$4 <- $8]"), 28, "$9 : global store [$6 <- $8]");
  auto run = check(k);
  ASSERT_TRUE(run.failed);
  EXPECT_NE(run.records[run.failed_index].failure.find("field 'x' is read and then written"), std::string::npos)
      << run.records[run.failed_index].failure;
}

}  // namespace
