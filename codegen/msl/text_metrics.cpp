#include "codegen/msl/text_metrics.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace pb::codegen::msl {
namespace {

constexpr std::array kStatementKeywords = {"return",  "if",    "else",     "for",  "while",   "do",   "switch", "case",
                                           "default", "break", "continue", "goto", "discard", "true", "false"};
constexpr std::array kQualifiers = {"const",   "thread", "threadgroup", "device", "constant",
                                    "precise", "highp",  "mediump",     "lowp"};
constexpr std::array kNonFunctionHeads = {"struct", "class", "union", "enum", "namespace", "typedef", "layout"};

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool skip_spaces(std::string_view& s) {
  const size_t before = s.size();
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s.size() != before;
}

// Consumes an identifier from the front of `s`; returns it, or an empty view if there is none.
std::string_view take_identifier(std::string_view& s) {
  if (s.empty() || !is_ident_start(s.front())) return {};
  size_t n = 1;
  while (n < s.size() && is_ident_char(s[n])) ++n;
  std::string_view ident = s.substr(0, n);
  s.remove_prefix(n);
  return ident;
}

// Consumes a balanced `open ... close` group (e.g. template arguments); false if unbalanced.
bool take_group(std::string_view& s, char open, char close) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == open) ++depth;
    if (s[i] == close && --depth == 0) {
      s.remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

template <size_t N>
bool contains(const std::array<const char*, N>& words, std::string_view word) {
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return word == w; });
}

bool is_identifier(std::string_view s) {
  std::string_view rest = s;
  return !take_identifier(rest).empty() && rest.empty();
}

bool is_function_header(std::string_view header) {
  header = trim(header);
  if (header.find('(') == std::string_view::npos) return false;
  std::string_view rest = header;
  return !contains(kNonFunctionHeads, take_identifier(rest));
}

}  // namespace

uint64_t count_lines(std::string_view text) {
  const auto newlines = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

bool is_local_declaration(std::string_view line) {
  std::string_view s = trim(line);
  if (s.empty() || s.back() != ';') return false;
  s.remove_suffix(1);
  s = s.substr(0, s.find('='));  // the declarator; the initializer may hold anything
  std::string_view type;
  for (;;) {
    skip_spaces(s);
    type = take_identifier(s);
    if (!contains(kQualifiers, type)) break;
  }
  if (type.empty() || contains(kStatementKeywords, type)) return false;
  bool separated = skip_spaces(s);
  if (!s.empty() && s.front() == '<') {
    if (!take_group(s, '<', '>')) return false;
    separated = skip_spaces(s);
  }
  if (!s.empty() && (s.front() == '&' || s.front() == '*')) {
    s.remove_prefix(1);
    separated = true;
    skip_spaces(s);
  }
  if (!separated || take_identifier(s).empty()) return false;
  skip_spaces(s);
  while (!s.empty() && s.front() == '[') {
    if (!take_group(s, '[', ']')) return false;
    skip_spaces(s);
  }
  return s.empty();
}

bool is_alias_copy(std::string_view line) {
  std::string_view s = trim(line);
  if (s.empty() || s.back() != ';') return false;
  s.remove_suffix(1);
  const size_t eq = s.find('=');
  if (eq == std::string_view::npos) return false;
  const std::string_view lhs = trim(s.substr(0, eq));
  const std::string_view rhs = trim(s.substr(eq + 1));
  return is_identifier(lhs) && is_identifier(rhs) && !contains(kStatementKeywords, rhs);
}

TextMetrics measure_text(std::string_view text) {
  TextMetrics metrics;
  metrics.bytes = text.size();
  metrics.lines = count_lines(text);
  int depth = 0;
  bool in_function = false;  // the open top-level block is a function body
  std::string_view previous_nonblank;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (depth > 0 && in_function) {
      if (is_local_declaration(line)) ++metrics.local_declarations;
      if (is_alias_copy(line)) ++metrics.alias_copies;
    }
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '{') {
        if (depth++ == 0) {
          const std::string_view before = trim(line.substr(0, i));
          in_function = is_function_header(before.empty() ? previous_nonblank : before);
        }
      } else if (line[i] == '}' && depth > 0) {
        --depth;
      }
    }
    if (!trim(line).empty()) previous_nonblank = line;
  }
  return metrics;
}

}  // namespace pb::codegen::msl
