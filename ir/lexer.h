// A character cursor over IR text with line/column tracking, for the hand-written parser.
// Every failure throws UserError located at the cursor (file:line:col plus the source line).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/diagnostic.h"

namespace pb::ir {

class Cursor {
 public:
  Cursor(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  size_t pos() const { return pos_; }
  void reset(size_t pos);
  int line() const { return line_; }
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  // Skips spaces and tabs (never newlines).
  void skip_blanks();
  // Skips blank lines and `#` / `//` comment lines; returns false at end of input.
  bool skip_to_content();
  // At end of line (after blanks and an optional `# comment` or `// comment`): consumes the newline.
  bool at_line_end();
  void expect_line_end();

  bool try_consume(std::string_view word);  // after skip_blanks; no word-boundary check
  bool try_keyword(std::string_view word);  // a whole word
  void expect(std::string_view word, std::string_view what = {});

  // `$N`
  bool at_ref() const;
  int read_ref();
  int64_t read_int();
  // read_int within [lo, hi]; outside it, a located error naming `what` and the range.
  int64_t read_int_in(int64_t lo, int64_t hi, const char* what);
  // A run of [A-Za-z0-9_.] characters.
  std::string read_word();
  // Characters up to (not including) any of `stops` or the line's end, trimmed; fails on an
  // empty result and on a carriage return inside the token.
  std::string read_until(std::string_view stops, std::string_view what);
  // A double-quoted string with C escapes; may span lines (older dumps print raw newlines).
  std::string read_string();
  // After an opening quote: raw text up to the closing quote that is followed by `, $` or the
  // end of a line (the reference writes assert messages unescaped).
  std::string read_raw_message();
  // Fails, located, unless text [start, end) is well-formed UTF-8.
  void check_utf8(size_t start, size_t end) const;
  // The rest of the current line, not consumed.
  std::string_view rest_of_line() const;

  [[noreturn]] void fail(const std::string& message, const std::string& remedy = {}) const;
  [[noreturn]] void fail_at(size_t pos, const std::string& message, const std::string& remedy = {}) const;
  const std::string& file() const { return file_; }

 private:
  void advance();
  std::string_view line_text(size_t line_start) const;

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};

}  // namespace pb::ir
