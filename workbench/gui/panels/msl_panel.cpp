// MSL: the cross-compiled text of a task with its bytes, lines and local declarations; a bar
// chart comparing the adstack lowerings for this kernel (compare_lowerings, as the CLI's
// compare-lowerings).
#include <imgui.h>

#include "workbench/gui/app.h"
#include "workbench/gui/chart.h"

namespace pb::workbench::gui {

namespace {
// "HSS+": storage, count, push, bounds check in one letter each (the panel's legend spells them).
std::string lowering_code(const codegen::spirv::LoweringOptions& l) {
  using namespace codegen::spirv;
  std::string code;
  code += l.storage == StackStorage::heap ? 'H' : 'F';
  code += l.count == StackCount::shared_array ? 'S' : 'P';
  code += l.push == StackPush::select ? 'S' : 'B';
  code += l.bounds_check ? '+' : '-';
  return code;
}
}  // namespace

void MslPanel::draw(App& app) {
  if (draw_busy(app)) return;
  Workspace& ws = app.ws;
  if (!ws.kernel()) {
    draw_no_kernel(app);
    return;
  }
  const KernelCompile* c = ws.compile_if_ready();
  const LoweringComparison* table = ws.lowerings_if_ready();
  if (!c || !table) {
    auto job = [](Workspace& w, WorkControl& ctl) {
      w.compile(&ctl);
      w.lowerings(&ctl);
    };
    app.need("compile", job);
    if (ImGui::Button("Compile")) app.request("compile", job);
    return;
  }
  const char* metrics[] = {"MSL lines", "MSL bytes", "MSL local declarations", "SPIR-V final ID bound"};
  ImGui::SetNextItemWidth(220);
  ImGui::Combo("compare", &metric, metrics, IM_ARRAYSIZE(metrics));
  ChartSeries series{metrics[metric], {}, kSeriesColors[2]};
  ChartOptions options;
  options.bars = true;
  std::string first_failure;
  int failures = 0;
  for (const auto& row : table->rows) {
    const CompileMetrics& m = row.metrics;
    double v[] = {double(m.msl_lines), double(m.msl_bytes), double(m.msl_local_declarations), double(m.final_id_bound)};
    bool has_msl = row.ok() && (metric == 3 || !row.cross_error);
    series.values.push_back(has_msl ? v[metric] : 0);
    // A lowering without the metric (it failed, or SPIRV-Cross has no MSL for it) is marked "!".
    options.x_labels.push_back(lowering_code(row.lowering_options) + (has_msl ? "" : "!"));
    if (!has_msl && first_failure.empty())
      first_failure = row.error ? row.error->message : row.cross_error ? row.cross_error->message : "";
    failures += !has_msl;
  }
  ImGui::Text(
      "%s: %llu adstack push(es). One bar per lowering: storage Heap/Function, count Shared-array/Per-stack, "
      "push Select/Branch, bounds check +/-",
      table->kernel.c_str(), static_cast<unsigned long long>(table->pushes));
  if (table->pipeline_error)
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", table->pipeline_error->message.c_str());
  draw_chart("lowerings", ImVec2(-1, 210), {series}, options);
  if (failures) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 180, 100, 255));
    ImGui::TextWrapped("%d lowering(s) marked ! have no value: %s", failures, first_failure.c_str());
    ImGui::PopStyleColor();
  }

  if (c->error) ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", c->error->message.c_str());
  if (c->cross_error) ImGui::TextColored(ImVec4(1, 0.7f, 0.4f, 1), "MSL: %s", c->cross_error->message.c_str());
  if (c->tasks.empty()) return;
  task = std::clamp(task, 0, static_cast<int>(c->tasks.size()) - 1);
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("task", c->tasks[static_cast<size_t>(task)].name.c_str())) {
    for (size_t i = 0; i < c->tasks.size(); ++i)
      if (ImGui::Selectable(c->tasks[i].name.c_str(), static_cast<int>(i) == task)) task = static_cast<int>(i);
    ImGui::EndCombo();
  }
  const TaskCompile& t = c->tasks[static_cast<size_t>(task)];
  ImGui::SameLine();
  ImGui::Text("%llu bytes, %llu lines, %llu locals (lowering %s)", static_cast<unsigned long long>(t.metrics.msl_bytes),
              static_cast<unsigned long long>(t.metrics.msl_lines),
              static_cast<unsigned long long>(t.metrics.msl_local_declarations), c->lowering.c_str());
  ImGui::BeginChild("msl", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(t.msl.text.c_str(), t.msl.text.c_str() + t.msl.text.size());
  ImGui::EndChild();
}

}  // namespace pb::workbench::gui
