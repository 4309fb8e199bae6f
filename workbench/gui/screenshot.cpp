#include "workbench/gui/screenshot.h"

#include <GL/gl.h>

#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace pb::workbench::gui {

std::string write_framebuffer_png(const std::string& path, int width, int height) {
  if (width <= 0 || height <= 0) return "the framebuffer is empty";
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  if (glGetError() != GL_NO_ERROR) return "glReadPixels failed";
  // OpenGL's rows run bottom to top; PNG's top to bottom.
  stbi_flip_vertically_on_write(1);
  if (!stbi_write_png(path.c_str(), width, height, 3, pixels.data(), width * 3))
    return "cannot write '" + path + "': check the folder exists and is writable";
  return "";
}

}  // namespace pb::workbench::gui
