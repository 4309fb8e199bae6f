// Comparisons used by fixture check: IR text (with a unified diff) and field values (with
// tolerances).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pb::workbench {

struct Tolerance {
  double rel = 1e-6;
  double abs = 1e-9;
};

// A unified diff (dtl) of two texts, or "" when they are equal.
std::string unified_diff(const std::string& expected, const std::string& actual,
                         const std::string& expected_label = "expected", const std::string& actual_label = "actual");

// Compares expected field values (a subset: only the fields and arrays named in `expected`)
// with `actual` (state_to_json output). Appends one message per mismatch.
void compare_values(const nlohmann::json& expected, const nlohmann::json& actual, const Tolerance& tol,
                    std::vector<std::string>& failures);

}  // namespace pb::workbench
