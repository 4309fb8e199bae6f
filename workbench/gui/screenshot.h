// Writes the current OpenGL framebuffer (the back buffer just rendered) as an RGB PNG.
#pragma once

#include <string>

namespace pb::workbench::gui {

// Returns "" on success, else what went wrong.
std::string write_framebuffer_png(const std::string& path, int width, int height);

}  // namespace pb::workbench::gui
