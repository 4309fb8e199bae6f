// Turns text as users paste it (a whole print_ir log, log prefixes, lines wrapped by a pasting
// tool, a statement list without `kernel {`, CRLF) into the one kernel text the parser reads,
// remembering where each line came from so parse errors point at the original file.
// Contract: the text of a single clean dump passes through unchanged, line for line.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"

namespace pb::ir {

// One dump found in a text: a `kernel { ... }` or a bare statement list.
struct DumpInfo {
  int index = 0;       // 1-based, in file order
  std::string title;   // the stage title before it (`Lowered:`, `[k_c4_0] Offloaded:`); may be empty
  int first_line = 0;  // 1-based lines of the original text, the dump's first and last lines
  int last_line = 0;
  bool bare = false;  // a statement list without `kernel {`
};

// The text handed to the parser, and the way back to the original lines.
struct PreparedDump {
  DumpInfo info;
  int dump_count = 0;  // how many dumps the original text holds
  // The original text reads as it is (a single dump and nothing else); `text` is then empty.
  bool unchanged = false;
  std::string text;
  std::string_view parser_input(std::string_view original) const { return unchanged ? original : text; }
  // Moves a diagnostic located in the parser's input to the original text's line and column.
  Diagnostic relocate(Diagnostic d, std::string_view original) const;

  struct Piece {
    size_t out_column = 0;  // 0-based column in the prepared line where this piece starts
    int line = 0;           // 1-based original line
    size_t column = 0;      // 0-based original column of the piece's first character
  };
  std::vector<int> line_origin;                            // per prepared line, its original line
  std::vector<std::pair<int, std::vector<Piece>>> joined;  // prepared line -> pieces, joined lines only
  std::vector<Piece> pieces_of(int prepared_line) const;
};

// The dumps `text` holds, in order (empty when it holds no statement at all).
std::vector<DumpInfo> find_dumps(std::string_view text);

// Selects one dump: `selection` is "" (the last dump, the one users most often mean), a 1-based
// number, or a title (exact, else a case-insensitive part of one title). Throws UserError naming
// the dumps when the selection matches none or several, and for frontend IR (located). A text
// holding no dump goes to the parser line for line, so that it says what it expected.
PreparedDump prepare_dump(std::string_view text, std::string_view selection, const std::string& file);

// A one-line-per-dump listing: number, original lines, title.
std::string format_dump_list(const std::vector<DumpInfo>& dumps);

}  // namespace pb::ir
