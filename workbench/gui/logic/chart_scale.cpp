#include "workbench/gui/logic/chart_scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pb::workbench::gui {

namespace {
double nice_step(double range, int target_ticks) {
  double raw = range / std::max(1, target_ticks);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}
}  // namespace

double AxisScale::to_unit(double v) const {
  double u;
  if (log) {
    if (v <= 0) return 0;
    u = (std::log10(v) - std::log10(min)) / (std::log10(max) - std::log10(min));
  } else {
    u = (v - min) / (max - min);
  }
  return std::clamp(u, 0.0, 1.0);
}

std::vector<double> AxisScale::ticks() const {
  std::vector<double> out;
  if (log) {
    int lo = static_cast<int>(std::round(std::log10(min))), hi = static_cast<int>(std::round(std::log10(max)));
    int stride = std::max(1, (hi - lo + 5) / 6);
    for (int e = lo; e <= hi; e += stride) out.push_back(std::pow(10.0, e));
    return out;
  }
  double step = nice_step(max - min, 5);
  for (double t = std::ceil(min / step) * step; t <= max + step * 1e-9; t += step) out.push_back(t);
  return out;
}

AxisScale fit_axis(std::span<const double> values, bool log, std::optional<double> threshold) {
  AxisScale s;
  s.log = log;
  std::vector<double> all(values.begin(), values.end());
  if (threshold) all.push_back(*threshold);
  if (log) {
    double lo = INFINITY, hi = 0;
    for (double v : all)
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (hi == 0) {
      s.min = 1, s.max = 10;
      return s;
    }
    s.min = std::pow(10.0, std::floor(std::log10(lo)));
    s.max = std::pow(10.0, std::ceil(std::log10(hi)));
    if (s.max <= s.min) s.max = s.min * 10;
    return s;
  }
  double lo = 0, hi = 0;
  for (double v : all)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= lo) hi = lo + 1;
  double step = nice_step(hi - lo, 5);
  s.min = std::floor(lo / step) * step;
  s.max = std::ceil(hi / step) * step;
  if (threshold && s.max <= *threshold) s.max += step;  // keep the line inside the plot, not on its edge
  return s;
}

std::string short_number(double v) {
  double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:.3g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

}  // namespace pb::workbench::gui
