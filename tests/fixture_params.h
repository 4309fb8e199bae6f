// Every fixture under fixtures/, as GoogleTest parameters (the paths relative to fixtures/ in
// sorted order, and a test name made from the path), and a fixture's JSON and kernel.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ir/json.h"
#include "ir/parser.h"

namespace pb::test {

inline std::vector<std::string> fixture_names() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  fs::path root = fs::path(PASSBENCH_SOURCE_DIR) / "fixtures";
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().string().ends_with(".fixture.json"))
      out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

// The error stage a fixture declares (expect.error.stage), "" when it expects none.
inline std::string declared_error_stage(const nlohmann::json& fx) {
  if (!fx.contains("expect") || !fx["expect"].contains("error")) return "";
  return fx["expect"]["error"].value("stage", "");
}

// Fixtures whose kernel reads and verifies by their own declaration (not a negative fixture of
// the parse or verify stage): a test over them fails on any reading error.
inline std::vector<std::string> readable_fixture_names() {
  std::vector<std::string> out;
  for (const std::string& name : fixture_names()) {
    std::ifstream in(std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / name);
    nlohmann::json fx = nlohmann::json::parse(in);
    std::string stage = declared_error_stage(fx);
    bool verifies = !fx.contains("expect") || !fx["expect"].contains("verify") || fx["expect"]["verify"] == "ok";
    if (stage != "parse" && stage != "verify" && verifies) out.push_back(name);
  }
  return out;
}

// "passes/dce_x.fixture.json" -> "passes_dce_x".
inline std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - std::string(".fixture.json").size());
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixture file `name` (relative to fixtures/) as JSON.
inline nlohmann::json read_fixture(const std::string& name) {
  return nlohmann::json::parse(read_file(std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / name));
}

// The fixture's kernel: `kernel_text`, or the file `kernel` beside it, as IR text or JSON. Throws
// UserError when it does not parse (negative fixtures).
inline std::unique_ptr<ir::Kernel> fixture_kernel(const nlohmann::json& fx, const std::string& name) {
  std::filesystem::path dir = (std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / name).parent_path();
  std::string text = fx.contains("kernel_text") ? fx["kernel_text"].get<std::string>()
                                                : read_file(dir / fx["kernel"].get<std::string>());
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return ir::from_json(nlohmann::json::parse(text));
  return ir::parse_kernel(text, name);
}

}  // namespace pb::test
