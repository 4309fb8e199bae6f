// The workbench's panels: each a struct holding its own UI state, with a draw function over the
// App (which holds the Workspace every panel reads). Panels never compute what the workspace
// holds: they ask the App to compute it on the worker thread and draw the kept result.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/dump_source.h"
#include "passes/pipeline.h"
#include "workbench/gui/logic/diff_model.h"
#include "workbench/gui/logic/fixture_list.h"
#include "workbench/gui/logic/worker.h"

namespace pb::workbench::gui {

struct App;

struct SourcePanel {
  std::string path_field;
  std::vector<ir::DumpInfo> dumps;  // of the open file, when it is a log holding several
  std::string dumps_of;             // the file `dumps` lists
  int dump = -1;                    // index into dumps; -1: the last
  bool editing = false;
  std::string edit_text;
  void draw(App& app);
};

struct PipelinePanel {
  int pass_choice = 0;
  std::vector<passes::PipelineEntry> entries;  // mirrors the workspace's pipeline text
  std::string entries_text;                    // the text `entries` were read from
  std::string parse_error;
  void draw(App& app);
};

struct TimelinePanel {
  int selected = -1;
  bool side_by_side = true;
  int context = 3;
  // The diff of the selected row, kept while the selection and the records stay.
  const void* diff_records = nullptr;
  int diff_row = -1;
  std::vector<DiffLine> lines;
  std::vector<DiffSection> sections;
  std::set<size_t> unfolded;  // sections the user opened
  std::string highlight;      // the `$N` under the mouse: its definition and uses are tinted
  void draw(App& app);
};

struct BisectPanel {
  void draw(App& app);
};

struct SpirvPanel {
  int task = 0;
  // Until the user picks: log when the bound dwarfs the module (67,108,863 against a few hundred IDs).
  std::optional<bool> log_scale;
  bool show_disassembly = false;
  int max_id_bound = 0;  // mirrors the workspace's compile settings
  std::string disassembly;
  const void* disassembly_of = nullptr;  // the task `disassembly` shows
  void draw(App& app);
};

struct MslPanel {
  int task = 0;
  int metric = 0;  // which metric the lowering chart compares
  void draw(App& app);
};

struct RunPanel {
  std::string inputs_text;
  std::string inputs_error;
  bool inputs_loaded = false;
  bool reverse = false;
  bool after_pipeline = false;
  int loss = 0;
  bool on_cpu = true;  // backends compared with the interpreter
  bool on_vulkan = true;
  void draw(App& app);
  void draw_backends(App& app, const std::string& loss);
};

struct FixturesPanel {
  std::string folder;
  std::string save_path;  // where "Save as fixture" writes the workspace's kernel
  bool save_gradients = true;
  std::string save_message;  // the last save's outcome
  bool save_failed = false;
  bool save_requested = false;  // save at the next frame, as if the button were pressed (--save-fixture)
  FixtureFilter filter;
  int selected = -1;
  Worker worker;  // fixtures run beside the workspace's jobs
  std::mutex mutex;
  FixtureList list;  // guarded by mutex while the worker runs
  void run_folder(const std::string& dir);
  void draw(App& app);
  void draw_save(App& app);
};

}  // namespace pb::workbench::gui
