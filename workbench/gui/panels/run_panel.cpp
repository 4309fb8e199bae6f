// Run: the inputs editor; a forward run, or forward + reverse checked against central finite
// differences, on the interpreter; results and gradients with mismatches in red; the same run on
// the CPU and Vulkan backends compared with the interpreter's, array by array, with launch times.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
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

// A table's height for `rows` rows, at most `most` before it scrolls, leaving room below for the
// backends' comparison.
ImVec2 table_size(size_t rows, size_t most) {
  const float row = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1;
  return ImVec2(0, row * static_cast<float>(std::min(rows, most) + 1) + 2);
}

void forward_table(const RunRecord& run) {
  if (run.error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", run.error->format().c_str());
    return;
  }
  if (!run.output) return;  // neither an error nor an output: nothing to show
  const auto& output = *run.output;
  ImGui::Text("interp: %.2f ms", run.ms);
  size_t rows = 0;
  for (const char* group : {"fields", "ndarrays"})
    if (output.values.contains(group)) rows += output.values[group].size();
  if (ImGui::BeginTable("values", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY,
                        table_size(rows, 10))) {
    ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, 160);
    ImGui::TableSetupColumn("values");
    ImGui::TableSetupColumn("gradient");
    ImGui::TableHeadersRow();
    for (const char* group : {"fields", "ndarrays"}) {
      if (!output.values.contains(group)) continue;
      for (const auto& [name, v] : output.values[group].items()) {
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
  if (!output.printed.empty()) ImGui::TextWrapped("printed:\n%s", output.printed.c_str());
}

void gradient_table(const GradcheckRecord& g) {
  if (g.error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", g.error->format().c_str());
    return;
  }
  if (!g.result) return;  // neither an error nor a result: nothing to show
  const GradcheckResult& r = *g.result;
  ImVec4 verdict = r.passed() ? ImVec4(0.5f, 0.9f, 0.5f, 1) : ImVec4(1, 0.45f, 0.45f, 1);
  ImGui::TextColored(verdict, "%s: loss %.6g, %zu compared, %zu mismatches, %zu kinks, max rel error %.2e (%.1f ms)",
                     r.passed() ? "gradients match finite differences" : "GRADIENTS DIFFER", r.loss, r.compared,
                     r.mismatches, r.kinks, r.max_rel_error, g.ms);
  if (ImGui::BeginTable("grads", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY,
                        table_size(r.elements.size(), 12))) {
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

void backends_table(const BackendsRecord& b) {
  if (b.error) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", b.error->format().c_str());
    return;
  }
  const bool failed = std::any_of(b.rows.begin(), b.rows.end(), [](const BackendDiff& d) { return !d.error.empty(); });
  ImVec4 verdict = b.ok() ? ImVec4(0.5f, 0.9f, 0.5f, 1) : ImVec4(1, 0.45f, 0.45f, 1);
  ImGui::TextColored(verdict, "%s (%.1f ms)",
                     b.ok()   ? "every backend matches the interpreter"
                     : failed ? "A BACKEND FAILED TO RUN THE KERNEL"
                              : "BACKENDS DIFFER",
                     b.ms);
  if (ImGui::BeginTable("backend_diffs", 8, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
    for (const char* h : {"backend", "array", "type", "elements", "max abs", "max rel", "tolerance", "verdict"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const BackendDiff& d : b.rows) {
      ImGui::TableNextRow();
      if (!d.ok) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, IM_COL32(110, 30, 30, 255));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(backend_name(d.backend)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.array.c_str());
      if (!d.error.empty() && d.elements == 0) {
        for (int column = 0; column < 6; ++column) ImGui::TableNextColumn();
        ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "FAILED");
        continue;
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(ir::scalar_name(d.dtype)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%zu", d.elements);
      ImGui::TableNextColumn();
      ImGui::Text("%.3e", d.max_abs);
      ImGui::TableNextColumn();
      ImGui::Text("%.3e", d.max_rel);
      ImGui::TableNextColumn();
      ImGui::Text("%.1e", d.tolerance);
      ImGui::TableNextColumn();
      if (d.ok)
        ImGui::TextUnformatted("ok");
      else
        ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "DIFFERS");
    }
    ImGui::EndTable();
  }
  for (const BackendDiff& d : b.rows)
    if (!d.error.empty() && d.elements == 0) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.45f, 0.45f, 1));
      ImGui::TextWrapped("%s: %s", std::string(backend_name(d.backend)).c_str(), d.error.c_str());
      ImGui::PopStyleColor();
    }
  if (b.launches.empty()) return;
  if (ImGui::BeginTable("launch_times", 6,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupColumn("backend", ImGuiTableColumnFlags_WidthFixed, 80);
    ImGui::TableSetupColumn("kernel");
    ImGui::TableSetupColumn("compile (ms)", ImGuiTableColumnFlags_WidthFixed, 100);
    ImGui::TableSetupColumn("kernel (ms)", ImGuiTableColumnFlags_WidthFixed, 100);
    ImGui::TableSetupColumn("total (ms)", ImGuiTableColumnFlags_WidthFixed, 100);
    ImGui::TableSetupColumn("kernel time from", ImGuiTableColumnFlags_WidthFixed, 260);
    ImGui::TableHeadersRow();
    for (const TimedLaunch& t : b.launches) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(backend_name(t.backend)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.kernel.empty() ? "kernel" : t.kernel.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", t.times.compile_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", t.times.kernel_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", t.times.total_ms);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.times.kernel_timed ? "device timestamps" : "host wall time around the launch");
    }
    ImGui::EndTable();
  }
}

}  // namespace

// The same run on the chosen backends, compared with the interpreter (forward, or forward +
// reverse seeded on `loss`).
void RunPanel::draw_backends(App& app, const std::string& loss) {
  ImGui::Separator();
  ImGui::TextUnformatted("Backends: the same run, compared with the interpreter");
  ImGui::Checkbox("cpu (LLVM JIT)", &on_cpu);
  ImGui::SameLine();
  ImGui::Checkbox("vulkan", &on_vulkan);
  std::vector<Backend> chosen;
  if (on_cpu) chosen.push_back(Backend::cpu);
  if (on_vulkan) chosen.push_back(Backend::vulkan);
  if (chosen.empty()) return;
  ImGui::SameLine();
  auto job = [chosen, loss](Workspace& w, WorkControl& c) { w.compare_backends(chosen, loss, &c); };
  if (ImGui::Button(loss.empty() ? "Compare forward runs" : "Compare gradients"))
    app.auto_compute = true, app.request("backends", job);
  if (const BackendsRecord* b = app.ws.backends_if_ready(chosen, loss))
    backends_table(*b);
  else
    app.need("backends", job);
}

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
  ImGui::Text("runs on: interp (the reference); below, compared on other backends");
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
    const std::string& loss_name = losses[static_cast<size_t>(loss)];
    const GradcheckRecord* g = ws.gradcheck_if_ready(loss_name);
    auto job = [loss_name](Workspace& w, WorkControl& c) { w.gradcheck(loss_name, kDefaultReversePipeline, &c); };
    if (ImGui::Button("Run forward + reverse")) app.auto_compute = true, app.request("gradcheck", job);
    if (g)
      gradient_table(*g);
    else
      app.need("gradcheck", job);
    draw_backends(app, loss_name);
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
  draw_backends(app, "");
}

}  // namespace pb::workbench::gui
