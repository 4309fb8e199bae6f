// One small chart widget drawn with ImGui draw lists (Debian packages no chart library for
// ImGui): line series over labelled x positions, or bars, on a linear or log value axis, with an
// optional horizontal threshold line (the SPIR-V ID bound). The axis comes from fit_axis.
#pragma once

#include <imgui.h>

#include <optional>
#include <string>
#include <vector>

namespace pb::workbench::gui {

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // one per x label
  ImU32 color = 0;
};

struct ChartOptions {
  std::vector<std::string> x_labels;
  bool log_scale = false;
  bool bars = false;
  bool index_labels = false;  // label the x axis with positions (0, 1, ...), names in tooltips  // bars (grouped by
                              // series) instead of lines
  std::optional<double> threshold;
  std::string threshold_label;
  int highlight = -1;  // x position drawn with a marker (the selected pass)
};

// Colours the screenshot tests look for (tests/workbench/gui_screenshot_test.cpp).
inline constexpr ImU32 kThresholdColor = IM_COL32(255, 140, 0, 255);
inline constexpr ImU32 kSeriesColors[] = {IM_COL32(80, 170, 255, 255), IM_COL32(120, 230, 120, 255),
                                          IM_COL32(230, 120, 230, 255), IM_COL32(230, 220, 90, 255)};

// Draws into a region of `size` (x <= 0: the available width); returns the x position under the
// mouse, or -1.
int draw_chart(const char* id, ImVec2 size, const std::vector<ChartSeries>& series, const ChartOptions& options);

}  // namespace pb::workbench::gui
