// The value axis of the chart widget, without drawing: fits a range to the data (and to a
// threshold line such as the 4,194,303 ID bound, so the line is always on the chart), maps values
// to 0..1 on a linear or log10 scale, and picks readable ticks.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pb::workbench::gui {

struct AxisScale {
  double min = 0, max = 1;
  bool log = false;
  // 0 at min, 1 at max (clamped); on a log scale values <= 0 map to 0.
  double to_unit(double v) const;
  std::vector<double> ticks() const;  // 2..7 values in [min, max]
};

// Linear: from 0 (or the smallest negative value) to the largest value and threshold, rounded up
// to a 1/2/5 step. Log: whole decades around the positive values. Empty input gives 0..1 (1..10 log).
AxisScale fit_axis(std::span<const double> values, bool log, std::optional<double> threshold = std::nullopt);

// "4.19M", "12.5k", "830": short labels for ticks and bars.
std::string short_number(double v);

}  // namespace pb::workbench::gui
