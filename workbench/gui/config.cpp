#include "workbench/gui/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace pb::workbench::gui {

std::string config_dir() {
  fs::path dir;
  if (const char* d = std::getenv("PASSBENCH_GUI_CONFIG_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    dir = fs::path(x) / "passbench";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = fs::path(h) / ".config" / "passbench";
  else
    dir = fs::temp_directory_path() / "passbench";
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir.string();
}

GuiConfig load_config() {
  GuiConfig c;
  std::ifstream in(fs::path(config_dir()) / "gui.json");
  if (!in) return c;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) return c;
  c.last_file = j.value("last_file", std::string());
  c.width = std::max(400, j.value("width", c.width));
  c.height = std::max(300, j.value("height", c.height));
  return c;
}

void save_config(const GuiConfig& config) {
  nlohmann::json j = {{"last_file", config.last_file}, {"width", config.width}, {"height", config.height}};
  std::ofstream out(fs::path(config_dir()) / "gui.json", std::ios::trunc);
  out << j.dump(2) << "\n";
}

}  // namespace pb::workbench::gui
