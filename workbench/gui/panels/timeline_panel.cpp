// Pass timeline: one row per pass (changed or not, time, statements before/after, verifier
// verdict, statistics); the selected pass's IR diff, side by side or unified, changed lines
// coloured and long unchanged runs folded.
#include <imgui.h>

#include <optional>

#include "workbench/gui/app.h"
#include "workbench/gui/diff_colors.h"
#include "workbench/gui/logic/timeline.h"

namespace pb::workbench::gui {

namespace {

ImU32 status_color(PassStatus s) {
  switch (s) {
    case PassStatus::changed:
      return IM_COL32(255, 210, 90, 255);
    case PassStatus::unchanged:
      return IM_COL32(150, 150, 150, 255);
    case PassStatus::failed:
      return IM_COL32(255, 90, 90, 255);
    case PassStatus::not_run:
      return IM_COL32(110, 110, 110, 255);
  }
  return IM_COL32_WHITE;
}

// One diff cell: a coloured background across `width`, the line number and the text. Lines that
// define or use `highlight` (the `$N` under the mouse last frame) get a blue tint; returns the
// `$N` under the mouse in this cell, if any.
std::optional<std::string> diff_cell(const DiffLine* line, bool left, float width, const std::string& highlight) {
  ImVec2 pos = ImGui::GetCursorScreenPos();
  float h = ImGui::GetTextLineHeight();
  if (!line) {
    ImGui::Dummy(ImVec2(width, h));
    return std::nullopt;
  }
  ImDrawList* draw = ImGui::GetWindowDrawList();
  if (line->kind != LineKind::same)
    draw->AddRectFilled(pos, ImVec2(pos.x + width, pos.y + h),
                        line->kind == LineKind::added ? kAddedColor : kRemovedColor);
  if (!highlight.empty())
    if (ValueRole role = value_role(line->text, highlight); role != ValueRole::none)
      draw->AddRectFilled(pos, ImVec2(pos.x + width, pos.y + h),
                          role == ValueRole::definition ? IM_COL32(70, 120, 220, 110) : IM_COL32(70, 120, 220, 55));
  int number = left ? line->before_line : line->after_line;
  char sign = line->kind == LineKind::added ? '+' : line->kind == LineKind::removed ? '-' : ' ';
  ImGui::TextColored(ImVec4(0.5f, 0.5f, 0.55f, 1), "%4d %c", number, sign);
  ImGui::SameLine();
  float text_x = ImGui::GetCursorScreenPos().x;
  ImGui::TextUnformatted(line->text.c_str());
  if (!ImGui::IsItemHovered()) return std::nullopt;
  float char_width = ImGui::CalcTextSize("0").x;  // the font is monospaced
  size_t column = static_cast<size_t>(std::max(0.0f, (ImGui::GetIO().MousePos.x - text_x) / char_width));
  return value_at(line->text, column);
}

}  // namespace

void TimelinePanel::draw(App& app) {
  if (draw_busy(app)) return;
  Workspace& ws = app.ws;
  if (!ws.kernel()) {
    draw_no_kernel(app);
    return;
  }
  const ReplayRecords* r = ws.replay_if_ready();
  if (!r) {
    app.need("replay", [](Workspace& w, WorkControl& c) { w.replay(&c); });
    if (ImGui::Button("Run pipeline")) app.request("replay", [](Workspace& w, WorkControl& c) { w.replay(&c); });
    return;
  }
  if (r->error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", r->error->format().c_str());
    return;
  }
  if (r->run.records.empty()) {
    ImGui::TextDisabled("The pipeline is empty: add passes in the Pipeline panel.");
    return;
  }
  std::vector<TimelineRow> rows = timeline_rows(r->run);
  if (selected < 0 || static_cast<size_t>(selected) >= rows.size())
    selected = static_cast<int>(first_interesting_row(rows));

  float table_height = std::min(ImGui::GetFrameHeight() * static_cast<float>(rows.size() + 1) + 4,
                                ImGui::GetContentRegionAvail().y * 0.4f);
  if (ImGui::BeginTable(
          "passes", 7,
          ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable,
          ImVec2(0, table_height))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, 24);
    ImGui::TableSetupColumn("pass", ImGuiTableColumnFlags_WidthStretch, 2.2f);
    ImGui::TableSetupColumn("IR", ImGuiTableColumnFlags_WidthFixed, 70);
    ImGui::TableSetupColumn("ms", ImGuiTableColumnFlags_WidthFixed, 46);
    ImGui::TableSetupColumn("statements", ImGuiTableColumnFlags_WidthFixed, 120);
    ImGui::TableSetupColumn("verifier", ImGuiTableColumnFlags_WidthStretch, 1);
    ImGui::TableSetupColumn("statistics", ImGuiTableColumnFlags_WidthStretch, 2);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& row = rows[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char label[24];
      snprintf(label, sizeof label, "%zu", i + 1);
      if (ImGui::Selectable(label, selected == static_cast<int>(i), ImGuiSelectableFlags_SpanAllColumns))
        selected = static_cast<int>(i);
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, status_color(row.status));
      ImGui::TextUnformatted(row.spec.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(status_label(row.status));
      ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", row.ms);
      ImGui::TableNextColumn();
      ImGui::Text("%zu -> %zu (%+lld)", row.statements_before, row.statements_after, row.statement_delta());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.verdict.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.stats.c_str());
    }
    ImGui::EndTable();
  }

  const passes::PassRecord& rec = r->run.records[static_cast<size_t>(selected)];
  if (diff_records != r || diff_row != selected) {
    diff_records = r;
    diff_row = selected;
    lines = rec.ran ? diff_lines(rec.before_text, rec.after_text) : std::vector<DiffLine>{};
    unfolded.clear();
  }
  sections = fold_unchanged(lines, static_cast<size_t>(context));
  DiffCounts counts = count_lines(lines);
  ImGui::Text("Pass %d: %s", selected + 1, rec.spec.c_str());
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.5f, 1), "+%zu", counts.added);
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(1, 0.5f, 0.5f, 1), "-%zu", counts.removed);
  ImGui::SameLine();
  ImGui::Checkbox("side by side", &side_by_side);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(80);
  ImGui::SliderInt("context", &context, 0, 10);
  if (!rec.failure.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", rec.failure.c_str());
  if (!rec.ran) {
    ImGui::TextDisabled("This pass did not run (a pass before it failed).");
    return;
  }
  if (counts.added + counts.removed == 0) ImGui::TextDisabled("The pass left the IR unchanged.");

  ImGui::BeginChild("diff", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  std::string hovered;
  for (size_t s = 0; s < sections.size(); ++s) {
    const DiffSection& sec = sections[s];
    if (sec.folded && !unfolded.count(s)) {
      ImGui::PushID(static_cast<int>(s));
      char label[64];
      snprintf(label, sizeof label, "... %zu unchanged lines (click to show) ...", sec.count);
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(140, 140, 200, 255));
      if (ImGui::Selectable(label)) unfolded.insert(s);
      ImGui::PopStyleColor();
      ImGui::PopID();
      continue;
    }
    if (side_by_side) {
      // A table clips each side to its column, so a long line never runs into the other side.
      ImGui::PushID(static_cast<int>(s));
      if (ImGui::BeginTable("sides", 2, ImGuiTableFlags_SizingStretchSame | ImGuiTableFlags_BordersInnerV)) {
        for (const auto& row : gui::side_by_side(lines, sec.first, sec.count)) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          const DiffLine* left = row.left >= 0 ? &lines[static_cast<size_t>(row.left)] : nullptr;
          const DiffLine* right = row.right >= 0 ? &lines[static_cast<size_t>(row.right)] : nullptr;
          if (auto v = diff_cell(left, true, ImGui::GetContentRegionAvail().x, highlight)) hovered = *v;
          ImGui::TableNextColumn();
          if (auto v = diff_cell(right, false, ImGui::GetContentRegionAvail().x, highlight)) hovered = *v;
        }
        ImGui::EndTable();
      }
      ImGui::PopID();
    } else {
      for (size_t i = sec.first; i < sec.first + sec.count; ++i)
        if (auto v =
                diff_cell(&lines[i], lines[i].kind != LineKind::added, ImGui::GetContentRegionAvail().x, highlight))
          hovered = *v;
    }
  }
  ImGui::EndChild();
  highlight = hovered;
}

}  // namespace pb::workbench::gui
