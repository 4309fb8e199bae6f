#include "workbench/gui/logic/timeline.h"

namespace pb::workbench::gui {

const char* status_label(PassStatus s) {
  switch (s) {
    case PassStatus::changed:
      return "changed";
    case PassStatus::unchanged:
      return "unchanged";
    case PassStatus::failed:
      return "FAILED";
    case PassStatus::not_run:
      return "not run";
  }
  return "?";
}

std::vector<TimelineRow> timeline_rows(const passes::PipelineRun& run) {
  std::vector<TimelineRow> rows;
  for (const auto& rec : run.records) {
    TimelineRow row;
    row.index = rec.index;
    row.spec = rec.spec;
    row.ms = rec.wall_ms;
    row.statements_before = rec.statements_before;
    row.statements_after = rec.statements_after;
    if (!rec.ran) {
      row.status = PassStatus::not_run;
      row.verdict = "not run";
    } else if (!rec.failure.empty()) {
      row.status = PassStatus::failed;
      row.verdict = rec.failure.substr(0, rec.failure.find('\n'));
    } else {
      row.status = rec.changed ? PassStatus::changed : PassStatus::unchanged;
      row.verdict = "ok";
    }
    for (const auto& [name, value] : rec.stats)
      row.stats += (row.stats.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    rows.push_back(std::move(row));
  }
  return rows;
}

size_t first_interesting_row(const std::vector<TimelineRow>& rows) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].status == PassStatus::failed) return i;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].status == PassStatus::changed) return i;
  return 0;
}

}  // namespace pb::workbench::gui
