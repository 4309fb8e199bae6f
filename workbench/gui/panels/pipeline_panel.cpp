// Pipeline: the registered passes and named pipelines, with option widgets derived from each
// pass's declared options; add, remove, reorder; run on the worker thread with progress and cancel.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "passes/registry.h"
#include "workbench/gui/app.h"

namespace pb::workbench::gui {

namespace {

void mark_explicit(passes::PipelineEntry& e, const std::string& name) {
  if (std::find(e.explicit_options.begin(), e.explicit_options.end(), name) == e.explicit_options.end())
    e.explicit_options.push_back(name);
}

// One widget per declared option; returns whether a value changed.
bool option_widgets(passes::PipelineEntry& e) {
  bool changed = false;
  for (const auto& spec : e.info->options) {
    const char* name = spec.name.c_str();
    switch (spec.type) {
      case passes::OptionType::Bool: {
        bool v = e.options.get_bool(spec.name);
        if (ImGui::Checkbox(name, &v)) e.options.set(spec.name, v), mark_explicit(e, spec.name), changed = true;
        break;
      }
      case passes::OptionType::Int: {
        long long v = e.options.get_int(spec.name);
        ImGui::SetNextItemWidth(120);
        if (ImGui::InputScalar(name, ImGuiDataType_S64, &v)) {
          v = std::clamp<long long>(v, spec.min_int, spec.max_int);
          e.options.set(spec.name, static_cast<int64_t>(v)), mark_explicit(e, spec.name), changed = true;
        }
        break;
      }
      case passes::OptionType::Float: {
        double v = e.options.get_float(spec.name);
        ImGui::SetNextItemWidth(120);
        if (ImGui::InputDouble(name, &v)) e.options.set(spec.name, v), mark_explicit(e, spec.name), changed = true;
        break;
      }
      case passes::OptionType::String: {
        std::string v = e.options.get_string(spec.name);
        ImGui::SetNextItemWidth(160);
        if (!spec.choices.empty()) {
          if (ImGui::BeginCombo(name, v.c_str())) {
            for (const auto& c : spec.choices)
              if (ImGui::Selectable(c.c_str(), c == v))
                e.options.set(spec.name, c), mark_explicit(e, spec.name), changed = true;
            ImGui::EndCombo();
          }
        } else if (ImGui::InputText(name, &v, ImGuiInputTextFlags_EnterReturnsTrue)) {
          e.options.set(spec.name, v), mark_explicit(e, spec.name), changed = true;
        }
        break;
      }
    }
    if (ImGui::IsItemHovered() && !spec.help.empty()) ImGui::SetTooltip("%s", spec.help.c_str());
  }
  return changed;
}

}  // namespace

void PipelinePanel::draw(App& app) {
  Workspace& ws = app.ws;
  if (ws.pipeline_text() != entries_text) {
    entries_text = ws.pipeline_text();
    parse_error.clear();
    try {
      entries = passes::parse_pipeline(entries_text, "pipeline").entries;
    } catch (const UserError& e) {
      entries.clear();
      parse_error = e.diagnostic().format();
    }
  }
  bool busy = app.worker.busy();
  ImGui::BeginDisabled(busy);
  // The registered passes, then the named pipelines (added expanded).
  std::vector<std::string> names;
  for (const auto& p : passes::all_passes()) names.push_back(p.name);
  for (const auto& p : passes::all_named_pipelines()) names.push_back(p.name);
  pass_choice = std::clamp(pass_choice, 0, static_cast<int>(names.size()) - 1);
  ImGui::SetNextItemWidth(220);
  if (ImGui::BeginCombo("##pass", names[static_cast<size_t>(pass_choice)].c_str())) {
    for (size_t i = 0; i < names.size(); ++i) {
      bool named = i >= passes::all_passes().size();
      std::string label = named ? names[i] + " (pipeline)" : names[i];
      if (ImGui::Selectable(label.c_str(), static_cast<int>(i) == pass_choice)) pass_choice = static_cast<int>(i);
      if (ImGui::IsItemHovered()) {
        const std::string& summary = named ? passes::all_named_pipelines()[i - passes::all_passes().size()].summary
                                           : passes::all_passes()[i].summary;
        ImGui::SetTooltip("%s", summary.c_str());
      }
    }
    ImGui::EndCombo();
  }
  bool edited = false;
  ImGui::SameLine();
  if (ImGui::Button("Add")) {
    auto added = passes::parse_pipeline(names[static_cast<size_t>(pass_choice)]).entries;
    entries.insert(entries.end(), added.begin(), added.end());
    edited = true;
  }
  ImGui::SameLine();
  if (ImGui::Button("Clear")) entries.clear(), edited = true;

  std::optional<size_t> remove, up, down;
  for (size_t i = 0; i < entries.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::ArrowButton("up", ImGuiDir_Up)) up = i;
    ImGui::SameLine();
    if (ImGui::ArrowButton("down", ImGuiDir_Down)) down = i;
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) remove = i;
    ImGui::SameLine();
    std::string label = std::to_string(i + 1) + ". " + entries[i].to_string();
    if (entries[i].info->options.empty()) {
      ImGui::TextUnformatted(label.c_str());
    } else if (ImGui::TreeNode("entry", "%s", label.c_str())) {
      edited |= option_widgets(entries[i]);
      ImGui::TreePop();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", entries[i].info->summary.c_str());
    ImGui::PopID();
  }
  if (remove) entries.erase(entries.begin() + static_cast<long>(*remove)), edited = true;
  if (up && *up > 0) std::swap(entries[*up], entries[*up - 1]), edited = true;
  if (down && *down + 1 < entries.size()) std::swap(entries[*down], entries[*down + 1]), edited = true;
  if (edited) {
    passes::Pipeline p;
    p.entries = entries;
    entries_text = p.to_string();
    ws.set_pipeline(entries_text);
    app.auto_compute = true;
  }

  ImGui::Separator();
  std::string text = ws.pipeline_text();
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputTextWithHint("##text", "pipeline text, e.g. simplify,dce", &text,
                               ImGuiInputTextFlags_EnterReturnsTrue)) {
    ws.set_pipeline(text);
    app.auto_compute = true;
  }
  if (!parse_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
    ImGui::TextWrapped("%s", parse_error.c_str());
    ImGui::PopStyleColor();
  }
  if (ImGui::Button("Run pipeline") && ws.kernel()) {
    app.auto_compute = true;
    app.request("replay", [](Workspace& w, WorkControl& c) { w.replay(&c); });
    app.select = PanelId::timeline;
  }
  ImGui::EndDisabled();
  if (busy)
    draw_busy(app);
  else if (const auto* r = ws.replay_if_ready(); r && !r->error)
    ImGui::Text("%zu passes ran in %.2f ms%s", r->run.records.size(), r->run.total_ms,
                r->run.failed ? " (one FAILED)" : "");
}

}  // namespace pb::workbench::gui
