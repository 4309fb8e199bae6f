// Source: open a kernel, dump, JSON or fixture (path field or drag-and-drop onto the window), read
// it with line numbers, edit it and re-parse, with a parse error shown at its line.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <sstream>

#include "workbench/gui/app.h"

namespace pb::workbench::gui {

namespace {

void draw_lines(const std::string& text, const std::optional<Diagnostic>& error) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text.data() + start, end - start);
    start = end + 1;
  }
  int error_line = error ? error->line : 0;
  ImGui::BeginChild("source_lines", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (size_t i = 0; i < lines.size(); ++i) {
    int number = static_cast<int>(i) + 1;
    ImVec2 pos = ImGui::GetCursorScreenPos();
    if (number == error_line)
      draw->AddRectFilled(
          pos, ImVec2(pos.x + ImGui::GetWindowWidth() + ImGui::GetScrollX(), pos.y + ImGui::GetTextLineHeight()),
          IM_COL32(120, 35, 35, 255));
    ImGui::TextColored(ImVec4(0.5f, 0.5f, 0.55f, 1), "%4d", number);
    ImGui::SameLine();
    ImGui::TextUnformatted(lines[i].data(), lines[i].data() + lines[i].size());
    if (error && number == error_line) {
      std::string caret(static_cast<size_t>(std::max(0, error->column - 1)), ' ');
      ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "     %s^ %s", caret.c_str(), error->message.c_str());
      if (!error->remedy.empty())
        ImGui::TextColored(ImVec4(1, 0.7f, 0.4f, 1), "     remedy: %s", error->remedy.c_str());
    }
  }
  ImGui::EndChild();
}

}  // namespace

void SourcePanel::draw(App& app) {
  Workspace& ws = app.ws;
  ImGui::SetNextItemWidth(-60);
  bool enter = ImGui::InputTextWithHint("##path", "kernel, dump, JSON or fixture path (or drop a file here)",
                                        &path_field, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || enter) && !path_field.empty()) app.open(path_field);
  if (ws.source_text().empty()) {
    ImGui::TextDisabled("No kernel open.");
    return;
  }
  if (dumps.size() > 1) {
    auto label = [&](size_t i) {
      const auto& d = dumps[i];
      return "dump " + std::to_string(d.index) + ": " + d.title + " (lines " + std::to_string(d.first_line) + "-" +
             std::to_string(d.last_line) + ")";
    };
    size_t current = dump < 0 ? dumps.size() - 1 : static_cast<size_t>(dump);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##dump", label(current).c_str())) {
      for (size_t i = 0; i < dumps.size(); ++i)
        if (ImGui::Selectable(label(i).c_str(), i == current) && !app.worker.busy())
          app.open(ws.source_path(), std::to_string(dumps[i].index));
      ImGui::EndCombo();
    }
  }
  const ir::Kernel* k = ws.kernel();
  ImGui::Text("%s", ws.source_name().c_str());
  if (k) {
    ImGui::SameLine();
    ImGui::TextDisabled("(%zu statements, %zu fields)", k->count_statements(), k->fields().size());
  }
  ImGui::BeginDisabled(app.worker.busy());
  if (!editing) {
    if (ImGui::Button("Edit")) {
      editing = true;
      edit_text = ws.source_text();
    }
  } else {
    if (ImGui::Button("Apply and re-parse")) {
      ws.set_source_text(edit_text);
      editing = false;
      app.auto_compute = true;
      const std::optional<Diagnostic>& error = ws.source_error();
      app.message = error ? "parse error at line " + std::to_string(error->line) : "re-parsed";
    }
    ImGui::SameLine();
    if (ImGui::Button("Discard")) editing = false;
  }
  ImGui::EndDisabled();
  if (const auto& e = ws.source_error()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
    ImGui::TextWrapped(
        "%s", e->line > 0 ? ("line " + std::to_string(e->line) + ": " + e->message).c_str() : e->message.c_str());
    ImGui::PopStyleColor();
  }
  if (editing)
    ImGui::InputTextMultiline("##edit", &edit_text, ImVec2(-1, -1), ImGuiInputTextFlags_AllowTabInput);
  else
    draw_lines(ws.source_text(), ws.source_error());
}

}  // namespace pb::workbench::gui
