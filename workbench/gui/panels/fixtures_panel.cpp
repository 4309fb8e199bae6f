// Fixtures: run a folder of fixtures on a worker of its own (PASS/FAIL list with a filter); a
// failing one shows its failures with diffs coloured, and opens into the workspace. The
// workspace's kernel, pipeline and inputs save as a new fixture (workspace/fixture_new.h).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <filesystem>

#include "workbench/gui/app.h"
#include "workbench/gui/diff_colors.h"
#include "workbench/workspace/fixture_new.h"

namespace pb::workbench::gui {

void FixturesPanel::run_folder(const std::string& dir) {
  if (worker.busy()) return;
  folder = dir;
  std::vector<std::string> paths;
  try {
    paths = expand_fixture_paths({dir});
  } catch (const std::exception&) {
    paths.clear();  // a folder that cannot be listed shows no fixtures
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    list.set_paths(paths);
  }
  selected = -1;
  worker.start("fixtures", [this, paths](WorkControl& control) {
    for (size_t i = 0; i < paths.size(); ++i) {
      control.check();
      control.report("fixtures", paths[i], i, paths.size());
      FixtureOutcome outcome;
      try {
        outcome = check_fixture(paths[i]);
      } catch (const std::exception& e) {
        outcome.path = paths[i];
        outcome.failures.push_back(e.what());
      }
      std::lock_guard<std::mutex> lock(mutex);
      list.set_outcome(i, outcome);
    }
    control.report("fixtures", "", paths.size(), paths.size());
  });
}

namespace {

// A name for the workspace's kernel as a fixture: in the folder, after the source file.
std::string default_fixture_path(const std::string& folder, const std::string& source) {
  std::filesystem::path stem = std::filesystem::path(source).filename();
  while (stem.has_extension()) stem = stem.stem();
  if (stem.empty()) stem = "kernel";
  std::filesystem::path dir = folder.empty() ? std::filesystem::path(".") : std::filesystem::path(folder);
  return (dir / (stem.string() + ".fixture.json")).string();
}

}  // namespace

void FixturesPanel::draw_save(App& app) {
  if (!app.ws.kernel()) return;
  if (save_path.empty()) save_path = default_fixture_path(folder, app.ws.source_path());
  const std::string loss = app.ws.suggested_loss();
  ImGui::SetNextItemWidth(-420);
  ImGui::InputTextWithHint("##save_path", "NAME.fixture.json", &save_path);
  ImGui::SameLine();
  ImGui::BeginDisabled(loss.empty());
  ImGui::Checkbox(loss.empty() ? "gradients (no loss)" : ("gradients of " + loss).c_str(), &save_gradients);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(app.worker.busy() || worker.busy() || save_path.empty());
  const bool pressed = ImGui::Button("Save the workspace as a fixture");
  if (pressed || (save_requested && !app.worker.busy() && !worker.busy())) {
    save_requested = false;
    NewFixtureOptions o;
    o.loss = save_gradients ? loss : "";
    o.overwrite = true;  // the path is in plain sight, and the file is a regenerable record
    try {
      FixtureOutcome r = save_new_fixture(app.ws, save_path, o);
      save_failed = !r.passed;
      save_message = r.passed ? "saved " + save_path + ": it passes" : "saved " + save_path + ", but it FAILS:";
      for (const auto& f : r.failures) save_message += "\n" + f;
      if (!folder.empty()) run_folder(folder);
    } catch (const UserError& e) {
      save_failed = true;
      save_message = e.diagnostic().format();
    }
  }
  ImGui::EndDisabled();
  if (!save_message.empty())
    ImGui::TextColored(save_failed ? ImVec4(1, 0.45f, 0.45f, 1) : ImVec4(0.5f, 0.9f, 0.5f, 1), "%s",
                       save_message.c_str());
  ImGui::Separator();
}

void FixturesPanel::draw(App& app) {
  worker.poll();
  draw_save(app);
  ImGui::SetNextItemWidth(-140);
  ImGui::InputTextWithHint("##folder", "folder of *.fixture.json", &folder);
  ImGui::SameLine();
  ImGui::BeginDisabled(worker.busy() || folder.empty());
  if (ImGui::Button("Run folder")) run_folder(folder);
  ImGui::EndDisabled();
  if (worker.busy()) {
    WorkProgress p = worker.progress();
    ImGui::ProgressBar(static_cast<float>(p.fraction()), ImVec2(-90, 0), p.detail.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) worker.cancel();
  }
  std::lock_guard<std::mutex> lock(mutex);
  ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.5f, 1), "%zu passed", list.count(FixtureState::passed));
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%zu failed", list.count(FixtureState::failed));
  ImGui::SameLine();
  ImGui::Text("%zu pending", list.count(FixtureState::pending));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(180);
  ImGui::InputTextWithHint("##filter", "filter", &filter.text);
  ImGui::SameLine();
  ImGui::Checkbox("passed", &filter.show_passed);
  ImGui::SameLine();
  ImGui::Checkbox("failed", &filter.show_failed);
  if (selected < 0 && !worker.busy())
    if (auto f = list.first_failed()) selected = static_cast<int>(*f);

  ImGui::BeginChild("list", ImVec2(ImGui::GetContentRegionAvail().x * 0.42f, 0), true);
  for (size_t i : list.visible(filter)) {
    const FixtureEntry& e = list.entries()[i];
    const char* tag = e.state == FixtureState::passed ? "PASS" : e.state == FixtureState::failed ? "FAIL" : "....";
    ImVec4 color = e.state == FixtureState::passed   ? ImVec4(0.5f, 0.9f, 0.5f, 1)
                   : e.state == FixtureState::failed ? ImVec4(1, 0.45f, 0.45f, 1)
                                                     : ImVec4(0.6f, 0.6f, 0.6f, 1);
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    std::string shown = e.path.starts_with(folder) ? e.path.substr(folder.size()) : e.path;
    if (!shown.empty() && shown[0] == '/') shown.erase(0, 1);
    if (ImGui::Selectable((std::string(tag) + "  " + shown + "##" + std::to_string(i)).c_str(),
                          selected == static_cast<int>(i)))
      selected = static_cast<int>(i);
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("detail", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  if (selected >= 0 && static_cast<size_t>(selected) < list.entries().size()) {
    const FixtureEntry& e = list.entries()[static_cast<size_t>(selected)];
    ImGui::TextUnformatted(e.path.c_str());
    if (ImGui::Button("Open in the workspace")) {
      app.open(e.path);
      app.select = PanelId::timeline;
    }
    for (const auto& failure : e.failures) {
      ImGui::Separator();
      // A failure is a message, possibly followed by a unified diff: colour its -/+ lines.
      size_t start = 0;
      while (start < failure.size()) {
        size_t end = failure.find('\n', start);
        if (end == std::string::npos) end = failure.size();
        std::string_view line(failure.data() + start, end - start);
        bool removed = line.starts_with("-") && !line.starts_with("---");
        bool added = line.starts_with("+") && !line.starts_with("+++");
        if (removed || added) {
          ImVec2 pos = ImGui::GetCursorScreenPos();
          ImGui::GetWindowDrawList()->AddRectFilled(
              pos, ImVec2(pos.x + ImGui::GetContentRegionAvail().x, pos.y + ImGui::GetTextLineHeight()),
              added ? kAddedColor : kRemovedColor);
        }
        ImGui::TextUnformatted(line.data(), line.data() + line.size());
        start = end + 1;
      }
    }
    if (e.state == FixtureState::passed) ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.5f, 1), "PASS");
  } else {
    ImGui::TextDisabled("Select a fixture.");
  }
  ImGui::EndChild();
}

}  // namespace pb::workbench::gui
