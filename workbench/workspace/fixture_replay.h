// Internal to the fixture room (fixture.cpp): what replaying one fixture produced, and the checks
// that live beside it (fixture_forward.cpp: forward mode and the global data access rule).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "passes/pass.h"

namespace pb::workbench::detail {

// What replaying a fixture produced, stage by stage.
struct Replay {
  std::string error_stage;                          // "", "parse", "verify", "pass" or "run"
  std::string error;                                // the diagnostic's location and message (no file path)
  std::string error_pass;                           // the failing pass, for stage "pass"
  std::map<std::string, std::string> ir_after;      // "simplify" (first run) or "simplify#2" -> text
  std::map<std::string, passes::Statistics> stats;  // same keys
  std::vector<std::string> warnings;                // the pipeline's, "pass: message", in order
  std::vector<std::string> differential_failures;
  std::vector<std::string> gradcheck_failures;
  std::optional<std::string> ir;
  std::vector<std::string> verify_errors;
  std::optional<nlohmann::json> values;
  std::optional<std::string> printed;
  std::vector<std::string> roundtrip_failures;
  std::vector<std::string> metric_failures;     // expect.metrics not met, or not readable
  std::vector<std::string> coverage_failures;   // stacks the run never pushed
  std::optional<nlohmann::json> global_access;  // {"static": verdict, "dynamic": verdict}
};

// "line:col: message" for a located diagnostic, else its message (no file path).
std::string located_message(const UserError& e);
// The fixture's inputs: "inputs_file" (relative to `dir`), "inputs", or an empty object.
nlohmann::json fixture_inputs(const nlohmann::ordered_json& fx, const std::filesystem::path& dir);

void forward_checks(const ir::Kernel& forward, const std::string& pipeline, const nlohmann::ordered_json& fx,
                    const std::filesystem::path& dir, Replay& r);
void global_access_checks(const ir::Kernel& k, const nlohmann::ordered_json& fx, const std::filesystem::path& dir,
                          Replay& r);

}  // namespace pb::workbench::detail
