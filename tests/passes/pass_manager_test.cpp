// The pass manager's records: what every pass execution did, verification after each pass,
// stop-after, bisect limit, and failures (exceptions, internal errors, invalid IR).
#include "passes/pass_manager.h"

#include <gtest/gtest.h>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/statements.h"
#include "pass_test_util.h"
#include "passes/registry.h"

using namespace pb;
using namespace pb::passes;

namespace {

const char* kKernel = R"(field y : f32[]
kernel {
  <f32> $0 = const 2
  <f32> $1 = const 3
  <f32> $2 = mul $0 $1
  <f32> $3 = add $2 $0
  <f32> $4 = sub $0 $1
  <*f32> $5 = global ptr [y], index [] activate=true
  $6 : global store [$5 <- $3]
}
)";

// Test-only passes with known misbehaviour.
struct EraseFirstUsedPass final : Pass {  // leaves a dangling operand: the verifier must catch it
  PassResult run(ir::Kernel& k, const PassOptions&) override {
    for (ir::Stmt* s : k.root().statements())
      if (s->has_users()) {
        k.root().erase(s);
        return {true, {}};
      }
    return {};
  }
};
struct ThrowUserErrorPass final : Pass {
  PassResult run(ir::Kernel&, const PassOptions&) override {
    throw UserError("cannot handle this kernel", "use another pass");
  }
};
struct AssertPass final : Pass {
  PassResult run(ir::Kernel&, const PassOptions&) override {
    PB_ASSERT(false, "invariant broken on purpose");
    return {};
  }
};

// The broken passes these tests run.
std::vector<PassInfo> broken_passes() {
  return {{.name = "test_dangle",
           .summary = "test only: erases a used statement",
           .options = {},
           .statistics = {},
           .create = [] { return std::make_unique<EraseFirstUsedPass>(); }},
          {.name = "test_user_error",
           .summary = "test only: throws a user error",
           .options = {},
           .statistics = {},
           .create = [] { return std::make_unique<ThrowUserErrorPass>(); }},
          {.name = "test_assert",
           .summary = "test only: trips an assertion",
           .options = {},
           .statistics = {},
           .create = [] { return std::make_unique<AssertPass>(); }}};
}

// They are visible while the returned scope lives.
ScopedRegistry test_passes() { return ScopedRegistry(broken_passes()); }

TEST(PassManager, RecordsEveryPassExecution) {
  auto k = test::parse(kKernel);
  std::string input = test::print(*k);
  auto run = run_pipeline(*k, parse_pipeline("simplify,dce,dce"));
  ASSERT_FALSE(run.failed);
  ASSERT_EQ(run.records.size(), 3u);
  const auto& s = run.records[0];
  EXPECT_TRUE(s.ran);
  EXPECT_EQ(s.pass, "simplify");
  EXPECT_TRUE(s.changed);
  EXPECT_EQ(s.statements_before, 7u);
  EXPECT_EQ(s.before_text, input);
  EXPECT_EQ(s.after_text, test::print(*s.after));
  EXPECT_EQ(s.stats.at("folded"), 3);  // mul, add and sub of constants
  EXPECT_TRUE(s.verify_errors.empty());
  EXPECT_GE(s.wall_ms, 0.0);
  const auto& d = run.records[1];
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.before_text, s.after_text);
  EXPECT_LT(d.statements_after, d.statements_before);
  EXPECT_EQ(d.stats.at("removed"), static_cast<int64_t>(d.statements_before - d.statements_after));
  EXPECT_FALSE(run.records[2].changed);  // a second dce finds nothing
  EXPECT_EQ(run.records[2].before_text, run.records[2].after_text);
  EXPECT_EQ(test::print(*k), d.after_text);
  EXPECT_NEAR(run.total_ms, s.wall_ms + d.wall_ms + run.records[2].wall_ms, 1e-9);
}

TEST(PassManager, WithoutCaptureNoSnapshotsAreKept) {
  auto k = test::parse(kKernel);
  RunOptions o;
  o.capture = passes::Capture::none;
  auto run = run_pipeline(*k, parse_pipeline("simplify,dce"), o);
  EXPECT_TRUE(run.records[0].before_text.empty());
  EXPECT_FALSE(run.records[0].after);
  EXPECT_TRUE(run.records[0].changed);
  EXPECT_EQ(run.records[1].statements_after, k->count_statements());
}

TEST(PassManager, StopAfterSkipsTheRest) {
  auto k = test::parse(kKernel);
  RunOptions o;
  o.stop_after = "simplify";
  auto run = run_pipeline(*k, parse_pipeline("simplify,dce,renumber"), o);
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_TRUE(run.records[0].ran);
  EXPECT_FALSE(run.records[1].ran);
  EXPECT_FALSE(run.records[2].ran);
  EXPECT_EQ(test::print(*k), run.records[0].after_text);
}

TEST(PassManager, BisectLimitRunsOnlyTheFirstN) {
  for (int64_t limit : {0, 1, 2}) {
    auto k = test::parse(kKernel);
    RunOptions o;
    o.bisect_limit = limit;
    auto run = run_pipeline(*k, parse_pipeline("simplify,dce"), o);
    for (size_t i = 0; i < run.records.size(); ++i)
      EXPECT_EQ(run.records[i].ran, static_cast<int64_t>(i) < limit) << limit;
  }
  auto k = test::parse(kKernel);
  std::string before = test::print(*k);
  RunOptions o;
  o.bisect_limit = 0;
  run_pipeline(*k, parse_pipeline("simplify,dce"), o);
  EXPECT_EQ(test::print(*k), before);
}

TEST(PassManager, InvalidIrStopsTheRunAndNamesTheStatement) {
  ScopedRegistry scope = test_passes();
  auto k = test::parse(kKernel);
  auto run = run_pipeline(*k, parse_pipeline("simplify,test_dangle,dce"));
  ASSERT_TRUE(run.failed);
  EXPECT_EQ(run.failed_index, 1u);
  EXPECT_EQ(run.records.size(), 2u);
  const auto& r = run.records[1];
  EXPECT_EQ(r.pass, "test_dangle");
  EXPECT_NE(r.failure.find("verifier rejects"), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("refers to an erased statement"), std::string::npos) << r.failure;
  EXPECT_FALSE(r.verify_errors.empty());
  EXPECT_EQ(run.remaining_pipeline, "test_dangle,dce");
  EXPECT_NE(r.before_text, r.after_text);
}

TEST(PassManager, WithoutVerifyEachInvalidIrIsNotCaught) {
  ScopedRegistry scope = test_passes();
  auto k = test::parse(kKernel);
  RunOptions o;
  o.verify_each = false;
  auto run = run_pipeline(*k, parse_pipeline("test_dangle"), o);
  EXPECT_FALSE(run.failed);
  EXPECT_FALSE(test::verify_text(*k).empty());
}

// A named pipeline whose second pass makes the IR invalid and whose third crashes on it.
ScopedRegistry test_group() {
  std::vector<NamedPipelineInfo> pipelines = {
      {.name = "test_group", .summary = "test only", .options = {}, .expand = [](const PassOptions&) {
         return std::string("simplify,test_dangle,test_assert,dce");
       }}};
  return ScopedRegistry(broken_passes(), std::move(pipelines));
}

TEST(PassManager, EntriesRememberTheWrittenEntryTheyCameFrom) {
  ScopedRegistry scope = test_group();
  Pipeline p = parse_pipeline("dce,test_group,simplify");
  std::vector<size_t> groups;
  for (const auto& e : p.entries) groups.push_back(e.group);
  EXPECT_EQ(groups, (std::vector<size_t>{0, 1, 1, 1, 1, 2}));
}

// Inside a named pipeline, the failure is named at the pass whose output does not verify, though
// only the pipeline's end is verified and a later pass crashed first.
TEST(PassManager, AFailureInsideANamedPipelineIsTracedToThePassThatBrokeTheIr) {
  ScopedRegistry scope = test_group();
  for (int variant = 0; variant < 3; ++variant) {
    bool expanded = variant == 1;
    auto k = test::parse(kKernel);
    RunOptions o;
    o.verify_expanded = expanded;
    o.capture = Capture::failure;
    if (variant == 2) o.rebuild_input = [] { return test::parse(kKernel); };  // read again, not copied
    auto run = run_pipeline(*k, parse_pipeline("dce,test_group"), o);
    ASSERT_TRUE(run.failed);
    const PassRecord& r = run.records[run.failed_index];
    EXPECT_EQ(r.pass, "test_dangle") << expanded;
    EXPECT_EQ(run.failed_index, 2u);
    EXPECT_NE(r.failure.find("refers to an erased statement"), std::string::npos) << r.failure;
    EXPECT_EQ(run.remaining_pipeline, "test_dangle,test_assert,dce");
    // Capture::failure: only the failing pass keeps its IR, rebuilt from a copy of the input.
    EXPECT_FALSE(run.records[0].before);
    ASSERT_TRUE(r.before && r.after);
    EXPECT_TRUE(test::verify_text(*r.before).empty());
    EXPECT_NE(r.before_text, r.after_text);
  }
  // Without verification the crash is what stops the run.
  auto k = test::parse(kKernel);
  RunOptions o;
  o.verify_each = false;
  auto run = run_pipeline(*k, parse_pipeline("test_group"), o);
  ASSERT_TRUE(run.failed);
  EXPECT_EQ(run.records[run.failed_index].pass, "test_assert");
}

TEST(PassManager, UserErrorAndAssertionAreRecordedNotThrown) {
  ScopedRegistry scope = test_passes();
  auto k = test::parse(kKernel);
  auto run = run_pipeline(*k, parse_pipeline("dce,test_user_error,simplify"));
  ASSERT_TRUE(run.failed);
  EXPECT_EQ(run.failed_index, 1u);
  EXPECT_NE(run.records[1].failure.find("cannot handle this kernel"), std::string::npos);
  EXPECT_NE(run.records[1].failure.find("remedy: use another pass"), std::string::npos);
  EXPECT_FALSE(run.records[1].internal_error);
  auto k2 = test::parse(kKernel);
  auto run2 = run_pipeline(*k2, parse_pipeline("test_assert"));
  ASSERT_TRUE(run2.failed);
  EXPECT_TRUE(run2.records[0].internal_error);
  EXPECT_NE(run2.records[0].failure.find("invariant broken on purpose"), std::string::npos);
}

TEST(PassManager, RenumberMakesIdsDense) {
  auto k = test::parse("kernel {\n  <i32> $7 = const 1\n  <i32> $9 = add $7 $7\n}\n");
  auto run = run_pipeline(*k, parse_pipeline("renumber"));
  EXPECT_TRUE(run.records[0].changed);
  EXPECT_EQ(run.records[0].stats.at("moved"), 2);
  EXPECT_EQ(test::print(*k), "kernel {\n  <i32> $0 = const 1\n  <i32> $1 = add $0 $0\n}\n");
  auto again = run_pipeline(*k, parse_pipeline("renumber"));
  EXPECT_FALSE(again.records[0].changed);
}

}  // namespace
