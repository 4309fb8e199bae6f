// The rows of the Pass timeline: one per pass of the pipeline, from the workspace's records, in
// the form the panel shows them (Compiler Explorer marks the passes that changed the IR).
#pragma once

#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace pb::workbench::gui {

enum class PassStatus { changed, unchanged, failed, not_run };
const char* status_label(PassStatus s);  // "changed", "unchanged", "FAILED", "not run"

struct TimelineRow {
  size_t index = 0;
  std::string spec;  // the pass as pipeline text
  PassStatus status = PassStatus::not_run;
  double ms = 0;
  size_t statements_before = 0, statements_after = 0;
  std::string verdict;  // "ok", "not checked", or the verifier's / the pass's first error line
  std::string stats;    // "removed=3, allocas_removed=0"
  long long statement_delta() const {
    return static_cast<long long>(statements_after) - static_cast<long long>(statements_before);
  }
};

std::vector<TimelineRow> timeline_rows(const passes::PipelineRun& run);

// The row to select first: the first pass that failed, else the first that changed, else 0.
size_t first_interesting_row(const std::vector<TimelineRow>& rows);

}  // namespace pb::workbench::gui
