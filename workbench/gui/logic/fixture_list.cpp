#include "workbench/gui/logic/fixture_list.h"

#include <algorithm>

namespace pb::workbench::gui {

void FixtureList::set_paths(std::vector<std::string> paths) {
  entries_.clear();
  for (auto& p : paths) entries_.push_back({std::move(p), FixtureState::pending, {}});
}

void FixtureList::set_outcome(size_t index, const FixtureOutcome& outcome) {
  FixtureEntry& e = entries_.at(index);
  e.state = outcome.passed ? FixtureState::passed : FixtureState::failed;
  e.failures = outcome.failures;
}

std::vector<size_t> FixtureList::visible(const FixtureFilter& filter) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    bool state_ok = (e.state == FixtureState::passed && filter.show_passed) ||
                    (e.state == FixtureState::failed && filter.show_failed) ||
                    (e.state == FixtureState::pending && filter.show_pending);
    if (state_ok && (filter.text.empty() || e.path.find(filter.text) != std::string::npos)) out.push_back(i);
  }
  return out;
}

size_t FixtureList::count(FixtureState s) const {
  return static_cast<size_t>(
      std::count_if(entries_.begin(), entries_.end(), [s](const auto& e) { return e.state == s; }));
}

std::optional<size_t> FixtureList::first_failed() const {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].state == FixtureState::failed) return i;
  return std::nullopt;
}

}  // namespace pb::workbench::gui
