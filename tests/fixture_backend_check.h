// The backend fixture tests' one check: a fixture's own request on a backend against the
// interpreter, through the product's path (workbench::check_fixture_on_backends, as `passbench
// fixture check --backend=B` runs it). Only fixtures that run are instantiated (negative fixtures
// that fail before the run and fixtures without inputs are left out by what they declare). Any
// error fails the test; it skips only where the fixture declares a known difference that leaves
// nothing to compare, or where the device lacks the hardware feature the kernel needs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/fixture_params.h"
#include "workbench/workspace/fixture_backends.h"

namespace pb::test {

inline std::vector<std::string> running_fixture_names() {
  std::vector<std::string> out;
  for (const std::string& name : fixture_names())
    if (workbench::fixture_backend_exemption(read_fixture(name)).empty()) out.push_back(name);
  return out;
}

inline std::string fixture_path(const std::string& name) {
  return (std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / name).string();
}

// Whether a skip reason is one the fixture or the hardware gives (not an error).
inline bool declared_skip(const std::string& why) {
  return why.find("a known difference") != std::string::npos || why.find(" lacks shader") != std::string::npos;
}

inline void check_fixture_on(const std::string& name, workbench::Backend b, const workbench::BackendOptions& o = {}) {
  workbench::FixtureBackendOutcome out;
  try {
    out = workbench::check_fixture_on_backends(fixture_path(name), {b}, o, {});
  } catch (const UserError& e) {
    FAIL() << e.what();
  }
  EXPECT_TRUE(out.passed) << workbench::format_backend_table(out.rows);
  if (!out.rows.empty()) return;
  ASSERT_FALSE(out.skipped.empty()) << "the fixture ran nothing and said nothing";
  for (const auto& why : out.skipped) ASSERT_TRUE(declared_skip(why)) << why;
  GTEST_SKIP() << out.skipped.front();
}

}  // namespace pb::test
