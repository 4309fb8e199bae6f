#include "workbench/workspace/load.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/diagnostic.h"
#include "ir/dump_source.h"
#include "ir/json.h"
#include "ir/parser.h"

namespace pb::workbench {

namespace {
// Editors on some systems start UTF-8 text with a byte-order mark; it carries no content.
std::string without_bom(std::string text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  return text;
}
}  // namespace

std::string read_file(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return without_bom(ss.str());
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UserError(fmt::format("'{}' is a directory, not a file", path),
                    "give a file in it (`passbench fixture check` takes a directory of fixtures)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read '{}'", path), "check the path and permissions");
  ss << in.rdbuf();
  return without_bom(ss.str());
}

namespace {

[[noreturn]] void json_error_at(const std::string& text, const std::string& name, size_t off, std::string message) {
  Diagnostic d;
  d.file = name;
  d.line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < off && i < text.size(); ++i)
    if (text[i] == '\n') {
      ++d.line;
      line_start = i + 1;
    }
  d.column = static_cast<int>(std::min(off, text.size()) - line_start) + 1;
  d.message = "invalid JSON: " + std::move(message);
  size_t end = text.find('\n', line_start);
  d.source_line = text.substr(
      line_start, std::min<size_t>(end == std::string::npos ? text.size() - line_start : end - line_start, 200));
  throw UserError(d);
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& name) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (auto p = msg.find("syntax error"); p != std::string::npos) msg = msg.substr(p);
    json_error_at(text, name, e.byte > 0 ? e.byte - 1 : 0, msg);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double ("number overflow parsing '1e400'"): the library gives no
    // offset, so find the number's text.
    std::string msg = e.what();
    size_t q1 = msg.find('\'');
    size_t q2 = q1 == std::string::npos ? q1 : msg.find('\'', q1 + 1);
    size_t off = 0;
    if (q2 != std::string::npos) {
      off = text.find(msg.substr(q1 + 1, q2 - q1 - 1));
      if (off == std::string::npos) off = 0;
    }
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    json_error_at(text, name, off, msg + " (the number does not fit in a double)");
  }
}

std::unique_ptr<ir::Kernel> parse_kernel_source(const std::string& source, const std::string& name,
                                                const std::string& dump) {
  if (source.find('\0') != std::string::npos) {  // not text: never echoed back
    Diagnostic d = Diagnostic::plain(fmt::format("binary data ({} bytes), not IR text or a JSON kernel", source.size()),
                                     "give a CHI IR text dump (QD_DUMP_IR / print_ir output) or a JSON kernel");
    d.file = name;
    throw UserError(d);
  }
  size_t first = source.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && source[first] == '{') {
    if (!dump.empty() && dump != "1")
      throw UserError(fmt::format("{}: --dump={}: a JSON kernel holds one dump", name, dump));
    return ir::from_json(parse_json_text(source, name));
  }
  ir::PreparedDump prepared = ir::prepare_dump(source, dump, name);
  try {
    auto k = ir::parse_kernel(prepared.parser_input(source), name);
    // A dump pasted without its header: its sparse layout is read from its access chain.
    ir::declare_chain_layout(*k);
    return k;
  } catch (const UserError& e) {
    if (prepared.unchanged || e.diagnostic().line <= 0) throw;
    throw UserError(prepared.relocate(e.diagnostic(), source));
  }
}

std::unique_ptr<ir::Kernel> load_kernel(const std::string& path, const std::string& dump) {
  return parse_kernel_source(read_file(path), path == "-" ? "<stdin>" : path, dump);
}

std::vector<ir::DumpInfo> list_dumps(const std::string& path) {
  std::string text = read_file(path);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {  // a JSON kernel is one dump
    ir::DumpInfo json;
    json.index = 1;
    json.title = "(JSON)";
    json.first_line = 1;
    json.last_line = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    return {json};
  }
  return ir::find_dumps(text);
}

CommandInputs command_inputs(const std::string& inputs_flag, const std::string& kernel_path) {
  if (!inputs_flag.empty()) return {parse_json_text(read_file(inputs_flag), inputs_flag), inputs_flag};
  if (kernel_path == "-" || !kernel_path.ends_with(".json")) return {};  // stdin is read once, by the kernel
  std::string text = read_file(kernel_path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos || text[text.find_first_not_of(" \t\r\n")] != '{')
    return {};
  nlohmann::json j = parse_json_text(text, kernel_path);
  if (!j.is_object() || j.contains("format") || !(j.contains("kernel") || j.contains("kernel_text"))) return {};
  CommandInputs out;
  if (j.contains("gradcheck") && j["gradcheck"].is_object()) out.gradcheck = j["gradcheck"];
  if (j.contains("inputs_file") && j["inputs_file"].is_string()) {
    std::string p = (std::filesystem::path(kernel_path).parent_path() / j["inputs_file"].get<std::string>()).string();
    out.json = parse_json_text(read_file(p), p);
    out.name = p;
  } else if (j.contains("inputs")) {
    out.json = j["inputs"];
    out.name = kernel_path + ": inputs";
  }
  return out;
}

}  // namespace pb::workbench
