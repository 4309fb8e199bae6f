#include "workbench/gui/chart.h"

#include <algorithm>

#include "workbench/gui/logic/chart_scale.h"

namespace pb::workbench::gui {

int draw_chart(const char* id, ImVec2 size, const std::vector<ChartSeries>& series, const ChartOptions& options) {
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  ImGui::PushID(id);
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("chart", size);
  bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float left = 56, right = 12, top = 24, bottom = 22;
  ImVec2 p0(origin.x + left, origin.y + top), p1(origin.x + size.x - right, origin.y + size.y - bottom);
  draw->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), IM_COL32(28, 28, 34, 255));
  draw->AddRect(p0, p1, IM_COL32(90, 90, 100, 255));

  std::vector<double> all;
  for (const auto& s : series) all.insert(all.end(), s.values.begin(), s.values.end());
  AxisScale axis = fit_axis(all, options.log_scale, options.threshold);
  auto y_of = [&](double v) { return p1.y - static_cast<float>(axis.to_unit(v)) * (p1.y - p0.y); };
  for (double t : axis.ticks()) {
    float y = y_of(t);
    draw->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), IM_COL32(60, 60, 70, 255));
    std::string label = short_number(t);
    ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    draw->AddText(ImVec2(p0.x - ts.x - 4, y - ts.y / 2), IM_COL32(170, 170, 180, 255), label.c_str());
  }

  size_t n = options.x_labels.size();
  for (const auto& s : series) n = std::max(n, s.values.size());
  float slot = n ? (p1.x - p0.x) / static_cast<float>(n) : 0;
  auto x_of = [&](size_t i) { return p0.x + slot * (static_cast<float>(i) + 0.5f); };

  if (options.highlight >= 0 && static_cast<size_t>(options.highlight) < n) {
    float x = x_of(static_cast<size_t>(options.highlight));
    draw->AddRectFilled(ImVec2(x - slot / 2, p0.y), ImVec2(x + slot / 2, p1.y), IM_COL32(70, 70, 90, 255));
  }
  for (size_t si = 0; si < series.size(); ++si) {
    const auto& s = series[si];
    if (options.bars) {
      float group = slot * 0.8f, bar = group / static_cast<float>(std::max<size_t>(1, series.size()));
      for (size_t i = 0; i < s.values.size(); ++i) {
        float x = x_of(i) - group / 2 + bar * static_cast<float>(si);
        draw->AddRectFilled(ImVec2(x + 1, y_of(s.values[i])), ImVec2(x + bar - 1, p1.y), s.color);
        std::string label = short_number(s.values[i]);
        draw->AddText(ImVec2(x + 2, y_of(s.values[i]) - ImGui::GetTextLineHeight()), IM_COL32(220, 220, 220, 255),
                      label.c_str());
      }
    } else {
      for (size_t i = 0; i + 1 < s.values.size(); ++i)
        draw->AddLine(ImVec2(x_of(i), y_of(s.values[i])), ImVec2(x_of(i + 1), y_of(s.values[i + 1])), s.color, 2.0f);
      for (size_t i = 0; i < s.values.size(); ++i)
        draw->AddCircleFilled(ImVec2(x_of(i), y_of(s.values[i])), 3, s.color);
    }
  }
  if (options.threshold) {
    float y = y_of(*options.threshold);
    draw->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), kThresholdColor, 2.0f);
    draw->AddText(ImVec2(p0.x + 4, y - ImGui::GetTextLineHeight() - 1), kThresholdColor,
                  options.threshold_label.c_str());
  }
  // x labels: as many as fit without overlapping, each centred under its slot (index numbers
  // when options.index_labels; the full label is in the tooltip).
  float free_x = p0.x;
  for (size_t i = 0; i < n; ++i) {
    std::string label = options.index_labels || i >= options.x_labels.size() ? std::to_string(i) : options.x_labels[i];
    ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    float x = x_of(i) - ts.x / 2;
    if (x < free_x) continue;
    draw->AddText(ImVec2(x, p1.y + 4), IM_COL32(170, 170, 180, 255), label.c_str());
    free_x = x + ts.x + 8;
  }
  // Legend.
  float lx = p1.x;
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    ImVec2 ts = ImGui::CalcTextSize(it->name.c_str());
    lx -= ts.x + 18;
    draw->AddRectFilled(ImVec2(lx, origin.y + 6), ImVec2(lx + 10, origin.y + 16), it->color);
    draw->AddText(ImVec2(lx + 13, origin.y + 4), IM_COL32(220, 220, 220, 255), it->name.c_str());
  }
  int under = -1;
  if (hovered && slot > 0) {
    float mx = ImGui::GetIO().MousePos.x;
    int i = static_cast<int>((mx - p0.x) / slot);
    if (i >= 0 && static_cast<size_t>(i) < n) {
      under = i;
      ImGui::BeginTooltip();
      if (static_cast<size_t>(i) < options.x_labels.size()) ImGui::TextUnformatted(options.x_labels[i].c_str());
      for (const auto& s : series)
        if (static_cast<size_t>(i) < s.values.size()) ImGui::Text("%s: %.0f", s.name.c_str(), s.values[i]);
      ImGui::EndTooltip();
    }
  }
  ImGui::PopID();
  return under;
}

}  // namespace pb::workbench::gui
