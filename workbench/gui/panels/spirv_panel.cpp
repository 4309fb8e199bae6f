// SPIR-V: lowering toggles, then per task the optimizer's table and a chart of ID bound and
// instruction count against the pass (log scale option) with the ID bound in force drawn as a line
// (67,108,863 by default); one row per pass only when "per pass" is ticked (measuring is several
// times slower), else the input and the whole pipeline; the disassembly.
#include <imgui.h>

#include "codegen/spirv/validate.h"
#include "workbench/gui/app.h"
#include "workbench/gui/chart.h"

namespace pb::workbench::gui {

namespace {

// Toggles for the four adstack lowering choices; returns whether one changed.
bool lowering_toggles(codegen::spirv::LoweringOptions& l) {
  using namespace codegen::spirv;
  bool changed = false;
  bool function = l.storage == StackStorage::function, per_stack = l.count == StackCount::per_stack,
       branch = l.push == StackPush::branch;
  if (ImGui::Checkbox("function-scope stacks", &function))
    l.storage = function ? StackStorage::function : StackStorage::heap, changed = true;
  ImGui::SameLine();
  if (ImGui::Checkbox("per-stack counts", &per_stack))
    l.count = per_stack ? StackCount::per_stack : StackCount::shared_array, changed = true;
  ImGui::SameLine();
  if (ImGui::Checkbox("branch push", &branch)) l.push = branch ? StackPush::branch : StackPush::select, changed = true;
  ImGui::SameLine();
  changed |= ImGui::Checkbox("bounds check", &l.bounds_check);
  return changed;
}

}  // namespace

void SpirvPanel::draw(App& app) {
  if (draw_busy(app)) return;
  Workspace& ws = app.ws;
  if (!ws.kernel()) {
    draw_no_kernel(app);
    return;
  }
  CompileSettings settings = ws.compile_settings();
  bool changed = lowering_toggles(settings.lowering);
  if (max_id_bound == 0) max_id_bound = static_cast<int>(settings.max_id_bound);
  ImGui::SetNextItemWidth(140);
  if (ImGui::InputInt("max ID bound", &max_id_bound, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
    max_id_bound = std::max(max_id_bound, 16);
    settings.max_id_bound = static_cast<uint32_t>(max_id_bound);
    changed = true;
  }
  ImGui::SameLine();
  changed |= ImGui::Checkbox("after the pipeline", &settings.after_pipeline);
  ImGui::SameLine();
  changed |= ImGui::Checkbox("per pass", &settings.measure_passes);
  ImGui::SameLine();
  bool log = log_scale.value_or(false);
  if (ImGui::Checkbox("log scale", &log)) log_scale = log;
  if (changed) {
    ws.set_compile_settings(settings);
    app.auto_compute = true;
  }
  const KernelCompile* c = ws.compile_if_ready();
  if (!c) {
    app.need("compile", [](Workspace& w, WorkControl& ctl) { w.compile(&ctl); });
    if (ImGui::Button("Compile")) app.request("compile", [](Workspace& w, WorkControl& ctl) { w.compile(&ctl); });
    return;
  }
  ImGui::Text("%s  lowering %s  %zu task(s)  %s", c->kernel.c_str(), c->lowering.c_str(), c->tasks.size(),
              c->valid ? "valid" : "not validated");
  if (c->error) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 115, 115, 255));
    ImGui::TextWrapped("%s: %s", c->error->stage.c_str(), c->error->message.c_str());
    ImGui::PopStyleColor();
  }
  if (c->tasks.empty()) return;
  task = std::clamp(task, 0, static_cast<int>(c->tasks.size()) - 1);
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("task", c->tasks[static_cast<size_t>(task)].name.c_str())) {
    for (size_t i = 0; i < c->tasks.size(); ++i)
      if (ImGui::Selectable(c->tasks[i].name.c_str(), static_cast<int>(i) == task)) task = static_cast<int>(i);
    ImGui::EndCombo();
  }
  const TaskCompile& t = c->tasks[static_cast<size_t>(task)];
  if (!t.report) {
    ImGui::TextDisabled("The optimizer did not run on this task.");
    return;
  }
  const auto& rows = t.report->rows;
  ChartSeries bound{"ID bound", {}, kSeriesColors[0]}, instructions{"instructions", {}, kSeriesColors[1]};
  ChartOptions options;
  if (!log_scale) {
    double most = 0;
    for (const auto& row : rows) most = std::max<double>(most, std::max<double>(row.id_bound, row.instructions));
    log_scale = most * 100 < t.report->options.max_id_bound;
  }
  options.log_scale = *log_scale;
  options.index_labels = true;
  options.threshold = t.report->options.max_id_bound;
  options.threshold_label = "max ID bound " + std::to_string(t.report->options.max_id_bound);
  for (const auto& row : rows) {
    options.x_labels.push_back(row.pass);
    bound.values.push_back(row.peak_id_bound ? row.peak_id_bound : row.id_bound);
    instructions.values.push_back(static_cast<double>(row.instructions));
  }
  // An ID overflow: the pass that stopped, at the need it measured (above the bound).
  if (const auto& f = t.report->failure; f && f->kind == codegen::spirv::OptimizerFailureKind::kIdOverflow) {
    options.x_labels.push_back(f->pass + " (overflow)");
    bound.values.push_back(f->need_at_most ? f->need_at_most : std::max<double>(f->need_above, f->max_id_bound) + 1);
  }
  if (!t.report->options.measure_passes)
    ImGui::TextDisabled("All passes ran in one optimizer; tick \"per pass\" for each pass's ID need (slower).");
  draw_chart("ids", ImVec2(-1, 230), {bound, instructions}, options);
  if (ImGui::BeginTable("optimizer", 6, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY,
                        ImVec2(0, show_disassembly ? 160 : ImGui::GetContentRegionAvail().y - 30))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, 28);
    ImGui::TableSetupColumn("pass", ImGuiTableColumnFlags_WidthStretch, 2.5f);
    for (const char* h : {"ID bound", "peak need", "instructions", "ms"})
      ImGui::TableSetupColumn(h, ImGuiTableColumnFlags_WidthStretch, 1);
    ImGui::TableHeadersRow();
    for (const auto& row : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", row.index);
      ImGui::TableNextColumn();
      ImGui::TextColored(row.changed ? ImVec4(1, 0.82f, 0.35f, 1) : ImVec4(0.6f, 0.6f, 0.6f, 1), "%s",
                         row.pass.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%u", row.id_bound);
      ImGui::TableNextColumn();
      ImGui::Text("%u", row.peak_id_bound);
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(row.instructions));
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", row.ms);
    }
    ImGui::EndTable();
  }
  ImGui::Checkbox("disassembly", &show_disassembly);
  if (show_disassembly) {
    if (disassembly_of != &t) disassembly = codegen::spirv::disassemble(t.spirv), disassembly_of = &t;
    const std::string& text = disassembly;
    ImGui::BeginChild("disassembly", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::TextUnformatted(text.c_str(), text.c_str() + text.size());
    ImGui::EndChild();
  }
}

}  // namespace pb::workbench::gui
