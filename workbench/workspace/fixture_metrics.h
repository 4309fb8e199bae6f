// Code-size bounds in fixtures: a fixture's "compile" object says how to compile the kernel
// (after its pipeline) and "expect.metrics" bounds the kernel-wide metrics of compile.h, e.g.
// {"msl.lines": "<= 400", "spirv.final_id_bound": "<= 2000"}. Schema in docs/fixtures.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workbench/workspace/compile.h"

namespace pb::workbench {

struct MetricBound {
  std::string metric;  // a name from metric_names()
  std::string op;      // "<=", "<", ">=", ">", "=="
  double value = 0;
};

// Parses "expect.metrics": each value is "OP NUMBER" (OP one of <= < >= > ==) or a bare number
// (meaning ==). Throws UserError naming the bad entry and the accepted forms.
std::vector<MetricBound> parse_metric_bounds(const nlohmann::ordered_json& metrics);

// The request a fixture's "compile" object describes ({"lowering": "count=per-stack,...",
// "max_id_bound": N, "intermediate_dce": bool, "compact_ids": bool}; all optional). MSL (GLSL) is
// cross-compiled only when a bound names an msl. (glsl.) metric. Throws UserError on unknown keys or values.
CompileRequest fixture_compile_request(const nlohmann::ordered_json& compile, const std::vector<MetricBound>& bounds);

// One message per bound that `result` does not meet ("msl.lines = 512, expected <= 400"); a
// failed compile is one message with its error.
std::vector<std::string> check_metric_bounds(const std::vector<MetricBound>& bounds, const KernelCompile& result);

}  // namespace pb::workbench
