#include "workbench/workspace/fixture_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "codegen/spirv/options.h"
#include "ir/diagnostic.h"

namespace pb::workbench {

namespace {

constexpr const char* kBoundForms =
    "write a bound as \"<= 400\", \"< 400\", \">= 1\", \"> 0\", \"== 12\" or a number (==)";

std::string names_list() {
  std::string s;
  for (const auto& n : metric_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

MetricBound parse_bound(const std::string& metric, const nlohmann::ordered_json& v) {
  const auto& names = metric_names();
  if (std::find(names.begin(), names.end(), metric) == names.end())
    throw UserError(fmt::format("expect.metrics: unknown metric '{}'", metric), "known metrics: " + names_list());
  MetricBound b{metric, "==", 0};
  if (v.is_number()) {
    b.value = v.get<double>();
    return b;
  }
  if (!v.is_string())
    throw UserError(fmt::format("expect.metrics.{}: {} is not a bound", metric, v.dump()), kBoundForms);
  std::string text = trim(v.get<std::string>());
  for (const char* op : {"<=", ">=", "==", "<", ">"}) {
    if (!text.starts_with(op)) continue;
    b.op = op;
    std::string number = trim(std::string_view(text).substr(b.op.size()));
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), b.value);
    if (ec == std::errc() && end == number.data() + number.size() && !number.empty()) return b;
    break;
  }
  throw UserError(fmt::format("expect.metrics.{}: cannot read the bound \"{}\"", metric, text), kBoundForms);
}

bool holds(const MetricBound& b, double got) {
  if (b.op == "<=") return got <= b.value;
  if (b.op == "<") return got < b.value;
  if (b.op == ">=") return got >= b.value;
  if (b.op == ">") return got > b.value;
  return got == b.value;
}

}  // namespace

std::vector<MetricBound> parse_metric_bounds(const nlohmann::ordered_json& metrics) {
  if (!metrics.is_object())
    throw UserError("expect.metrics must be an object of metric bounds", "e.g. {\"msl.lines\": \"<= 400\"}");
  std::vector<MetricBound> out;
  for (const auto& [name, v] : metrics.items()) out.push_back(parse_bound(name, v));
  return out;
}

CompileRequest fixture_compile_request(const nlohmann::ordered_json& compile, const std::vector<MetricBound>& bounds) {
  CompileRequest r;
  if (!compile.is_null() && !compile.is_object())
    throw UserError("\"compile\" must be an object",
                    "e.g. {\"lowering\": \"count=per-stack\", \"max_id_bound\": 5000}");
  if (compile.is_object()) {
    for (const auto& [key, v] : compile.items()) {
      if (key == "lowering" && v.is_string()) {
        r.lowering = codegen::spirv::parse_lowering(v.get<std::string>());
      } else if (key == "max_id_bound" && v.is_number_unsigned() && v.get<uint64_t>() <= UINT32_MAX) {
        r.optimizer.max_id_bound = v.get<uint32_t>();
      } else if (key == "intermediate_dce" && v.is_boolean()) {
        r.optimizer.intermediate_dce = v.get<bool>();
      } else if (key == "compact_ids" && v.is_boolean()) {
        r.optimizer.compact_ids = v.get<bool>();
      } else {
        throw UserError(
            fmt::format("compile.{}: unknown key or bad value {}", key, v.dump()),
            "keys: lowering (string), max_id_bound (up to 4294967295), intermediate_dce, compact_ids (booleans)");
      }
    }
  }
  auto names = [&](const char* prefix) {
    return std::any_of(bounds.begin(), bounds.end(),
                       [&](const MetricBound& b) { return b.metric.starts_with(prefix); });
  };
  r.optimizer.measure_passes = names("spirv.peak_id_bound");
  r.msl = names("msl.");
  r.glsl = names("glsl.");
  return r;
}

std::vector<std::string> check_metric_bounds(const std::vector<MetricBound>& bounds, const KernelCompile& result) {
  if (const auto& error = result.error)
    return {fmt::format("metrics: compiling under {} failed ({}):\n  {}",
                        result.lowering.empty() ? "the lowering" : result.lowering, error->stage, error->message)};
  std::vector<std::string> failures;
  auto values = metric_values(result.metrics);
  for (const auto& b : bounds) {
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == b.metric; });
    if (it == values.end()) {
      failures.push_back(
          fmt::format("metrics: {} is not defined for this kernel (it has no stack pushes), expected {} {:g}", b.metric,
                      b.op, b.value));
    } else if (!holds(b, it->second)) {
      failures.push_back(fmt::format("metrics: {} = {:g} under {}, expected {} {:g}", b.metric, it->second,
                                     result.lowering, b.op, b.value));
    }
  }
  return failures;
}

}  // namespace pb::workbench
