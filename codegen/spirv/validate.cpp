#include "codegen/spirv/validate.h"

#include <fmt/format.h>

#include <spirv-tools/libspirv.hpp>
#include <sstream>

namespace pb::codegen::spirv {
namespace {

constexpr spv_target_env kEnv = SPV_ENV_VULKAN_1_1;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The validator appends the offending instruction, disassembled, as the message's last line.
std::string offending_instruction(const std::string& message) {
  auto lines = split_lines(message);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string t = trim(*it);
    if (!t.empty() && (t[0] == '%' || t.rfind("Op", 0) == 0)) return t;
  }
  return {};
}

std::string excerpt_at(const std::vector<std::string>& lines, size_t at, int context) {
  std::string out;
  size_t from = at > static_cast<size_t>(context) ? at - static_cast<size_t>(context) : 0;
  size_t to = std::min(lines.size(), at + static_cast<size_t>(context) + 1);
  for (size_t i = from; i < to; ++i) out += fmt::format("{} {}\n", i == at ? '>' : ' ', lines[i]);
  return out;
}

}  // namespace

std::string disassemble(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kEnv);
  std::string text, error;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t&, const char* m) { error += m; });
  if (!tools.Disassemble(words, &text, SPV_BINARY_TO_TEXT_OPTION_NO_HEADER | SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES))
    return "; cannot disassemble: " + error + "\n";
  return text;
}

std::string excerpt_around(const std::string& disassembly, const std::string& needle, int context) {
  if (needle.empty()) return {};
  auto lines = split_lines(disassembly);
  for (size_t i = 0; i < lines.size(); ++i)
    if (trim(lines[i]) == needle || lines[i].find(needle) != std::string::npos) return excerpt_at(lines, i, context);
  return {};
}

ValidationResult validate(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kEnv);
  ValidationResult r;
  size_t position = 0;
  tools.SetMessageConsumer([&](spv_message_level_t level, const char*, const spv_position_t& pos, const char* m) {
    if (level > SPV_MSG_ERROR || !r.message.empty()) return;
    r.message = m;
    position = pos.index;
  });
  spvtools::ValidatorOptions options;
  r.ok = tools.Validate(words.data(), words.size(), options);
  if (r.ok) return r;
  if (r.message.empty()) r.message = "the validator rejected the module without a message";
  std::string text = disassemble(words);
  r.excerpt = excerpt_around(text, offending_instruction(r.message));
  if (r.excerpt.empty()) {  // fall back to the reported instruction position
    auto lines = split_lines(text);
    if (!lines.empty()) r.excerpt = excerpt_at(lines, std::min(position, lines.size() - 1), 6);
  }
  return r;
}

}  // namespace pb::codegen::spirv
