#include "ir/dump_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "ir/snode.h"

namespace pb::ir {

namespace {

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

size_t indent_of(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  return b == std::string_view::npos ? s.size() : b;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits into lines without their `\n` / `\r\n`; a UTF-8 byte-order mark is dropped.
std::vector<std::string_view> split_lines(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.emplace_back(text.substr(start));
      break;
    }
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// `$N` followed by ` =`, ` :` or ` continue`, at `pos`.
bool named_statement_at(std::string_view t, size_t pos) {
  if (pos >= t.size() || t[pos] != '$') return false;
  size_t i = pos + 1;
  if (i >= t.size() || !is_digit(t[i])) return false;
  while (i < t.size() && is_digit(t[i])) ++i;
  std::string_view rest = trim(t.substr(i));
  return rest.starts_with("=") || rest.starts_with(":") || rest.starts_with("continue");
}

bool starts_with_word(std::string_view t, std::string_view word) {
  if (!t.starts_with(word)) return false;
  if (t.size() == word.size()) return true;
  char c = t[word.size()];
  return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
}

// Whether a trimmed line begins like something the printers write at the start of a line; any
// other line is the tail of the previous one, wrapped by a pasting tool.
bool starts_statement(std::string_view t) {
  if (t.empty()) return true;
  char c = t[0];
  if (c == '}' || c == '#' || c == '@' || c == '"') return true;
  if (c == '$') return named_statement_at(t, 0);
  if (c == '<') {  // a type hint: `<T> $N =` (types never hold `$`)
    size_t dollar = t.find('$');
    return dollar != std::string_view::npos && dollar >= 2 && t.substr(dollar - 2, 2) == "> " &&
           named_statement_at(t, dollar);
  }
  if (is_digit(c)) {  // `12 : assert ...`
    size_t i = 0;
    while (i < t.size() && is_digit(t[i])) ++i;
    return trim(t.substr(i)).starts_with(":");
  }
  static constexpr std::string_view kWords[] = {
      "kernel", "body", "tls",      "bls",  "bls_epilogue", "tls_epilogue", "print", "decorate", "field",   "arg", "if",
      "while",  "for",  "function", "func", "break",        "continue",     "else",  "prologue", "epilogue"};
  for (std::string_view w : kWords)
    if (starts_with_word(t, w)) return true;
  return std::ranges::any_of(kSNodeKindNames, [&](std::string_view kind) { return starts_with_word(t, kind); });
}

bool is_header_line(std::string_view t) {
  if (starts_with_word(t, "field") || starts_with_word(t, "arg")) return true;
  return std::ranges::any_of(kSNodeKindNames, [&](std::string_view kind) { return starts_with_word(t, kind); });
}

bool looks_like_bare_list(std::string_view t) {
  return starts_statement(t) && !is_header_line(t) && !t.starts_with('#') && !t.starts_with('}');
}

bool opens_block(std::string_view t) { return t.ends_with('{'); }
bool closes_block(std::string_view t) { return t.starts_with('}'); }

// An odd number of unescaped quotes: a string literal continues on the next line.
bool leaves_string_open(std::string_view s, bool open) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '"') open = !open;
  }
  return open;
}

// A log or banner line: `[I 11/23/26 12:34:56.789 1234] [file.cpp:func@12] [k] Lowered:`,
// `[Taichi] version 1.7.0 ...`. Returns the title it announces (the text after the level and
// source-location groups, when it ends with ':'), or "" for a banner.
std::string log_line_title(std::string_view t) {
  std::string_view rest = t;
  for (int group = 0; group < 2 && rest.starts_with('['); ++group) {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) break;
    std::string_view inside = rest.substr(1, close - 1);
    bool level = inside.size() > 2 && std::string_view("IWEDTC").find(inside[0]) != std::string_view::npos &&
                 inside[1] == ' ' && is_digit(inside[2]);
    bool location = inside.find(".cpp:") != std::string_view::npos || inside.find(".h:") != std::string_view::npos ||
                    inside.find(".py:") != std::string_view::npos;
    if (!level && !location) break;
    rest = trim(rest.substr(close + 1));
  }
  if (rest.size() == t.size() && !rest.starts_with("[")) return {};
  return rest.ends_with(':') ? std::string(rest) : std::string();
}

enum class LineKind { blank, log, title, content };

// A statement line, or a statement wrapped over the original lines `line`..`last` (1-based).
struct Logical {
  int line = 0;
  int last = 0;
  int counted = 0;  // the brace depth change already counted for this line
};

struct Scan {
  std::vector<std::string_view> lines;
  struct Found {
    DumpInfo info;
    std::vector<Logical> body;
    size_t headers = 0;  // leading header lines (`field`, `dense`, ...): a bare list is wrapped after them
  };
  std::vector<Found> dumps;
};

// A line starting with `[` right after a statement line is the wrapped tail of that statement
// (`[S2place<f32>], index [$3] ...`) unless it is clearly a log line: a level group
// (`[I 11/23/26 ...]`), a source location, a banner word (`[Taichi]`), or a title ending in ':'.
bool clearly_log(std::string_view t) {
  if (t.ends_with(':')) return true;
  size_t close = t.find(']');
  if (close == std::string_view::npos) return false;
  std::string_view inside = t.substr(1, close - 1);
  if (inside.size() > 2 && std::string_view("IWEDTC").find(inside[0]) != std::string_view::npos && inside[1] == ' ' &&
      is_digit(inside[2]))
    return true;
  if (inside.find(".cpp:") != std::string_view::npos || inside.find(".py:") != std::string_view::npos) return true;
  return !inside.empty() && std::all_of(inside.begin(), inside.end(),
                                        [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

LineKind classify(std::string_view line, bool after_statement) {
  std::string_view t = trim(line);
  if (t.empty()) return LineKind::blank;
  if (t.starts_with('[') && (!after_statement || clearly_log(t))) return LineKind::log;
  // A C comment's markers on lines of their own (dumps quoted in the reference's C++ tests).
  if (t == "/*" || t == "*/") return LineKind::log;
  // A rule between dumps (`==========`, `----`).
  if (t.size() >= 3 && t.find_first_not_of("=-~*") == std::string_view::npos) return LineKind::log;
  if (t.ends_with(':') && !starts_statement(t)) return LineKind::title;
  return LineKind::content;
}

Scan scan(std::string_view text) {
  Scan s;
  s.lines = split_lines(text);
  std::string pending_title;
  Scan::Found* open = nullptr;  // the dump being read
  int depth = 0;
  bool kernel_done = false;  // `open` is a kernel whose closing brace was read
  bool in_string = false;
  bool last_was_content = false;
  std::string log_holder;           // the log line read last, joined with its wrapped tails
  std::string* log_text = nullptr;  // points at log_holder while a log line may continue
  auto close = [&] {
    open = nullptr;
    depth = 0;
    kernel_done = false;
    in_string = false;
  };
  for (size_t i = 0; i < s.lines.size(); ++i) {
    std::string_view raw = s.lines[i];
    int line_no = static_cast<int>(i) + 1;
    std::string_view t = trim(raw);
    LineKind kind = in_string ? LineKind::content : classify(raw, open && last_was_content);
    if (kind == LineKind::blank) {
      last_was_content = false;
      log_text = nullptr;
      continue;
    }
    // A log line wrapped by the terminal (`...[compile_to_offloads.cpp:taichi::lang::irpass::co`
    // / `mpile_to_offloads::...@18] [k] Simplified I:`): its tails start like no statement.
    bool log_incomplete = log_text && !log_text->ends_with(':');
    if ((kind == LineKind::content || kind == LineKind::title) && log_incomplete && !starts_statement(t)) {
      *log_text += t;
      kind = LineKind::log;
      t = *log_text;
    } else if (kind == LineKind::log && t.starts_with('[')) {
      log_holder = std::string(t);
      log_text = &log_holder;
    } else {
      log_text = nullptr;
    }
    // Prose outside a dump that starts like no statement (`before simplify`) names the next dump.
    bool between_dumps = !open || kernel_done || (depth == 0 && !last_was_content);
    if (kind == LineKind::content && between_dumps && !starts_statement(t)) kind = LineKind::title;
    if (kind == LineKind::log || kind == LineKind::title) {
      last_was_content = false;
      std::string title = kind == LineKind::log ? log_line_title(t) : std::string(t);
      if (open && depth > 0) continue;  // a log line printed in the middle of a dump
      if (open) close();
      if (!title.empty()) pending_title = title;
      continue;
    }
    // Content: a continuation of the previous line, or a new logical line.
    bool continues = open && last_was_content && !kernel_done && !in_string && !starts_statement(t);
    if (continues) {
      open->body.back().last = line_no;
    } else {
      bool is_kernel = !in_string && starts_with_word(t, "kernel");
      bool listed = open && open->info.bare && open->body.size() > open->headers;  // a bare list's statements
      if (open && depth == 0 && (kernel_done || (is_kernel && listed))) close();
      if (!open) {
        s.dumps.push_back({});
        open = &s.dumps.back();
        open->info.index = static_cast<int>(s.dumps.size());
        open->info.title = pending_title;
        open->info.first_line = line_no;
        open->info.bare = true;
        pending_title.clear();
      }
      if (is_kernel) open->info.bare = false;
      // Only a list that starts with a statement (after header lines, if any) is wrapped; anything
      // else goes to the parser as written, so that it says what it expected.
      bool leading = open->headers == open->body.size();
      if (leading && (is_header_line(t) || t.starts_with('#')))
        ++open->headers;
      else if (leading && !is_kernel && !looks_like_bare_list(t))
        open->info.bare = false;
      open->body.push_back({line_no, line_no, 0});
    }
    open->info.last_line = line_no;
    last_was_content = true;
    bool string_was_open = in_string;
    in_string = leaves_string_open(raw, in_string);
    if (string_was_open || in_string) continue;  // a line inside a string literal opens and closes nothing
    // Brace depth counts whole logical lines: a wrapped line's `{` arrives with its last piece.
    Logical& l = open->body.back();
    // A `#` comment line opens and closes nothing, whatever it quotes (`# CHECK: $3 : if $2 {`).
    bool comment = trim(s.lines[l.line - 1]).starts_with('#');
    bool closes = !comment && closes_block(trim(s.lines[l.line - 1]));
    int delta = comment ? 0 : (opens_block(trim(s.lines[l.last - 1])) ? 1 : 0) - (closes ? 1 : 0);
    depth += delta - l.counted;
    l.counted = delta;
    if (!open->info.bare && depth <= 0 && closes) kernel_done = true;
  }
  for (Scan::Found& d : s.dumps)  // header lines and nothing else: no list to wrap
    if (d.headers == d.body.size()) d.info.bare = false;
  return s;
}

}  // namespace

std::vector<DumpInfo> find_dumps(std::string_view text) {
  std::vector<DumpInfo> out;
  for (auto& d : scan(text).dumps) out.push_back(d.info);
  return out;
}

std::string format_dump_list(const std::vector<DumpInfo>& dumps) {
  std::string out;
  for (const auto& d : dumps)
    out += fmt::format("  {:>2}  lines {}-{}{}  {}\n", d.index, d.first_line, d.last_line, d.bare ? " (bare list)" : "",
                       d.title.empty() ? "(no title)" : d.title);
  return out;
}

namespace {

// Line `n` (1-based) of `text`, without its line end; a byte-order mark is not part of line 1.
std::string_view nth_line(std::string_view text, int n) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  size_t start = 0;
  for (int i = 1; i < n; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return {};
    ++start;
  }
  size_t end = std::min(text.find('\n', start), text.size());
  std::string_view line = text.substr(start, end - start);
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

// The original line and 0-based column of 0-based column `col` of a prepared line made of `pieces`.
std::pair<int, size_t> locate(const std::vector<PreparedDump::Piece>& pieces, size_t col) {
  const PreparedDump::Piece* p = &pieces.front();
  for (const auto& q : pieces)
    if (q.out_column <= col) p = &q;
  return {p->line, p->column + (col >= p->out_column ? col - p->out_column : 0)};
}

std::string printable(std::string_view line) {
  std::string src(line.substr(0, 200));
  for (char& c : src)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
  if (line.size() > 200) src += "...";
  return src;
}

}  // namespace

std::vector<PreparedDump::Piece> PreparedDump::pieces_of(int prepared_line) const {
  auto it = std::lower_bound(joined.begin(), joined.end(), prepared_line,
                             [](const auto& entry, int line) { return entry.first < line; });
  if (it != joined.end() && it->first == prepared_line) return it->second;
  return {{0, line_origin[prepared_line - 1], 0}};
}

Diagnostic PreparedDump::relocate(Diagnostic d, std::string_view original) const {
  if (unchanged || d.line < 1 || static_cast<size_t>(d.line) > line_origin.size()) return d;
  // A message naming a prepared line (`... at line 7`) names the original one instead.
  if (size_t at = d.message.rfind("at line "); at != std::string::npos) {
    size_t digits = at + 8, end = digits;
    while (end < d.message.size() && is_digit(d.message[end])) ++end;
    int n = end > digits ? std::atoi(d.message.substr(digits, end - digits).c_str()) : 0;
    if (n >= 1 && static_cast<size_t>(n) <= line_origin.size())
      d.message.replace(digits, end - digits, std::to_string(line_origin[n - 1]));
  }
  auto [line, column] = locate(pieces_of(d.line), d.column > 0 ? static_cast<size_t>(d.column - 1) : 0);
  d.line = line;
  d.column = static_cast<int>(column) + 1;
  d.source_line = printable(nth_line(original, line));
  return d;
}

namespace {

// The column of a frontend identifier (`@tmp0`, `#@tmp0[]`) outside string literals and comments,
// if any.
std::optional<size_t> frontend_identifier(std::string_view line) {
  bool in_string = false;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    if (line[i] == '\\' && in_string) {
      ++i;
      continue;
    }
    if (line[i] == '"') in_string = !in_string;
    if (in_string) continue;
    // A comment (`# ...`, `// ...`) runs to the end of the line; `#@tmp0[]` is a frontend access.
    if ((line[i] == '#' && line[i + 1] != '@') || (line[i] == '/' && line[i + 1] == '/')) return std::nullopt;
    if (line[i] != '@') continue;
    char next = line[i + 1];
    if (std::isalpha(static_cast<unsigned char>(next)) || next == '_') return i;
  }
  return std::nullopt;
}

// Requires at least one dump.
const Scan::Found& select(const Scan& s, std::string_view selection, const std::string& file) {
  std::vector<DumpInfo> infos;
  infos.reserve(s.dumps.size());
  for (const auto& d : s.dumps) infos.push_back(d.info);
  std::string listing = format_dump_list(infos);
  if (selection.empty()) return s.dumps.back();
  bool numeric = std::all_of(selection.begin(), selection.end(), is_digit);
  if (numeric) {
    size_t n = 0;
    for (char c : selection) n = std::min<size_t>(n * 10 + static_cast<size_t>(c - '0'), 1000000);
    if (n < 1 || n > s.dumps.size())
      throw UserError(
          fmt::format("{}: --dump={}: the file holds {} dump(s):\n{}", file, selection, s.dumps.size(), listing),
          "give a number from the list, or a title");
    return s.dumps[n - 1];
  }
  std::vector<const Scan::Found*> matches;
  for (const auto& d : s.dumps)
    if (d.info.title == selection) matches.push_back(&d);
  if (matches.empty()) {
    std::string want = lower(selection);
    for (const auto& d : s.dumps)
      if (lower(d.info.title).find(want) != std::string::npos) matches.push_back(&d);
  }
  if (matches.size() == 1) return *matches.front();
  throw UserError(fmt::format("{}: --dump={} matches {} of the file's dumps:\n{}", file, selection,
                              matches.empty() ? std::string("none") : std::to_string(matches.size()), listing),
                  "give the dump's number (--dump=N) or more of its title");
}

}  // namespace

PreparedDump prepare_dump(std::string_view text, std::string_view selection, const std::string& file) {
  Scan s = scan(text);
  PreparedDump out;
  if (s.dumps.empty()) {  // nothing that looks like a dump: the parser says what it expected
    if (!selection.empty()) throw UserError(fmt::format("{}: --dump={}: the file holds no dump", file, selection));
    out.unchanged = true;
    return out;
  }
  const Scan::Found& d = select(s, selection, file);
  out.info = d.info;
  out.dump_count = static_cast<int>(s.dumps.size());
  size_t non_blank = std::count_if(s.lines.begin(), s.lines.end(), [](std::string_view l) { return !trim(l).empty(); });
  bool joins = std::any_of(d.body.begin(), d.body.end(), [](const Logical& l) { return l.last != l.line; });
  out.unchanged = s.dumps.size() == 1 && !d.info.bare && !joins && non_blank == d.body.size();
  auto emit = [&](std::string_view line, int origin) {
    out.text.append(line);
    out.text += '\n';
    out.line_origin.push_back(origin);
  };
  // Each line keeps its original number where it can: dropped lines (titles, logs, other dumps,
  // the tails of joined lines) become blank lines.
  int shift = 0;  // 1 once a bare list's `kernel {` line has taken a line of its own
  auto pad_to = [&](int line) {
    while (static_cast<int>(out.line_origin.size()) + 1 < line + shift)
      emit("", static_cast<int>(out.line_origin.size()) + 1 - shift);
  };
  // A bare list's `kernel {` goes on the line before its first statement (after any header
  // lines), or, when that line is taken, on a line of its own that shifts the rest down by one.
  auto open_kernel = [&](int first) {
    if (static_cast<int>(out.line_origin.size()) + 1 >= first + shift) ++shift;
    pad_to(first - 1);
    emit("kernel {", first);
  };
  std::string joined_text;
  for (size_t i = 0; i < d.body.size(); ++i) {
    const Logical& l = d.body[i];
    if (d.info.bare && i == d.headers && !out.unchanged) open_kernel(l.line);
    std::vector<PreparedDump::Piece> pieces{{0, l.line, 0}};
    std::string_view line = s.lines[l.line - 1];
    if (l.last != l.line) {
      joined_text = line;
      for (int tail = l.line + 1; tail <= l.last; ++tail) {
        joined_text += ' ';
        pieces.push_back({joined_text.size(), tail, indent_of(s.lines[tail - 1])});
        joined_text += trim(s.lines[tail - 1]);
      }
      line = joined_text;
    }
    if (auto col = frontend_identifier(line)) {
      auto [at_line, at_column] = locate(pieces, *col);
      Diagnostic diag;
      diag.file = file;
      diag.line = at_line;
      diag.column = static_cast<int>(at_column) + 1;
      diag.source_line = printable(s.lines[at_line - 1]);
      diag.message =
          "this is frontend IR (the `Initial IR` stage, before lowering): passbench reads the lowered and "
          "offloaded stages";
      diag.remedy =
          "paste a later dump of the same kernel: print_ir / QD_DUMP_IR print one per stage (`Lowered:`, "
          "`Offloaded:`); pick one with --dump=N or --dump=TITLE";
      throw UserError(diag);
    }
    if (out.unchanged) continue;
    pad_to(l.line);
    if (pieces.size() > 1) out.joined.emplace_back(static_cast<int>(out.line_origin.size()) + 1, std::move(pieces));
    emit(line, l.line);
  }
  if (out.unchanged) return out;
  if (d.info.bare) emit("}", d.info.last_line);
  return out;
}

}  // namespace pb::ir
