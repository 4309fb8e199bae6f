// `fixture check --backend`: a fixture's own request (its run, its gradient run or its tangent
// run, with the fixture's seeds and run options) carried out on each backend and compared with
// the interpreter's result, every output of the request. What a fixture declares is what is
// skipped: a negative fixture failing before the run, a fixture with nothing to run, a backend
// whose difference the fixture declares without anything left to compare. Any other error fails.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "workbench/workspace/compare.h"

namespace pb::workbench {

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
  bool skips() const { return !reason.empty() && ignore.empty() && !rtol && expect.empty(); }
};
KnownDifference known_difference(const nlohmann::json& fixture, Backend b);

// Why a fixture runs on no backend at all, from what it declares ("" = it runs): a negative
// fixture whose expected error comes before the run, or one without inputs.
std::string fixture_backend_exemption(const nlohmann::json& fixture);

// The fixture's kernel as every command reads it (`kernel_text`, or the file `kernel` beside the
// fixture: a dump, a header-less layout, JSON). Throws UserError when it does not parse or verify.
std::unique_ptr<ir::Kernel> fixture_kernel(const nlohmann::json& fixture, const std::string& fixture_path);

// The arrays whose values change when the interpreter runs each parallel loop's iterations in
// another order (seeds 1..8) than `want` (the interpreter's in-order result of `p`): results a
// parallel backend may give otherwise from run to run. A fixture must declare them
// (backends.B.ignore), so that no verdict depends on thread timing.
std::vector<std::string> order_dependent_arrays(const PreparedRequest& p, const runtime::ExecutionResult& want,
                                                const Tolerances& tol);

struct FixtureBackendOutcome {
  bool passed = true;
  std::vector<std::string> skipped;  // per backend or for all: what was not run, and why
  std::vector<BackendDiff> rows;
  size_t values_compared = 0;
};
FixtureBackendOutcome check_fixture_on_backends(const std::string& path, const std::vector<Backend>& backends,
                                                const BackendOptions& o, const Tolerances& tol);

}  // namespace pb::workbench
