// Runs a pipeline on a kernel and records, for every pass execution, what happened: the data the
// CLI prints (--print-after, --time-passes, --stats) and the GUI displays, without re-running.
// A pass that throws, trips an internal assertion, or leaves IR the verifier rejects stops the
// run; the record says which pass and why, with the IR before it for a reproducer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "passes/pipeline.h"

namespace pb::passes {

struct PassRecord {
  size_t index = 0;  // position in the pipeline
  std::string pass;  // the pass's name
  std::string spec;  // the entry as pipeline text, options included
  bool ran = false;  // false when skipped (bisect limit, stop-after)
  bool changed = false;
  double wall_ms = 0;
  size_t statements_before = 0;
  size_t statements_after = 0;
  Statistics stats;
  std::vector<std::string> notes;          // the pass's per-item findings (PassResult::notes)
  std::vector<std::string> warnings;       // PassResult::warnings
  std::vector<std::string> verify_errors;  // after the pass; empty when it verified or was not checked
  std::string failure;                     // non-empty when the pass failed (exception or verifier)
  bool internal_error = false;             // the failure was a broken invariant, not a user error
  bool rule_violation = false;             // the failure was a RuleViolation (a check failed)
  // Canonical text before/after the pass and the kernels themselves (RunOptions::capture says when).
  std::string before_text;
  std::string after_text;
  std::shared_ptr<const ir::Kernel> before;
  std::shared_ptr<const ir::Kernel> after;
};

// Which passes' IR a run keeps in their records (before/after, kernels and text).
enum class Capture {
  all,      // every pass's: for printing, the GUI's timeline and fixtures' expected IR
  failure,  // only the failing pass's (for its diff and reproducer), rebuilt from a copy of the input
  none,
};

struct RunOptions {
  // Verify after each entry as written, a named pipeline (reverse_ad) once after its last pass; a
  // failure inside one is traced to the pass that made the IR invalid by running it again with
  // verify_expanded. verify_expanded: verify after every pass a named pipeline expands to.
  bool verify_each = true;
  bool verify_expanded = false;
  // Makes the pipeline's input again, for what needs it only after a failure (Capture::failure,
  // tracing a failure inside a named pipeline); without it the run keeps a copy of the input.
  std::function<std::unique_ptr<ir::Kernel>()> rebuild_input;
  Capture capture = Capture::all;
  int64_t bisect_limit = -1;  // run only the first N pass executions (-1: all)
  std::string stop_after;     // stop after the first execution of this pass
};

struct PipelineRun {
  std::vector<PassRecord> records;
  bool failed = false;
  size_t failed_index = 0;  // index into records when failed
  double total_ms = 0;
  // The pipeline text from the failing pass to the end (for reproducers).
  std::string remaining_pipeline;
};

PipelineRun run_pipeline(ir::Kernel& k, const Pipeline& pipeline, const RunOptions& opts = {});

}  // namespace pb::passes
