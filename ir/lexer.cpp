#include "ir/lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace pb::ir {

void Cursor::advance() {
  if (text_[pos_] == '\n') {
    ++line_;
    line_start_ = pos_ + 1;
  }
  ++pos_;
}

void Cursor::reset(size_t pos) {
  // Only used to back up within the current line.
  pos_ = pos;
}

void Cursor::skip_blanks() {
  while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\r')) advance();
}

bool Cursor::skip_to_content() {
  for (;;) {
    skip_blanks();
    if (at_end()) return false;
    if (peek() == '\n') {
      advance();
      continue;
    }
    if (peek() == '/' && peek(1) == '/') {
      while (!at_end() && peek() != '\n') advance();
      continue;
    }
    if (peek() == '#') {
      if (peek(1) == '@')
        fail("`#@` starts a frontend IR statement (a field access of the `Initial IR` stage), not a comment",
             "paste a later dump of the kernel (`Lowered:` or `Offloaded:`)");
      while (!at_end() && peek() != '\n') advance();
      continue;
    }
    return true;
  }
}

bool Cursor::at_line_end() {
  skip_blanks();
  // `# ...` and `// ...` comments. Neither reference printer writes `//`; passbench's own `//`
  // (floor division in stack size expressions) sits inside parentheses, read before the end.
  if (peek() == '#' || (peek() == '/' && peek(1) == '/'))
    while (!at_end() && peek() != '\n') advance();
  if (at_end()) return true;
  if (peek() == '\n') {
    advance();
    return true;
  }
  return false;
}

void Cursor::expect_line_end() {
  if (!at_line_end()) fail(fmt::format("unexpected '{}' after the end of the statement", std::string(rest_of_line())));
}

bool Cursor::try_consume(std::string_view word) {
  skip_blanks();
  if (text_.substr(pos_, word.size()) != word) return false;
  for (size_t i = 0; i < word.size(); ++i) advance();
  return true;
}

bool Cursor::try_keyword(std::string_view word) {
  skip_blanks();
  if (text_.substr(pos_, word.size()) != word) return false;
  char after = pos_ + word.size() < text_.size() ? text_[pos_ + word.size()] : '\0';
  if (std::isalnum(static_cast<unsigned char>(after)) || after == '_') return false;
  for (size_t i = 0; i < word.size(); ++i) advance();
  return true;
}

void Cursor::expect(std::string_view word, std::string_view what) {
  if (!try_consume(word)) {
    std::string found(rest_of_line().substr(0, 20));
    fail(fmt::format("expected '{}'{}{}", word, what.empty() ? "" : fmt::format(" {}", what),
                     found.empty() ? " before the end of the line" : fmt::format(", found '{}'", found)));
  }
}

bool Cursor::at_ref() const { return peek() == '$'; }

int64_t Cursor::read_int_in(int64_t lo, int64_t hi, const char* what) {
  skip_blanks();
  size_t start = pos_;
  int64_t v = read_int();
  if (v < lo || v > hi) fail_at(start, fmt::format("{} {} is outside {}..{}", what, v, lo, hi));
  return v;
}

int Cursor::read_ref() {
  skip_blanks();
  if (peek() != '$') fail("expected a statement reference such as $3");
  size_t start = pos_;
  advance();
  if (!std::isdigit(static_cast<unsigned char>(peek()))) fail_at(start, "expected digits after '$'");
  int64_t v = read_int();
  if (v > 2000000000) fail_at(start, "statement number is too large");
  return static_cast<int>(v);
}

int64_t Cursor::read_int() {
  skip_blanks();
  size_t start = pos_;
  if (peek() == '-') advance();
  while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, v);
  if (start == pos_ || ec != std::errc() || p != text_.data() + pos_) fail_at(start, "expected an integer");
  return v;
}

std::string Cursor::read_word() {
  skip_blanks();
  size_t start = pos_;
  while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.')) advance();
  return std::string(text_.substr(start, pos_ - start));
}

std::string Cursor::read_until(std::string_view stops, std::string_view what) {
  skip_blanks();
  size_t start = pos_;
  while (!at_end() && peek() != '\n' && peek() != '\r' && stops.find(peek()) == std::string_view::npos) advance();
  // A carriage return ends a line only before its line feed (CRLF); inside a token it would not
  // print back (the JSON form refuses it too).
  if (!at_end() && peek() == '\r') {
    size_t after = text_.find_first_not_of('\r', pos_);
    if (after != std::string_view::npos && text_[after] != '\n')
      fail_at(pos_, fmt::format("a carriage return inside {}", what));
  }
  std::string_view t = text_.substr(start, pos_ - start);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  if (t.empty()) fail_at(start, fmt::format("expected {}", what));
  return std::string(t);
}

namespace {

// Offset of the first byte of `s` that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF, as JSON writers require), or npos.
size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80                   ? 1
               : (b >= 0xc2 && b <= 0xdf) ? 2
               : (b >= 0xe0 && b <= 0xef) ? 3
               : (b >= 0xf0 && b <= 0xf4) ? 4
                                          : 0;
    if (n == 0 || i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return i;
    auto b1 = static_cast<unsigned char>(s[i + (n > 1 ? 1 : 0)]);
    if ((b == 0xe0 && b1 < 0xa0) || (b == 0xed && b1 > 0x9f) || (b == 0xf0 && b1 < 0x90) || (b == 0xf4 && b1 > 0x8f))
      return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace

void Cursor::check_utf8(size_t start, size_t end) const {
  size_t bad = invalid_utf8_at(text_.substr(start, end - start));
  if (bad != std::string_view::npos)
    fail_at(start + bad, fmt::format("byte 0x{:02x} is not UTF-8", static_cast<unsigned char>(text_[start + bad])),
            "strings and messages are UTF-8 (so they survive JSON); re-encode the file");
}

std::string Cursor::read_string() {
  skip_blanks();
  if (peek() != '"') fail("expected a string literal");
  size_t start = pos_;
  advance();
  std::string out;
  for (;;) {
    if (at_end()) fail_at(start, "unterminated string literal");
    char c = peek();
    advance();
    if (c == '"') {
      check_utf8(start, pos_);
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (at_end()) fail_at(start, "unterminated string literal");
    char e = peek();
    advance();
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case '"':
      case '\\':
        out += e;
        break;
      default:
        out += '\\';
        out += e;
    }
  }
}

std::string Cursor::read_raw_message() {
  size_t start = pos_;
  for (size_t i = pos_; i < text_.size(); ++i) {
    if (text_[i] != '"') continue;
    size_t j = i + 1;
    while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\t' || text_[j] == '\r')) ++j;
    bool ends = j >= text_.size() || text_[j] == '\n' || text_[j] == '#';
    bool args = j + 1 < text_.size() && text_[j] == ',' && text_.find('$', j) == text_.find_first_not_of(" \t", j + 1);
    if (!ends && !args) continue;
    check_utf8(start, i);
    std::string out(text_.substr(start, i - start));
    while (pos_ <= i) advance();
    return out;
  }
  fail_at(start, "unterminated assert message");
}

std::string_view Cursor::rest_of_line() const {
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  return text_.substr(pos_, end - pos_);
}

std::string_view Cursor::line_text(size_t line_start) const {
  size_t end = text_.find('\n', line_start);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view t = text_.substr(line_start, end - line_start);
  if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
  return t;
}

void Cursor::fail(const std::string& message, const std::string& remedy) const { fail_at(pos_, message, remedy); }

void Cursor::fail_at(size_t pos, const std::string& message, const std::string& remedy) const {
  // Locate `pos`: it is on the current line or an earlier one.
  size_t ls = pos < line_start_ ? 0 : line_start_;
  int line = pos < line_start_ ? 1 : line_;
  if (pos < line_start_) {
    for (size_t i = 0; i < pos; ++i)
      if (text_[i] == '\n') {
        ++line;
        ls = i + 1;
      }
  }
  Diagnostic d;
  d.file = file_;
  d.line = line;
  d.column = static_cast<int>(pos - ls) + 1;
  d.message = message;
  std::string src(line_text(ls));
  // Keep diagnostics printable when the input is binary garbage.
  for (char& c : src)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
  if (src.size() > 200) src = src.substr(0, 200) + "...";
  d.source_line = src;
  d.remedy = remedy;
  throw UserError(d);
}

}  // namespace pb::ir
