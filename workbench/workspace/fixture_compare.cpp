#include "workbench/workspace/fixture_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <dtl/dtl.hpp>
#include <sstream>

namespace pb::workbench {

namespace {
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
}  // namespace

std::string unified_diff(const std::string& expected, const std::string& actual, const std::string& expected_label,
                         const std::string& actual_label) {
  if (expected == actual) return "";
  auto a = split_lines(expected);
  auto b = split_lines(actual);
  dtl::Diff<std::string> d(a, b);
  d.compose();
  d.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- " << expected_label << "\n+++ " << actual_label << "\n";
  d.printUnifiedFormat(out);
  return out.str();
}

namespace {

bool close(double e, double a, const Tolerance& tol) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) return e == a;
  return std::fabs(a - e) <= tol.abs + tol.rel * std::fabs(e);
}

bool is_scalar(const nlohmann::json& v) { return v.is_number() || v.is_null() || v.is_boolean() || v.is_string(); }

double as_number(const nlohmann::json& v) {
  if (v.is_null()) return std::nan("");  // JSON has no NaN: null, or the strings below
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    return std::nan("");
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return v.get<double>();
}

void flatten(const nlohmann::json& v, std::vector<nlohmann::json>& out) {
  if (v.is_array())
    for (const auto& x : v) flatten(x, out);
  else
    out.push_back(v);
}

void compare_array(const std::string& what, const nlohmann::json& e, const nlohmann::json& a, const Tolerance& tol,
                   std::vector<std::string>& failures) {
  std::vector<nlohmann::json> ev, av;
  flatten(e, ev);
  flatten(a, av);
  if (ev.size() != av.size()) {
    failures.push_back(fmt::format("{}: expected {} values, got {}", what, ev.size(), av.size()));
    return;
  }
  int shown = 0;
  size_t bad = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (!is_scalar(ev[i]) || !is_scalar(av[i])) {
      failures.push_back(fmt::format("{}[{}]: not a number", what, i));
      return;
    }
    bool integers = ev[i].is_number_integer() && av[i].is_number_integer();
    double x = as_number(ev[i]), y = as_number(av[i]);
    if (integers ? ev[i] == av[i] : close(x, y, tol)) continue;  // integers compare exactly
    ++bad;
    if (shown++ < 5)
      failures.push_back(fmt::format("{}[{}]: expected {}, got {} (|diff| {:.3g}, tolerance abs {} rel {})", what, i,
                                     ev[i].dump(), av[i].dump(), std::fabs(x - y), tol.abs, tol.rel));
  }
  if (bad > 5) failures.push_back(fmt::format("{}: {} more mismatches", what, bad - 5));
}

}  // namespace

void compare_values(const nlohmann::json& expected, const nlohmann::json& actual, const Tolerance& tol,
                    std::vector<std::string>& failures) {
  for (const char* group : {"fields", "ndarrays"}) {
    if (!expected.contains(group)) continue;
    for (const auto& [name, exp] : expected[group].items()) {
      if (!actual.contains(group) || !actual[group].contains(name)) {
        failures.push_back(fmt::format("{} '{}' is missing from the run's output", group, name));
        continue;
      }
      const auto& act = actual[group][name];
      for (const char* part : {"data", "grad", "dual"}) {
        if (!exp.contains(part)) continue;
        if (!act.contains(part)) {
          failures.push_back(fmt::format("{}.{}: missing from the run's output", name, part));
          continue;
        }
        compare_array(fmt::format("{}.{}", name, part), exp[part], act[part], tol, failures);
      }
    }
  }
}

}  // namespace pb::workbench
