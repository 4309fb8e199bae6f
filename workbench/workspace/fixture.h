// Regression fixtures: a kernel, its inputs and the expected results, written down as JSON
// (schema in docs/fixtures.md). `check` replays a fixture and compares; `update` rewrites the
// expectations from what the current build produces, so a reviewer sees changes as a diff.
#pragma once

#include <string>
#include <vector>

namespace pb::workbench {

struct FixtureOutcome {
  std::string path;
  bool passed = false;
  std::vector<std::string> failures;  // readable, may hold multi-line diffs
  bool changed = false;               // update only: the file was rewritten
};

// Directories expand (recursively, sorted) to the `*.fixture.json` files inside them.
std::vector<std::string> expand_fixture_paths(const std::vector<std::string>& paths);
FixtureOutcome check_fixture(const std::string& path);
FixtureOutcome update_fixture(const std::string& path);

}  // namespace pb::workbench
