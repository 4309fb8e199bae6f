// The IR diff the Pass timeline shows: lines of two texts marked unchanged, removed or added
// (dtl's shortest edit script), paired into side-by-side rows, with long unchanged runs folded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pb::workbench::gui {

enum class LineKind { same, removed, added };

struct DiffLine {
  LineKind kind = LineKind::same;
  int before_line = 0;  // 1-based line in the first text; 0 for an added line
  int after_line = 0;   // 1-based line in the second text; 0 for a removed line
  std::string text;
};

// Every line of both texts in order, removals before the additions that replace them.
std::vector<DiffLine> diff_lines(const std::string& before, const std::string& after);

// A stretch of diff_lines: shown, or folded (an unchanged run with more than 2 * context lines,
// less the `context` lines kept on each side of a change).
struct DiffSection {
  size_t first = 0, count = 0;
  bool folded = false;
};
std::vector<DiffSection> fold_unchanged(const std::vector<DiffLine>& lines, size_t context);

// Side by side: unchanged lines on both sides; a run of removals paired row by row with the
// run of additions that follows it (the shorter side padded with empty cells). Indexes into lines.
struct SideBySideRow {
  int left = -1, right = -1;  // -1: empty cell
};
std::vector<SideBySideRow> side_by_side(const std::vector<DiffLine>& lines, size_t first, size_t count);

struct DiffCounts {
  size_t added = 0, removed = 0, same = 0;
};
DiffCounts count_lines(const std::vector<DiffLine>& lines);

// `$N` hover highlighting: the statement reference ("$12") at 0-based `column` of `line`, if any.
std::optional<std::string> value_at(std::string_view line, size_t column);
enum class ValueRole { none, definition, use };
// Whether `line` defines `value` (`$12 = ...`, `<f32> $12 = ...`, `$12 : ...`) or uses it.
ValueRole value_role(std::string_view line, std::string_view value);

}  // namespace pb::workbench::gui
