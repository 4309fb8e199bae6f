// Which pass changed the answer: the kernel run on the inputs before the pipeline and after every
// pass; the first pass whose results differ beyond the tolerance is marked.
#include <imgui.h>

#include "workbench/gui/app.h"

namespace pb::workbench::gui {

void BisectPanel::draw(App& app) {
  if (draw_busy(app)) return;
  Workspace& ws = app.ws;
  if (!ws.kernel()) {
    draw_no_kernel(app);
    return;
  }
  const BisectResult* b = ws.bisect_if_ready();
  if (!b) {
    app.need("bisect", [](Workspace& w, WorkControl& c) { w.bisect(&c); });
    if (ImGui::Button("Run after every pass"))
      app.request("bisect", [](Workspace& w, WorkControl& c) { w.bisect(&c); });
    return;
  }
  ImGui::TextWrapped(
      "Each pass's output runs on the inputs (%s) and is compared with the kernel before the pipeline "
      "(tolerance rel %.0e, abs %.0e).",
      ws.inputs_name().c_str(), b->tolerance.rel, b->tolerance.abs);
  if (b->error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", b->error->format().c_str());
    if (b->rows.empty()) return;
  }
  if (b->first_differing) {
    const BisectRow& row = b->rows[*b->first_differing];
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "First pass that changed the answer: %zu. %s", row.index + 1,
                       row.pass.c_str());
  } else if (!b->error) {
    ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.5f, 1), "No pass changed the answer.");
  }
  if (ImGui::BeginTable("bisect", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"#", "pass", "verdict", "compared / differing", "first difference"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& row : b->rows) {
      bool first = b->first_differing && *b->first_differing == row.index;
      ImGui::TableNextRow();
      if (first) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, IM_COL32(110, 30, 30, 255));
      ImGui::TableNextColumn();
      ImGui::Text("%zu", row.index + 1);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.pass.c_str());
      ImGui::TableNextColumn();
      if (!row.ran)
        ImGui::TextDisabled("not run");
      else if (row.differs())
        ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), first ? "CHANGED HERE" : "differs");
      else
        ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.5f, 1), "same");
      ImGui::TableNextColumn();
      ImGui::Text("%zu / %zu", row.compared, row.differing);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.error.empty() ? row.first_difference.c_str() : row.error.c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace pb::workbench::gui
