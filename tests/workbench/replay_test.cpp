// A deliberately broken, test-only pass: its failure produces a reproducer, and replaying the
// reproducer reproduces the same failure.
#include "workbench/workspace/replay.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/registry.h"
#include "workbench/workspace/fixture.h"

using namespace pb;

namespace {

struct EraseUsedConstPass final : passes::Pass {
  passes::PassResult run(ir::Kernel& k, const passes::PassOptions&) override {
    for (ir::Stmt* s : ir::collect_preorder(k.root()))
      if (ir::isa<ir::ConstStmt>(s) && s->has_users()) {
        s->parent()->erase(s);
        return {true, {}};
      }
    return {};
  }
};

const char* kKernel = R"(field y : f32[]
kernel {
  <f32> $0 = const 2
  <f32> $1 = const 3
  <f32> $2 = mul $0 $1
  <f32> $3 = sin $2
  <*f32> $4 = global ptr [y], index [] activate=true
  $5 : global store [$4 <- $3]
}
)";

void check_reproducer(passes::Capture capture);

TEST(Reproducer, BrokenPassReplaysToTheSameFailure) {
  passes::ScopedRegistry scope({{.name = "test_break_consts",
                                 .summary = "test only: erases a used constant",
                                 .options = {},
                                 .statistics = {},
                                 .create = [] { return std::make_unique<EraseUsedConstPass>(); }}});
  // Capture::failure (replay's default when nothing prints IR) keeps only the failing pass's IR.
  for (passes::Capture capture : {passes::Capture::all, passes::Capture::failure}) check_reproducer(capture);
}

void check_reproducer(passes::Capture capture) {
  passes::RunOptions options;
  options.capture = capture;
  auto first = workbench::replay(ir::parse_kernel(kKernel), "dce,test_break_consts,simplify", options);
  ASSERT_TRUE(first.run.failed);
  EXPECT_EQ(first.run.records[0].before != nullptr, capture == passes::Capture::all);
  const auto& rec = first.run.records[first.run.failed_index];
  EXPECT_EQ(rec.pass, "test_break_consts");
  EXPECT_NE(rec.failure.find("refers to an erased statement"), std::string::npos) << rec.failure;
  EXPECT_NE(workbench::pass_diff(rec).find("-  <f32> $0 = const 2"), std::string::npos) << workbench::pass_diff(rec);

  auto dir = std::filesystem::temp_directory_path() / ("pb_repro_" + std::to_string(::getpid()));
  std::string path = workbench::write_reproducer(first, dir.string());
  ASSERT_TRUE(std::filesystem::exists(path));

  auto source = workbench::load_source(path);
  ASSERT_TRUE(source.pipeline);
  EXPECT_EQ(*source.pipeline, "test_break_consts,simplify");
  EXPECT_EQ(ir::print_kernel(*source.kernel), rec.before_text);
  auto again = workbench::replay(std::move(source.kernel), *source.pipeline, passes::RunOptions{});
  ASSERT_TRUE(again.run.failed);
  EXPECT_EQ(again.run.records[again.run.failed_index].pass, "test_break_consts");
  EXPECT_EQ(again.run.records[again.run.failed_index].failure, rec.failure);

  // The reproducer is also a fixture whose expected failure holds.
  auto outcome = workbench::check_fixture(path);
  EXPECT_TRUE(outcome.passed) << (outcome.failures.empty() ? "" : outcome.failures[0]);
  std::filesystem::remove_all(dir);
}

}  // namespace
