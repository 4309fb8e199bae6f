// Running kernels on a chosen backend and comparing backends with the reference interpreter.
// One switch (run_state_on) dispatches a kernel and a state to the interpreter, the LLVM CPU JIT
// (runtime/cpu) or Vulkan (runtime/vulkan); `run --backend`, the comparison table and `fixture check --backend` all go
// through it, so a new backend is one enum value and one case there.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/kernel.h"
#include "runtime/interp/state.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

// Backend and backend_name are in run.h.
// "interp", "cpu", "vulkan", or several separated by commas; "all" gives every backend. Throws
// UserError naming the choices.
std::vector<Backend> parse_backends(std::string_view text);

struct BackendOptions {
  std::string device;  // Vulkan: a substring of the device name ("" = the first device)
  runtime::RunOptions interp;
};

// How long one launch took: the kernel alone (Vulkan: timestamp queries) and the whole launch
// with its copies (host wall time). The interpreter has only the wall time.
struct LaunchTime {
  Backend backend = Backend::interp;
  std::string kernel;
  std::string device;  // Vulkan: the device's name
  double kernel_ms = 0;
  double launch_ms = 0;
  bool timed = false;               // kernel_ms is from timestamps
  std::vector<ir::Value> returned;  // cpu, vulkan: the values of the kernel's last `return`
  std::string printed;              // interp, cpu: what the kernel's print statements wrote
};

// Runs `k` against `state` on `b`; a run-time error of the kernel (overflow, assert) is a
// RunFailure naming the backend, anything the backend cannot do a UserError.
LaunchTime run_state_on(Backend b, const ir::Kernel& k, runtime::State& state, const BackendOptions& o);

// `passbench run` on a backend: forward only, or with `pipeline` forward then seeded reverse.
// `values` is runtime::state_to_json of the final state.
struct BackendRun {
  nlohmann::json values;
  std::vector<LaunchTime> launches;
};
BackendRun run_on_backend(Backend b, const ir::Kernel& k, const RunRequest& req, const std::string* pipeline,
                          const BackendOptions& o);

// One row of a comparison: a field, gradient field or ndarray on one backend against the
// interpreter, or a sparse space's cell activity ("S1pointer (cells)").
struct BackendDiff {
  Backend backend = Backend::interp;
  std::string array;  // "y", "x_grad", "arg1"
  ir::ScalarKind dtype = ir::ScalarKind::f32;
  size_t elements = 0;
  double max_abs = 0;
  double max_rel = 0;  // |a - b| / max(|a|, |b|), 0 when both are 0; NaN/inf mismatches count as inf
  double tolerance = 0;
  bool ok = true;
  std::string error;  // the backend failed to run (then no diffs)
};

struct Tolerances {
  double f32 = 1e-5;  // relative
  double f64 = 1e-12;
};

// Runs the interpreter and each of `backends` from the same inputs (forward, or forward and
// reverse with `pipeline`) and tabulates every float or integer array against the interpreter.
// `launches`, when given, receives every launch's time (the interpreter's first).
std::vector<BackendDiff> compare_backends(const ir::Kernel& k, const RunRequest& req, const std::string* pipeline,
                                          const std::vector<Backend>& backends, const BackendOptions& o,
                                          const Tolerances& tol, std::vector<LaunchTime>* launches = nullptr);

// The rows as a fixed-width table.
std::string format_backend_table(const std::vector<BackendDiff>& rows);

// What a fixture says about a backend ("backends": {"vulkan": {...}}, docs/fixtures.md): a known
// difference with its reason; without `ignore`, `rtol` or `expect` the backend is not compared at
// all; `ignore` leaves arrays out; `rtol` replaces the relative tolerance; `expect` gives the
// values a field (or gradient field) must have on this backend, compared instead of the
// interpreter's.
struct KnownDifference {
  std::string reason;  // "" = none
  std::vector<std::string> ignore;
  std::optional<double> rtol;
  std::map<std::string, nlohmann::json> expect;  // field name -> data (flat or nested, as in inputs)
};
KnownDifference known_difference(const nlohmann::json& fixture, Backend b);

// `fixture check --backend`: the fixture's kernel after its pipeline, on its inputs and gradient
// seeds, on each backend against the interpreter. Fixtures without inputs, negative fixtures and
// those the interpreter rejects are `skipped` with the reason.
struct FixtureBackendOutcome {
  bool passed = true;
  std::string skipped;  // non-empty: not run, and why
  std::vector<BackendDiff> rows;
};
FixtureBackendOutcome check_fixture_on_backends(const std::string& path, const std::vector<Backend>& backends,
                                                const BackendOptions& o, const Tolerances& tol);

}  // namespace pb::workbench
