// workbench::Workspace: results computed once and kept, invalidated by the inputs they depend on,
// cancellable, errors as values; the bisection marks the first pass that changes the answer.
#include "workbench/workspace/workspace.h"

#include <gtest/gtest.h>

#include <thread>

#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/registry.h"

using namespace pb;
using workbench::Workspace;

namespace {

const std::string kSource = PASSBENCH_SOURCE_DIR;

const char* kKernel = R"(field x : f32[3] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $10 = const 0
  <i32> $11 = const 3
  $0 : for in range($10, $11) {
    <i32> $1 = loop $0 index 0
    <*f32> $2 = global ptr [x], index [$1] activate=true
    <f32> $3 = global load $2
    <f32> $4 = const 3
    <f32> $5 = mul $3 $4
    <f32> $6 = const 1
    <f32> $7 = mul $5 $6
    <*f32> $8 = global ptr [y], index [] activate=true
    <f32> $9 = atomic add($8, $7)
  }
}
)";

const char* kInputs = R"({"fields": {"x": {"data": [1.0, 2.0, 0.5]}}})";

// Test only: turns the first constant 3 into 4. The IR stays valid; the answer does not.
struct WrongConstantPass final : passes::Pass {
  passes::PassResult run(ir::Kernel& k, const passes::PassOptions&) override {
    for (ir::Stmt* s : ir::collect_preorder(k.root()))
      if (auto* c = ir::dyn_cast<ir::ConstStmt>(s); c && c->value.identical(ir::Value::make_f32(3))) {
        c->value = ir::Value::make_f32(4);
        return {true, {}};
      }
    return {};
  }
};

// A pass that changes the answer, visible while the returned scope lives.
passes::ScopedRegistry wrong_constant_pass() {
  return passes::ScopedRegistry({{.name = "test_wrong_constant",
                                  .summary = "test only: 3 becomes 4",
                                  .options = {},
                                  .statistics = {},
                                  .create = [] { return std::make_unique<WrongConstantPass>(); }}});
}

Workspace loaded() {
  Workspace ws;
  EXPECT_FALSE(ws.set_source_text(kKernel, "k.chi"));
  EXPECT_FALSE(ws.set_inputs_text(kInputs));
  return ws;
}

}  // namespace

TEST(Workspace, ReplayIsComputedOnceAndKeptUntilThePipelineChanges) {
  Workspace ws = loaded();
  EXPECT_EQ(ws.replay_if_ready(), nullptr);
  ws.set_pipeline("simplify,dce");
  const auto& r = ws.replay();
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.run.records.size(), 2u);
  EXPECT_EQ(r.run.records[0].pass, "simplify");
  EXPECT_TRUE(r.run.records[0].changed);  // mul $5 1 folds away
  EXPECT_LT(r.run.records[1].statements_after, r.run.records[0].statements_before);
  EXPECT_EQ(r.run.records[1].index, 1u);
  EXPECT_EQ(r.run.records[1].before_text, r.run.records[0].after_text);
  EXPECT_EQ(&ws.replay(), &r);  // kept, not recomputed
  EXPECT_EQ(ws.replay_if_ready(), &r);
  EXPECT_EQ(ir::print_kernel(ws.pipeline_result()), r.run.records[1].after_text);
  ws.set_pipeline("dce");
  EXPECT_EQ(ws.replay_if_ready(), nullptr);
  EXPECT_EQ(ws.replay().run.records.size(), 1u);
}

TEST(Workspace, BadPipelineIsAnErrorValue) {
  Workspace ws = loaded();
  ws.set_pipeline("simplfy");
  const auto& r = ws.replay();
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->format().find("simplify"), std::string::npos) << r.error->format();  // did you mean
  EXPECT_TRUE(r.run.records.empty());
}

TEST(Workspace, EditWithParseErrorKeepsTheTextAndLocatesTheError) {
  Workspace ws;
  std::string text = kKernel;
  text.replace(text.find("mul $3 $4"), 9, "mul $3 $99");
  auto error = ws.set_source_text(text, "edited.chi");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->line, 11);
  EXPECT_EQ(ws.kernel(), nullptr);
  EXPECT_EQ(ws.source_text(), text);
  EXPECT_FALSE(ws.set_source_text(kKernel));
  EXPECT_NE(ws.kernel(), nullptr);
  EXPECT_FALSE(ws.source_error());
}

TEST(Workspace, OpenDumpTakesTheInputsBesideIt) {
  Workspace ws;
  ws.open(kSource + "/fixtures/dumps/quadrants_issue_example.chi");
  ASSERT_NE(ws.kernel(), nullptr);
  EXPECT_TRUE(ws.inputs().contains("args"));
  const auto& run = ws.run(false);
  ASSERT_TRUE(run.output) << (run.error ? run.error->format() : "");
  EXPECT_EQ(run.backend, "interp");
  EXPECT_EQ(run.output->values["fields"]["S2place<f32>"]["data"].size(), 8u);
}

TEST(Workspace, OpenFixtureSetsPipelineAndInputs) {
  Workspace ws;
  ws.open(kSource + "/fixtures/autodiff/binary_mul_f32.fixture.json");
  ASSERT_NE(ws.kernel(), nullptr);
  EXPECT_EQ(ws.pipeline_text(), "reverse_ad");
  EXPECT_TRUE(ws.inputs()["fields"].contains("a"));
  ASSERT_EQ(ws.loss_candidates(), std::vector<std::string>({"a", "b", "y"}));
  EXPECT_EQ(ws.suggested_loss(), "y");
  const auto& g = ws.gradcheck("y");
  ASSERT_TRUE(g.result) << (g.error ? g.error->format() : "");
  EXPECT_TRUE(g.result->passed());
  EXPECT_EQ(g.result->compared, 6u);
  EXPECT_EQ(&ws.gradcheck("y"), &g);
  EXPECT_EQ(ws.gradcheck_if_ready("y"), &g);
  EXPECT_EQ(ws.gradcheck_if_ready("b"), nullptr);  // another loss is another check
}

TEST(Workspace, RunErrorsAreValues) {
  Workspace ws = loaded();
  ws.set_inputs(nlohmann::json::parse(R"({"fields": {"nope": {"data": [1]}}})"));
  const auto& run = ws.run(false);
  EXPECT_FALSE(run.output);
  ASSERT_TRUE(run.error);
  EXPECT_NE(run.error->format().find("nope"), std::string::npos) << run.error->format();
  // A new inputs object drops the kept run.
  EXPECT_FALSE(ws.set_inputs_text(kInputs));
  EXPECT_EQ(ws.run_if_ready(false), nullptr);
  EXPECT_TRUE(ws.run(false).output);
  auto bad = ws.set_inputs_text("{\n  \"fields\": [,\n}");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->line, 2);
}

TEST(Workspace, CompileKeepsOneResultPerLowering) {
  Workspace ws;
  ws.open(kSource + "/fixtures/autodiff/loop_carried_needs_stack.fixture.json");
  ASSERT_NE(ws.kernel(), nullptr);
  const auto& heap = ws.compile();
  ASSERT_TRUE(heap.ok()) << heap.error->message;
  ASSERT_FALSE(heap.tasks.empty());
  ASSERT_TRUE(heap.tasks[0].report);
  // One optimizer for all passes unless the per-pass chart is asked for.
  EXPECT_FALSE(ws.compile_settings().measure_passes);
  EXPECT_EQ(heap.tasks[0].report->rows.size(), 2u);
  EXPECT_EQ(heap.tasks[0].report->rows.back().pass, "pipeline");
  EXPECT_GT(heap.metrics.msl_lines, 0u);
  auto settings = ws.compile_settings();
  settings.lowering.storage = codegen::spirv::StackStorage::function;
  ws.set_compile_settings(settings);
  EXPECT_EQ(ws.compile_if_ready(), nullptr);
  const auto& function = ws.compile();
  EXPECT_NE(function.lowering, heap.lowering);
  settings.lowering.storage = codegen::spirv::StackStorage::heap;
  ws.set_compile_settings(settings);
  EXPECT_EQ(ws.compile_if_ready(), &heap);  // both kept
  settings.measure_passes = true;
  ws.set_compile_settings(settings);
  const auto& measured = ws.compile();
  ASSERT_TRUE(measured.ok() && measured.tasks[0].report);
  EXPECT_GT(measured.tasks[0].report->rows.size(), 2u);  // measured pass by pass
  settings.measure_passes = false;
  ws.set_compile_settings(settings);
  const auto& table = ws.lowerings();
  EXPECT_EQ(table.rows.size(), codegen::spirv::all_stack_lowerings().size());
}

// Runs on the other backends are kept per (backends, loss) and dropped when the inputs change.
TEST(Workspace, BackendComparisonsAreKeptAndCompareEveryArray) {
  Workspace ws = loaded();
  const std::vector<workbench::Backend> both = {workbench::Backend::cpu, workbench::Backend::vulkan};
  EXPECT_EQ(ws.backends_if_ready(both, ""), nullptr);
  const workbench::BackendsRecord& forward = ws.compare_backends(both, "");
  ASSERT_FALSE(forward.error) << forward.error->format();
  // x and y (and their gradient fields) on each backend: 4 arrays x 2 backends.
  EXPECT_EQ(forward.rows.size(), 8u);
  EXPECT_TRUE(forward.ok());
  ASSERT_EQ(forward.launches.size(), 3u);  // interp, cpu, vulkan
  EXPECT_EQ(forward.launches[0].backend, workbench::Backend::interp);
  EXPECT_EQ(&ws.compare_backends(both, ""), &forward);
  EXPECT_EQ(ws.backends_if_ready(both, ""), &forward);

  const workbench::BackendsRecord& reverse = ws.compare_backends({workbench::Backend::cpu}, "y");
  ASSERT_FALSE(reverse.error) << reverse.error->format();
  EXPECT_TRUE(reverse.ok());
  EXPECT_EQ(reverse.launches.size(), 4u);  // forward and reverse on interp and cpu
  bool x_grad_compared = false;
  for (const auto& d : reverse.rows) x_grad_compared |= d.array == "x_grad" && d.elements == 3;
  EXPECT_TRUE(x_grad_compared);

  EXPECT_FALSE(ws.set_inputs_text(R"({"fields": {"x": {"data": [2.0, 2.0, 2.0]}}})"));
  EXPECT_EQ(ws.backends_if_ready(both, ""), nullptr);
  EXPECT_EQ(ws.backends_if_ready({workbench::Backend::cpu}, "y"), nullptr);
}

TEST(Workspace, CancelledWorkLeavesNoResult) {
  Workspace ws = loaded();
  ws.set_pipeline("simplify,dce,renumber");
  workbench::WorkControl control;
  control.cancel();
  EXPECT_THROW(ws.replay(&control), workbench::Cancelled);
  EXPECT_EQ(ws.replay_if_ready(), nullptr);
  workbench::WorkControl fresh;
  EXPECT_EQ(ws.replay(&fresh).run.records.size(), 3u);
  auto p = fresh.progress();
  EXPECT_EQ(p.stage, "replay");
  EXPECT_EQ(p.done, 3u);
  EXPECT_EQ(p.total, 3u);
}

TEST(Workspace, CancelFromAnotherThreadStopsACompile) {
  Workspace ws;
  ws.open(kSource + "/fixtures/autodiff/loop_carried_needs_stack.fixture.json");
  workbench::WorkControl control;
  std::thread canceller([&] { control.cancel(); });
  canceller.join();
  EXPECT_THROW(ws.lowerings(&control), workbench::Cancelled);
  EXPECT_EQ(ws.lowerings_if_ready(), nullptr);
}

TEST(Bisect, MarksTheFirstPassThatChangesTheAnswer) {
  passes::ScopedRegistry scope = wrong_constant_pass();
  Workspace ws = loaded();
  ws.set_pipeline("simplify,dce,test_wrong_constant,renumber");
  const auto& b = ws.bisect();
  ASSERT_FALSE(b.error) << b.error->format();
  ASSERT_EQ(b.rows.size(), 4u);
  EXPECT_FALSE(b.rows[0].differs());
  EXPECT_GT(b.rows[0].compared, 0u);
  ASSERT_TRUE(b.first_differing);
  EXPECT_EQ(*b.first_differing, 2u);
  EXPECT_EQ(b.rows[2].pass, "test_wrong_constant");
  EXPECT_EQ(b.rows[2].first_difference, "y[0]: 10.5 vs 14");  // 3 * 3.5 vs 4 * 3.5
  EXPECT_TRUE(b.rows[3].differs());                           // the later passes keep the wrong answer
}

TEST(Bisect, PassesThatKeepTheAnswerAreClean) {
  Workspace ws = loaded();
  ws.set_pipeline("simplify,dce,renumber");
  const auto& b = ws.bisect();
  ASSERT_FALSE(b.error);
  EXPECT_FALSE(b.first_differing);
  for (const auto& row : b.rows) EXPECT_EQ(row.compared, 4u) << row.pass;  // x[3] and y
}

TEST(Bisect, VerdictAndComparison) {
  std::vector<workbench::BisectRow> rows(3);
  for (auto& r : rows) r.ran = true;
  EXPECT_FALSE(workbench::first_differing_row(rows));
  rows[1].error = "stack overflow";
  EXPECT_EQ(workbench::first_differing_row(rows), 1u);
  rows[0].ran = false;
  rows[0].differing = 1;  // a pass that did not run is never blamed
  EXPECT_EQ(workbench::first_differing_row(rows), 1u);

  auto base = nlohmann::json::parse(R"({"fields": {"a": {"data": [[1, 2], [3, 4]]}, "b": {"data": 5}}})");
  auto same = nlohmann::json::parse(R"({"fields": {"a": {"data": [[1, 2], [3, 4.00000001]]}, "b": {"data": 5}}})");
  auto diff = nlohmann::json::parse(R"({"fields": {"a": {"data": [[1, 2], [3, 4.5]]}}})");
  workbench::BisectRow r1, r2;
  workbench::compare_run_values(base, same, {1e-5, 1e-8}, r1);
  EXPECT_EQ(r1.compared, 5u);
  EXPECT_EQ(r1.differing, 0u);
  workbench::compare_run_values(base, diff, {1e-5, 1e-8}, r2);
  EXPECT_EQ(r2.compared, 5u);
  EXPECT_EQ(r2.differing, 2u);  // a[3] and the missing b
  EXPECT_EQ(r2.first_difference, "a[3]: 4 vs 4.5");
  EXPECT_DOUBLE_EQ(r2.max_abs_difference, INFINITY);
}
