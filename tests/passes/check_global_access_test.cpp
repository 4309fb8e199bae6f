// check_global_access: what it refuses, what it reports (notes with the read, the write, their
// lines and the fix), proven findings refused unless findings=warn, and the "maybe" warnings. Both verdicts of many
// more kernels, static and dynamic, are in fixtures/global_access.
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
  auto run = check(kAccumulate, "check_global_access{findings=warn}");
  ASSERT_FALSE(run.failed) << run.records[run.failed_index].failure;
  const auto& rec = run.records.front();
  ASSERT_EQ(rec.warnings.size(), 1u);
  EXPECT_EQ(rec.warnings[0], "global data access rule: " + rec.notes.at(0));
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

// A proven finding is an error (a RuleViolation: a check failed) naming the load and the store,
// in check_global_access and in reverse_ad; the warn options make it a warning.
TEST(CheckGlobalAccess, ProvenFindingsAreRefusedUnlessWarn) {
  for (const char* pipeline : {"check_global_access", "reverse_ad", "cleanup,reverse_ad{use_stack=false}"}) {
    auto run = check(kAccumulate, pipeline);
    ASSERT_TRUE(run.failed) << pipeline;
    const auto& rec = run.records[run.failed_index];
    EXPECT_EQ(rec.pass, "check_global_access");
    EXPECT_TRUE(rec.rule_violation) << pipeline;
    EXPECT_NE(rec.failure.find("global data access rule: field 'y' is read and then written"), std::string::npos)
        << rec.failure;
    EXPECT_NE(rec.failure.find("read:  `<f32> $5 = global load $4`"), std::string::npos) << rec.failure;
    EXPECT_NE(rec.failure.find("write: `$9 : global store [$4 <- $8]`"), std::string::npos) << rec.failure;
    EXPECT_NE(rec.failure.find("reverse_ad{global_access=warn}"), std::string::npos) << rec.failure;
  }
  auto warn = check(kAccumulate, "reverse_ad{global_access=warn}");
  ASSERT_FALSE(warn.failed) << warn.records[warn.failed_index].failure;
  ASSERT_EQ(warn.records.front().warnings.size(), 1u);
  EXPECT_NE(warn.records.front().warnings[0].find("(the same element, later in the same iteration)"),
            std::string::npos);
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
  ASSERT_EQ(rec.warnings.size(), 1u);  // a maybe is a warning, never an error
  EXPECT_EQ(rec.warnings[0], "global data access rule: " + rec.notes[0]);
  EXPECT_NE(rec.notes[0].find("maybe the same element, later in the same iteration"), std::string::npos)
      << rec.notes[0];
}

TEST(CheckGlobalAccess, StillRefusesWhatBreaksReverseMode) {
  // x[i] is read for sin and then overwritten: the reverse kernel would read the new value.
  std::string k = kAccumulate;
  k.replace(k.find("<f32> $8 = add $5 $7"), 20, "<f32> $8 = sin $7");
  k.replace(k.find("$9 : global store [$4 <- $8]"), 28, "$9 : global store [$6 <- $8]");
  for (const char* pipeline : {"check_global_access", "check_global_access{findings=warn}"}) {
    auto run = check(k, pipeline);
    ASSERT_TRUE(run.failed) << pipeline;
    EXPECT_TRUE(run.records[run.failed_index].rule_violation);
    EXPECT_NE(run.records[run.failed_index].failure.find("field 'x' is read and then written"), std::string::npos)
        << run.records[run.failed_index].failure;
  }
}

}  // namespace
