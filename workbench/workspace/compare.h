// Comparing what backends produced for one request with the reference interpreter's result:
// every output of the request (fields with their gradient and dual fields, ndarrays with their
// gradient and dual arrays, sparse activity, returned values, and each stack's deepest depth when
// the request asks for stack usage). A comparison counts the values it compared; one that
// compared nothing did not pass.
#pragma once

#include <string>
#include <vector>

#include "ir/type.h"
#include "runtime/core/execution.h"
#include "workbench/workspace/execute.h"

namespace pb::workbench {

// One row of a comparison: an array on one backend against the interpreter's.
struct BackendDiff {
  Backend backend = Backend::interp;
  std::string array;  // "y", "x_grad", "x_dual", "arg1", "arg1_grad", "return[0]", "stack $12 (deepest)"
  ir::ScalarKind dtype = ir::ScalarKind::f32;
  size_t elements = 0;  // compared
  double max_abs = 0;
  double max_rel = 0;  // |a - b| / max(|a|, |b|), 0 when both are 0; NaN/inf mismatches count as inf
  double tolerance = 0;
  bool ok = true;
  std::string error;     // the backend failed to run, or the array is missing there (then no elements)
  bool refused = false;  // the backend refused the request (error says what)
  std::string note;      // an output this backend does not produce, and why (not a failure)
};

struct Tolerances {
  double f32 = 1e-5;  // relative
  double f64 = 1e-12;
  double f16 = 2e-3;  // two f16 ulps (2^-10 each) at 1.0
};

// Which outputs beyond arrays and returned values a comparison covers.
struct CompareParts {
  bool stack_usage = false;  // each stack's deepest depth (the request asked for stack usage)
  bool printed = true;       // print statements' lines, as a multiset (parallel iterations print in any order)
};

// Rows of `got` (from backend `b`) against `want` (the interpreter's), every output of the request.
std::vector<BackendDiff> diff_executions(Backend b, const runtime::ExecutionResult& want,
                                         const runtime::ExecutionResult& got, const Tolerances& tol,
                                         const CompareParts& parts);
// The parts backend `b` can be compared on for request `p`.
CompareParts compare_parts(Backend b, const PreparedRequest& p, const BackendOptions& o);

// A row for a backend that failed to run (refused = it refused part of the request).
BackendDiff failed_row(Backend b, const std::string& message, bool refused = false);

struct Comparison {
  std::vector<BackendDiff> rows;
  std::vector<TimedLaunch> launches;  // every launch, the interpreter's first
  size_t values_compared = 0;
  bool passed() const;  // every row ok and something compared
};

// Carries out `p` on the interpreter and on each of `backends` (interp itself is skipped) and
// tabulates every output against the interpreter's. An interpreter failure throws as execute_on
// does; a backend's failure or refusal is its row.
Comparison compare_backends(const PreparedRequest& p, const std::vector<Backend>& backends, const BackendOptions& o,
                            const Tolerances& tol);

// The rows as a fixed-width table, then one summary line ("compared 24 values in 6 arrays on cpu,
// vulkan: all equal" / "... 2 arrays differ" / "nothing compared").
std::string format_backend_table(const std::vector<BackendDiff>& rows);
std::string comparison_summary(const std::vector<BackendDiff>& rows);

}  // namespace pb::workbench
