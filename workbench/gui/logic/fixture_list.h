// The Fixtures panel's list: the fixtures of a folder, each pending, passed or failed, with a
// text filter and pass/fail toggles. Outcomes arrive from a worker thread through set_outcome.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workbench/workspace/fixture.h"

namespace pb::workbench::gui {

enum class FixtureState { pending, passed, failed };

struct FixtureEntry {
  std::string path;
  FixtureState state = FixtureState::pending;
  std::vector<std::string> failures;
};

struct FixtureFilter {
  std::string text;  // a substring of the path; empty: all
  bool show_passed = true, show_failed = true, show_pending = true;
};

class FixtureList {
 public:
  void set_paths(std::vector<std::string> paths);
  // Records the outcome of entry `index` (set_paths order).
  void set_outcome(size_t index, const FixtureOutcome& outcome);
  const std::vector<FixtureEntry>& entries() const { return entries_; }
  std::vector<size_t> visible(const FixtureFilter& filter) const;
  size_t count(FixtureState s) const;
  std::optional<size_t> first_failed() const;

 private:
  std::vector<FixtureEntry> entries_;
};

}  // namespace pb::workbench::gui
