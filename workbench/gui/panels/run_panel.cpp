// Run: the inputs editor; a forward run, or forward + reverse checked against central finite
// differences, on the interpreter (the backends available today); results and gradients with
// mismatches in red.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <functional>

#include "workbench/gui/app.h"

namespace pb::workbench::gui {

namespace {

std::string flat_values(const nlohmann::json& data) {
  std::string out;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
    if (j.is_array()) {
      for (const auto& e : j) walk(e);
      return;
    }
    if (!out.empty()) out += ", ";
    out += j.is_number_float() ? fmt::format("{:.6g}", j.get<double>()) : j.dump();
  };
  walk(data);
  if (out.size() > 400) out = out.substr(0, 400) + " ...";
  return out;
}

void forward_table(const RunRecord& run) {
  if (run.error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", run.error->format().c_str());
    return;
  }
  ImGui::Text("interp: %.2f ms", run.ms);
  if (ImGui::BeginTable("values", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY)) {
    ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, 160);
    ImGui::TableSetupColumn("values");
    ImGui::TableSetupColumn("gradient");
    ImGui::TableHeadersRow();
    for (const char* group : {"fields", "ndarrays"}) {
      if (!run.output->values.contains(group)) continue;
      for (const auto& [name, v] : run.output->values[group].items()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", v.contains("data") ? flat_values(v["data"]).c_str() : "");
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", v.contains("grad") ? flat_values(v["grad"]).c_str() : "");
      }
    }
    ImGui::EndTable();
  }
  if (!run.output->printed.empty()) ImGui::TextWrapped("printed:\n%s", run.output->printed.c_str());
}

void gradient_table(const GradcheckRecord& g) {
  if (g.error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", g.error->format().c_str());
    return;
  }
  const GradcheckResult& r = *g.result;
  ImVec4 verdict = r.passed() ? ImVec4(0.5f, 0.9f, 0.5f, 1) : ImVec4(1, 0.45f, 0.45f, 1);
  ImGui::TextColored(verdict, "%s: loss %.6g, %zu compared, %zu mismatches, %zu kinks, max rel error %.2e (%.1f ms)",
                     r.passed() ? "gradients match finite differences" : "GRADIENTS DIFFER", r.loss, r.compared,
                     r.mismatches, r.kinks, r.max_rel_error, g.ms);
  if (ImGui::BeginTable("grads", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"element", "reverse mode", "finite differences", "rel error", "status"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& e : r.elements) {
      ImGui::TableNextRow();
      if (e.status == GradStatus::mismatch)
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, IM_COL32(110, 30, 30, 255));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(element_name(e).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.9g", e.analytic);
      ImGui::TableNextColumn();
      ImGui::Text("%.9g", e.numeric);
      ImGui::TableNextColumn();
      ImGui::Text("%.2e", e.rel_error);
      ImGui::TableNextColumn();
      std::string status(status_name(e.status));
      if (e.status == GradStatus::mismatch)
        ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", status.c_str());
      else
        ImGui::TextUnformatted(status.c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace

void RunPanel::draw(App& app) {
  if (draw_busy(app)) return;
  Workspace& ws = app.ws;
  if (!ws.kernel()) {
    draw_no_kernel(app);
    return;
  }
  if (!inputs_loaded) {
    inputs_text = ws.inputs().dump(2);
    inputs_loaded = true;
  }
  ImGui::Text("Inputs (%s)", ws.inputs_name().c_str());
  ImGui::InputTextMultiline("##inputs", &inputs_text, ImVec2(-1, ImGui::GetTextLineHeight() * 8));
  if (ImGui::Button("Apply inputs")) {
    auto e = ws.set_inputs_text(inputs_text, "inputs (edited)");
    inputs_error = e ? e->format() : "";
    app.auto_compute = true;
  }
  if (!inputs_error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", inputs_error.c_str());
  ImGui::SameLine();
  ImGui::Text("backend: interp");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The reference interpreter; other backends appear here as they land.");
  if (ImGui::RadioButton("forward", !reverse)) reverse = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("forward + reverse (gradient check)", reverse)) reverse = true;
  std::vector<std::string> losses = ws.loss_candidates();
  if (reverse) {
    if (losses.empty()) {
      ImGui::TextColored(ImVec4(1, 0.7f, 0.4f, 1), "No float field has a gradient field: nothing to differentiate.");
      return;
    }
    loss = std::clamp(loss, 0, static_cast<int>(losses.size()) - 1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(160);
    if (ImGui::BeginCombo("loss", losses[static_cast<size_t>(loss)].c_str())) {
      for (size_t i = 0; i < losses.size(); ++i)
        if (ImGui::Selectable(losses[i].c_str(), static_cast<int>(i) == loss)) loss = static_cast<int>(i);
      ImGui::EndCombo();
    }
    std::string loss_name = losses[static_cast<size_t>(loss)];
    const GradcheckRecord* g = ws.gradcheck_if_ready(loss_name);
    auto job = [loss_name](Workspace& w, WorkControl& c) { w.gradcheck(loss_name, kDefaultReversePipeline, &c); };
    if (ImGui::Button("Run forward + reverse")) app.auto_compute = true, app.request("gradcheck", job);
    if (g)
      gradient_table(*g);
    else
      app.need("gradcheck", job);
    return;
  }
  ImGui::SameLine();
  ImGui::Checkbox("the kernel after the pipeline", &after_pipeline);
  auto job = [after = after_pipeline](Workspace& w, WorkControl& c) { w.run(after, &c); };
  if (ImGui::Button("Run forward")) app.auto_compute = true, app.request("run", job);
  if (const RunRecord* r = ws.run_if_ready(after_pipeline))
    forward_table(*r);
  else
    app.need("run", job);
}

}  // namespace pb::workbench::gui
