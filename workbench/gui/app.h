// The passbench-gui application: the Workspace, the worker that computes it, the panels, and the
// frame layout (Source and Pipeline on the left, the result panels as tabs on the right).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "workbench/gui/logic/worker.h"
#include "workbench/gui/panels.h"
#include "workbench/workspace/workspace.h"

namespace pb::workbench::gui {

enum class PanelId { source, pipeline, timeline, bisect, spirv, msl, run, fixtures };
std::optional<PanelId> panel_from_name(const std::string& name);  // "timeline", "spirv", ...
const char* panel_name(PanelId id);

struct App {
  Workspace ws;
  Worker worker;
  SourcePanel source;
  PipelinePanel pipeline;
  TimelinePanel timeline;
  BisectPanel bisect;
  SpirvPanel spirv;
  MslPanel msl;
  RunPanel run;
  FixturesPanel fixtures;

  std::optional<PanelId> select;  // a tab to bring forward on the next frame
  PanelId visible = PanelId::timeline;
  std::string message;       // the last error or notice, shown in the status bar
  bool auto_compute = true;  // visible panels ask for what they need; off after a cancel
  std::string last_file;     // for the config

  // Opens a file into the workspace (errors go to `message` / the Source panel); `dump` picks one
  // dump of a log holding several ("" = the last).
  void open(const std::string& path, const std::string& dump = {});
  // Starts `job` on the worker unless one is running. Returns whether it started.
  bool request(const std::string& what, std::function<void(Workspace&, WorkControl&)> job);
  // Whether panels may read the workspace's computed results this frame.
  bool results_readable() const { return !worker.busy(); }
  // A panel that needs a result it lacks calls this; it starts the job when allowed.
  void need(const std::string& what, std::function<void(Workspace&, WorkControl&)> job);

  void frame();  // the whole window's contents for one frame
};

// What a result panel shows without a kernel: open one, or fix the parse error.
void draw_no_kernel(const App& app);

// Draws the progress of the running job with a Cancel button; true when one is running.
bool draw_busy(App& app);

}  // namespace pb::workbench::gui
