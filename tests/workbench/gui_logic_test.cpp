// The GUI's panel logic without a window: diff lines, folding and side-by-side pairing; timeline
// rows from pass records; chart axis scaling; fixture list states and filters.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "workbench/gui/logic/chart_scale.h"
#include "workbench/gui/logic/diff_model.h"
#include "workbench/gui/logic/fixture_list.h"
#include "workbench/gui/logic/timeline.h"
#include "workbench/gui/logic/worker.h"
#include "workbench/workspace/workspace.h"

using namespace pb::workbench;
using namespace pb::workbench::gui;

namespace {
std::string numbered(int from, int to, int changed = -1) {
  std::string s;
  for (int i = from; i <= to; ++i) s += (i == changed ? "CHANGED " : "line ") + std::to_string(i) + "\n";
  return s;
}
}  // namespace

TEST(DiffModel, MarksRemovedAndAddedLinesWithTheirNumbers) {
  auto lines = diff_lines("a\nb\nc\n", "a\nB\nc\nd\n");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].kind, LineKind::same);
  EXPECT_EQ(lines[1].kind, LineKind::removed);
  EXPECT_EQ(lines[1].text, "b");
  EXPECT_EQ(lines[1].before_line, 2);
  EXPECT_EQ(lines[2].kind, LineKind::added);
  EXPECT_EQ(lines[2].after_line, 2);
  EXPECT_EQ(lines[4].text, "d");
  EXPECT_EQ(lines[4].after_line, 4);
  auto c = count_lines(lines);
  EXPECT_EQ(c.added, 2u);
  EXPECT_EQ(c.removed, 1u);
  EXPECT_EQ(c.same, 2u);
}

TEST(DiffModel, FoldsLongUnchangedRunsKeepingContext) {
  auto lines = diff_lines(numbered(1, 30), numbered(1, 30, 15));
  auto sections = fold_unchanged(lines, 3);
  // folded 1-11, shown 12-14 + the change + 16-18, folded 19-30
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_TRUE(sections[0].folded);
  EXPECT_EQ(sections[0].count, 11u);
  EXPECT_FALSE(sections[1].folded);
  EXPECT_EQ(sections[1].count, 3u + 2u + 3u);
  EXPECT_TRUE(sections[2].folded);
  EXPECT_EQ(sections[2].count, 12u);
  size_t total = 0;
  for (const auto& s : sections) total += s.count;
  EXPECT_EQ(total, lines.size());  // every line is in exactly one section
  // A run no longer than the context around it is not folded.
  auto short_lines = diff_lines(numbered(1, 5), numbered(1, 5, 3));
  auto short_sections = fold_unchanged(short_lines, 3);
  ASSERT_EQ(short_sections.size(), 1u);
  EXPECT_FALSE(short_sections[0].folded);
  // Equal texts fold entirely.
  auto same = fold_unchanged(diff_lines(numbered(1, 9), numbered(1, 9)), 3);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_TRUE(same[0].folded);
}

TEST(DiffModel, SideBySidePairsRemovalsWithAdditions) {
  auto lines = diff_lines("a\nb\nc\nz\n", "a\nB\nC\nD\nz\n");
  auto rows = side_by_side(lines, 0, lines.size());
  ASSERT_EQ(rows.size(), 5u);  // a | a, b | B, c | C, - | D, z | z
  EXPECT_EQ(lines[static_cast<size_t>(rows[1].left)].text, "b");
  EXPECT_EQ(lines[static_cast<size_t>(rows[1].right)].text, "B");
  EXPECT_EQ(rows[3].left, -1);
  EXPECT_EQ(lines[static_cast<size_t>(rows[3].right)].text, "D");
  EXPECT_EQ(lines[static_cast<size_t>(rows[4].left)].text, "z");
}

TEST(DiffModel, HoveredValueAndItsDefinitionAndUses) {
  std::string line = "  <f32> $12 = mul $1 $123";
  EXPECT_EQ(value_at(line, 8), "$12");   // on the `$`
  EXPECT_EQ(value_at(line, 10), "$12");  // on the last digit
  EXPECT_EQ(value_at(line, 11), std::nullopt);
  EXPECT_EQ(value_at(line, 19), "$1");
  EXPECT_EQ(value_at(line, 23), "$123");
  EXPECT_EQ(value_at(line, 2), std::nullopt);
  EXPECT_EQ(value_at(line, 99), std::nullopt);
  EXPECT_EQ(value_role(line, "$12"), ValueRole::definition);
  EXPECT_EQ(value_role(line, "$1"), ValueRole::use);  // not the $1 of $12 or $123
  EXPECT_EQ(value_role(line, "$123"), ValueRole::use);
  EXPECT_EQ(value_role(line, "$2"), ValueRole::none);
  EXPECT_EQ(value_role("  $4 : for in range($1, $2) {", "$4"), ValueRole::definition);
  EXPECT_EQ(value_role("  $19 : global store [$6 <- $14]", "$14"), ValueRole::use);
  EXPECT_EQ(value_role("  $19 : global store [$6 <- $14]", "$1"), ValueRole::none);
}

TEST(Timeline, RowsFromRecords) {
  Workspace ws;
  ASSERT_FALSE(ws.set_source_text(R"(field y : f32[]
kernel {
  <f32> $0 = const 2
  <f32> $1 = const 3
  <f32> $2 = mul $0 $1
  <f32> $3 = const 7
  <*f32> $4 = global ptr [y], index [] activate=true
  $5 : global store [$4 <- $2]
}
)"));
  ws.set_pipeline("dce,dce,simplify");
  auto rows = timeline_rows(ws.replay().run);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].status, PassStatus::changed);  // the unused const 7
  EXPECT_EQ(rows[0].statement_delta(), -1);
  EXPECT_NE(rows[0].stats.find("removed=1"), std::string::npos) << rows[0].stats;
  EXPECT_EQ(rows[1].status, PassStatus::unchanged);
  EXPECT_EQ(rows[1].verdict, "ok");
  EXPECT_EQ(rows[2].status, PassStatus::changed);  // 2 * 3 folds
  EXPECT_EQ(first_interesting_row(rows), 0u);

  pb::passes::PipelineRun failed;
  failed.records.resize(3);
  failed.records[0].ran = true;
  failed.records[1].ran = true;
  failed.records[1].failure = "the pass produced IR the verifier rejects: $3 is used before it is defined\nmore";
  auto failed_rows = timeline_rows(failed);
  EXPECT_EQ(failed_rows[1].status, PassStatus::failed);
  EXPECT_EQ(failed_rows[1].verdict, "the pass produced IR the verifier rejects: $3 is used before it is defined");
  EXPECT_EQ(failed_rows[2].status, PassStatus::not_run);
  EXPECT_EQ(first_interesting_row(failed_rows), 1u);
}

TEST(ChartScale, LinearAxisIncludesTheThreshold) {
  std::vector<double> ids = {138, 138, 147};
  AxisScale a = fit_axis(ids, false, 139.0);
  EXPECT_EQ(a.min, 0);
  EXPECT_GE(a.max, 147);
  EXPECT_LT(a.to_unit(139), a.to_unit(147));
  EXPECT_DOUBLE_EQ(a.to_unit(0), 0);
  EXPECT_DOUBLE_EQ(a.to_unit(a.max), 1);
  // The default bound dwarfs the module, but stays on the chart, inside the plot.
  AxisScale big = fit_axis(ids, false, 4194303.0);
  EXPECT_GT(big.max, 4194303);
  EXPECT_LT(big.to_unit(4194303), 1);
  auto ticks = big.ticks();
  EXPECT_GE(ticks.size(), 2u);
  EXPECT_LE(ticks.size(), 8u);
}

TEST(ChartScale, LogAxisUsesWholeDecades) {
  std::vector<double> ids = {138, 231, 0};
  AxisScale a = fit_axis(ids, true, 4194303.0);
  EXPECT_EQ(a.min, 100);
  EXPECT_EQ(a.max, 1e7);
  EXPECT_NEAR(a.to_unit(1000), 1.0 / 5, 1e-12);
  EXPECT_EQ(a.to_unit(0), 0);  // log of nothing: the floor
  EXPECT_EQ(a.ticks().front(), 100);
  EXPECT_EQ(a.ticks().back(), 1e7);
  AxisScale empty = fit_axis(std::vector<double>{}, true);
  EXPECT_EQ(empty.min, 1);
  EXPECT_EQ(empty.max, 10);
  EXPECT_EQ(short_number(4194303), "4.19M");
  EXPECT_EQ(short_number(12500), "12.5k");
  EXPECT_EQ(short_number(830), "830");
}

TEST(FixtureListState, OutcomesAndFilters) {
  FixtureList list;
  list.set_paths({"f/a.fixture.json", "f/b.fixture.json", "g/c.fixture.json"});
  EXPECT_EQ(list.count(FixtureState::pending), 3u);
  EXPECT_FALSE(list.first_failed());
  FixtureOutcome pass{"f/a.fixture.json", true, {}, false};
  FixtureOutcome fail{"g/c.fixture.json", false, {"ir differs:\n-a\n+b"}, false};
  list.set_outcome(0, pass);
  list.set_outcome(2, fail);
  EXPECT_EQ(list.count(FixtureState::passed), 1u);
  EXPECT_EQ(list.count(FixtureState::failed), 1u);
  EXPECT_EQ(list.count(FixtureState::pending), 1u);
  EXPECT_EQ(list.first_failed(), 2u);
  EXPECT_EQ(list.entries()[2].failures.size(), 1u);
  FixtureFilter all;
  EXPECT_EQ(list.visible(all).size(), 3u);
  FixtureFilter failed_only{"", false, true, false};
  EXPECT_EQ(list.visible(failed_only), std::vector<size_t>({2}));
  FixtureFilter text{"f/", true, true, true};
  EXPECT_EQ(list.visible(text), std::vector<size_t>({0, 1}));
  EXPECT_THROW(list.set_outcome(5, pass), std::out_of_range);
}

TEST(WorkerThread, RunsReportsAndCancels) {
  Worker worker;
  std::atomic<bool> started{false};
  ASSERT_TRUE(worker.start("spin", [&](WorkControl& c) {
    c.report("spin", "waiting", 1, 4);
    started = true;
    for (;;) c.check();  // until cancelled
  }));
  EXPECT_FALSE(worker.start("second", [](WorkControl&) {}));  // one job at a time
  while (!started) std::this_thread::yield();
  EXPECT_TRUE(worker.busy());
  EXPECT_EQ(worker.progress().done, 1u);
  EXPECT_DOUBLE_EQ(worker.progress().fraction(), 0.25);
  worker.cancel();
  worker.wait();
  EXPECT_FALSE(worker.busy());
  EXPECT_TRUE(worker.last_cancelled());

  ASSERT_TRUE(worker.start("fails", [](WorkControl&) { throw pb::UserError("no such field 'q'", "check the name"); }));
  while (!worker.poll()) std::this_thread::yield();
  EXPECT_FALSE(worker.last_cancelled());
  EXPECT_NE(worker.last_error().find("no such field 'q'"), std::string::npos) << worker.last_error();
  EXPECT_FALSE(worker.poll());  // already joined
}
