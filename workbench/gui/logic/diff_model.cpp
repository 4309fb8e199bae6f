#include "workbench/gui/logic/diff_model.h"

#include <algorithm>
#include <dtl/dtl.hpp>
#include <sstream>

namespace pb::workbench::gui {

namespace {
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
}  // namespace

std::vector<DiffLine> diff_lines(const std::string& before, const std::string& after) {
  auto a = split_lines(before);
  auto b = split_lines(after);
  dtl::Diff<std::string> d(a, b);
  d.compose();
  std::vector<DiffLine> out;
  for (const auto& [text, info] : d.getSes().getSequence()) {
    DiffLine line;
    line.text = text;
    line.before_line = static_cast<int>(info.beforeIdx);
    line.after_line = static_cast<int>(info.afterIdx);
    line.kind = info.type == dtl::SES_ADD      ? LineKind::added
                : info.type == dtl::SES_DELETE ? LineKind::removed
                                               : LineKind::same;
    out.push_back(std::move(line));
  }
  // dtl may list an addition before the removal it replaces; within each changed run, removals first.
  for (size_t i = 0; i < out.size();) {
    size_t j = i;
    while (j < out.size() && out[j].kind != LineKind::same) ++j;
    std::stable_partition(out.begin() + static_cast<long>(i), out.begin() + static_cast<long>(j),
                          [](const DiffLine& l) { return l.kind == LineKind::removed; });
    i = j == i ? i + 1 : j;
  }
  return out;
}

std::vector<DiffSection> fold_unchanged(const std::vector<DiffLine>& lines, size_t context) {
  std::vector<DiffSection> out;
  auto shown = [&](size_t first, size_t count) {
    if (count == 0) return;
    if (!out.empty() && !out.back().folded) {
      out.back().count += count;
    } else {
      out.push_back({first, count, false});
    }
  };
  size_t i = 0;
  while (i < lines.size()) {
    size_t j = i;
    while (j < lines.size() && lines[j].kind == LineKind::same) ++j;
    size_t run = j - i;
    if (run > 0) {
      size_t keep_before = i == 0 ? 0 : context;            // context after the previous change
      size_t keep_after = j == lines.size() ? 0 : context;  // context before the next change
      if (run > keep_before + keep_after + 1) {
        shown(i, keep_before);
        out.push_back({i + keep_before, run - keep_before - keep_after, true});
        shown(j - keep_after, keep_after);
      } else {
        shown(i, run);
      }
    }
    size_t k = j;
    while (k < lines.size() && lines[k].kind != LineKind::same) ++k;
    shown(j, k - j);
    i = k;
  }
  return out;
}

std::vector<SideBySideRow> side_by_side(const std::vector<DiffLine>& lines, size_t first, size_t count) {
  std::vector<SideBySideRow> rows;
  size_t i = first, end = first + count;
  while (i < end) {
    if (lines[i].kind == LineKind::same) {
      rows.push_back({static_cast<int>(i), static_cast<int>(i)});
      ++i;
      continue;
    }
    std::vector<int> removed, added;
    while (i < end && lines[i].kind != LineKind::same) {
      (lines[i].kind == LineKind::removed ? removed : added).push_back(static_cast<int>(i));
      ++i;
    }
    for (size_t r = 0; r < std::max(removed.size(), added.size()); ++r)
      rows.push_back({r < removed.size() ? removed[r] : -1, r < added.size() ? added[r] : -1});
  }
  return rows;
}

DiffCounts count_lines(const std::vector<DiffLine>& lines) {
  DiffCounts c;
  for (const auto& l : lines)
    (l.kind == LineKind::added ? c.added : l.kind == LineKind::removed ? c.removed : c.same)++;
  return c;
}

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

std::optional<std::string> value_at(std::string_view line, size_t column) {
  if (column >= line.size()) return std::nullopt;
  size_t start = column;
  while (start > 0 && is_digit(line[start])) --start;  // back over digits to the `$`
  if (line[start] != '$' || start + 1 >= line.size() || !is_digit(line[start + 1])) return std::nullopt;
  size_t end = start + 1;
  while (end < line.size() && is_digit(line[end])) ++end;
  if (column >= end) return std::nullopt;
  return std::string(line.substr(start, end - start));
}

ValueRole value_role(std::string_view line, std::string_view value) {
  ValueRole role = ValueRole::none;
  for (size_t at = line.find(value); at != std::string_view::npos; at = line.find(value, at + 1)) {
    size_t end = at + value.size();
    if (end < line.size() && is_digit(line[end])) continue;  // $1 inside $12
    // The defining occurrence is the first token after the indentation and an optional `<type>`.
    size_t first = line.find_first_not_of(' ');
    if (line[first] == '<') first = line.find_first_not_of(' ', line.find('>', first) + 1);
    if (at == first && end + 2 <= line.size() && (line.substr(end, 2) == " =" || line.substr(end, 2) == " :"))
      return ValueRole::definition;
    role = ValueRole::use;
  }
  return role;
}

}  // namespace pb::workbench::gui
