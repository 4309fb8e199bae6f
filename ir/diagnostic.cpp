#include "ir/diagnostic.h"

#include <fmt/format.h>

#include "ir/assert.h"

namespace pb {

std::string Diagnostic::format() const {
  std::string out;
  if (!file.empty()) out += file + ":";
  if (line > 0) out += fmt::format("{}:{}:", line, column);
  if (!out.empty()) out += " ";
  out += "error: " + message;
  if (!source_line.empty()) {
    out += "\n  " + source_line + "\n";
    out += "  " + std::string(column > 1 ? static_cast<size_t>(column - 1) : 0, ' ') + "^";
  }
  if (!remedy.empty()) out += "\n  remedy: " + remedy;
  return out;
}

[[noreturn]] void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("internal error at {}:{}: {}", file, line, what));
}

}  // namespace pb
