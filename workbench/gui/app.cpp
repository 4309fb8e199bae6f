#include "workbench/gui/app.h"

#include <imgui.h>

#include <algorithm>
#include <array>

#include "workbench/workspace/load.h"

namespace pb::workbench::gui {

namespace {
constexpr std::array<std::pair<PanelId, const char*>, 8> kPanels = {{
    {PanelId::source, "source"},
    {PanelId::pipeline, "pipeline"},
    {PanelId::timeline, "timeline"},
    {PanelId::bisect, "bisect"},
    {PanelId::spirv, "spirv"},
    {PanelId::msl, "msl"},
    {PanelId::run, "run"},
    {PanelId::fixtures, "fixtures"},
}};
}  // namespace

std::optional<PanelId> panel_from_name(const std::string& name) {
  for (const auto& [id, n] : kPanels)
    if (name == n) return id;
  return std::nullopt;
}

const char* panel_name(PanelId id) {
  for (const auto& [i, n] : kPanels)
    if (i == id) return n;
  return "?";
}

void App::open(const std::string& path, const std::string& dump) {
  if (worker.busy()) {
    message = "wait for the running job (or cancel it) before opening another file";
    return;
  }
  try {
    ws.open(path, dump);
    last_file = path;
    if (source.dumps_of != path) {
      source.dumps_of = path;
      try {
        source.dumps = list_dumps(path);
      } catch (const UserError&) {
        source.dumps.clear();
      }
    }
    source.dump = -1;
    for (size_t i = 0; i < source.dumps.size(); ++i)
      if (!dump.empty() && (std::to_string(source.dumps[i].index) == dump || source.dumps[i].title == dump))
        source.dump = static_cast<int>(i);
    source.path_field = path;
    source.editing = false;
    run.inputs_loaded = false;
    auto losses = ws.loss_candidates();
    auto suggested = std::find(losses.begin(), losses.end(), ws.suggested_loss());
    run.loss = suggested == losses.end() ? 0 : static_cast<int>(suggested - losses.begin());
    timeline.selected = -1;
    message = ws.source_error() ? "parse error: see the Source panel" : "opened " + path;
    auto_compute = true;
  } catch (const UserError& e) {
    message = e.diagnostic().format();
  }
}

bool App::request(const std::string& what, std::function<void(Workspace&, WorkControl&)> job) {
  if (!ws.kernel()) return false;
  return worker.start(what, [this, job = std::move(job)](WorkControl& control) { job(ws, control); });
}

void App::need(const std::string& what, std::function<void(Workspace&, WorkControl&)> job) {
  if (auto_compute && !worker.busy() && ws.kernel()) request(what, std::move(job));
}

void draw_no_kernel(const App& app) {
  if (const auto& e = app.ws.source_error())
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "The source does not parse (line %d): fix it in the Source panel.",
                       e->line);
  else
    ImGui::TextDisabled("Open a kernel, dump, JSON or fixture in the Source panel (or drop a file on the window).");
}

bool draw_busy(App& app) {
  if (!app.worker.busy()) return false;
  WorkProgress p = app.worker.progress();
  ImGui::Text("%s: %s %s", app.worker.what().c_str(), p.stage.c_str(), p.detail.c_str());
  char overlay[64];
  snprintf(overlay, sizeof overlay, "%zu / %zu", p.done, p.total);
  ImGui::ProgressBar(static_cast<float>(p.fraction()), ImVec2(-90, 0), overlay);
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) {
    app.worker.cancel();
    app.auto_compute = false;
  }
  return true;
}

void App::frame() {
  if (worker.poll()) {
    if (worker.last_cancelled())
      message = worker.what() + ": cancelled";
    else if (!worker.last_error().empty())
      message = worker.last_error();
  }
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  ImGui::Begin("passbench", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  float status_height = ImGui::GetFrameHeightWithSpacing() + 4;
  float left_width = ImGui::GetContentRegionAvail().x * 0.36f;
  float height = ImGui::GetContentRegionAvail().y - status_height;

  auto tab = [&](PanelId id, const char* label) {
    ImGuiTabItemFlags flags = select == id ? ImGuiTabItemFlags_SetSelected : 0;
    bool open = ImGui::BeginTabItem(label, nullptr, flags);
    return open;
  };

  ImGui::BeginChild("left", ImVec2(left_width, height), true);
  if (ImGui::BeginTabBar("left_tabs")) {
    if (tab(PanelId::source, "Source")) {
      source.draw(*this);
      ImGui::EndTabItem();
    }
    if (tab(PanelId::pipeline, "Pipeline")) {
      pipeline.draw(*this);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("right", ImVec2(0, height), true);
  if (ImGui::BeginTabBar("right_tabs")) {
    struct Right {
      PanelId id;
      const char* label;
      std::function<void()> draw;
    };
    Right panels[] = {
        {PanelId::timeline, "Pass timeline", [&] { timeline.draw(*this); }},
        {PanelId::bisect, "Which pass changed the answer", [&] { bisect.draw(*this); }},
        {PanelId::spirv, "SPIR-V", [&] { spirv.draw(*this); }},
        {PanelId::msl, "MSL", [&] { msl.draw(*this); }},
        {PanelId::run, "Run", [&] { run.draw(*this); }},
        {PanelId::fixtures, "Fixtures", [&] { fixtures.draw(*this); }},
    };
    for (auto& p : panels)
      if (tab(p.id, p.label)) {
        visible = p.id;
        p.draw();
        ImGui::EndTabItem();
      }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  select.reset();

  // Status bar: the running job, else the last message.
  if (!draw_busy(*this)) {
    bool error = message.find("error") != std::string::npos;
    if (error) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
    std::string first_line = message.substr(0, message.find('\n'));
    ImGui::TextUnformatted(first_line.c_str());
    if (error) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered() && first_line != message) ImGui::SetTooltip("%s", message.c_str());
  }
  ImGui::End();
}

}  // namespace pb::workbench::gui
