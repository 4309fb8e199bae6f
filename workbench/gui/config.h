// What passbench-gui remembers between runs: the last opened file and the window size (in
// gui.json), beside ImGui's own imgui.ini, in $PASSBENCH_GUI_CONFIG_DIR, else
// $XDG_CONFIG_HOME/passbench, else ~/.config/passbench.
#pragma once

#include <string>

namespace pb::workbench::gui {

struct GuiConfig {
  std::string last_file;
  int width = 1400, height = 860;
};

std::string config_dir();  // created when missing
GuiConfig load_config();   // defaults when missing or unreadable
void save_config(const GuiConfig& config);

}  // namespace pb::workbench::gui
