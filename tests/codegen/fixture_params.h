// Every fixture under fixtures/, as GoogleTest parameters: the paths relative to fixtures/ in
// sorted order, and a test name made from the path.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

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

// "passes/dce_x.fixture.json" -> "passes_dce_x".
inline std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - std::string(".fixture.json").size());
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

}  // namespace pb::test
