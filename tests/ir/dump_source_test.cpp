// ir/dump_source: picking one dump out of pasted text, and mapping errors back to its lines.
#include "ir/dump_source.h"

#include <gtest/gtest.h>

#include <random>

#include "ir/parser.h"
#include "ir/printer.h"

namespace pb::ir {
namespace {

const char* kClean =
    "kernel {\n"
    "  <i32> $0 = const 1\n"
    "  <*i32> $1 = global ptr [x], index [] activate=true\n"
    "  $2 : global store [$1 <- $0]\n"
    "}\n";

// A print_ir log as Taichi 0.6 printed it: banners, then one dump per stage.
const char* kLog =
    "[Taichi] mode=development\n"
    "[Taichi] <dev mode>, llvm 10.0.0, commit 28e005cc, python 3.8.3\n"
    "[I 07/04/20 01:29:35.034] [compile_to_offloads.cpp:operator()@23] Initial IR:\n"
    "kernel {\n"
    "  #@tmp0[] = 0\n"
    "}\n"
    "[I 07/04/20 01:29:35.035] [compile_to_offloads.cpp:operator()@23] Lowered:\n"
    "kernel {\n"
    "  <i32> $0 = const 2\n"
    "  <*i32> $1 = global ptr [x], index [] activate=true\n"
    "  $2 : global store [$1 <- $0]\n"
    "}\n"
    "[I 07/04/20 01:29:35.036] [compile_to_offloads.cpp:operator()@23] Simplified I:\n"
    "kernel {\n"
    "  <i32> $0 = const 3\n"
    "  <*i32> $1 = global ptr [x], index [] activate=true\n"
    "  $2 : global store [$1 <- $0]\n"
    "}\n";

UserError error_of(auto&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a UserError";
  return UserError("none");
}

TEST(DumpSource, CleanDumpPassesThroughLineForLine) {
  auto p = prepare_dump(kClean, "", "k.chi");
  EXPECT_TRUE(p.unchanged);  // the parser reads the original, no copy
  EXPECT_EQ(p.parser_input(kClean), kClean);
  EXPECT_EQ(p.dump_count, 1);
  EXPECT_FALSE(p.info.bare);
}

TEST(DumpSource, ListsTheDumpsOfALogWithTheirStageTitles) {
  auto dumps = find_dumps(kLog);
  ASSERT_EQ(dumps.size(), 3u);
  EXPECT_EQ(dumps[0].title, "Initial IR:");
  EXPECT_EQ(dumps[1].title, "Lowered:");
  EXPECT_EQ(dumps[2].title, "Simplified I:");
  EXPECT_EQ(dumps[1].first_line, 8);
  EXPECT_EQ(dumps[1].last_line, 12);
  EXPECT_EQ(format_dump_list(dumps),
            "   1  lines 4-6  Initial IR:\n"
            "   2  lines 8-12  Lowered:\n"
            "   3  lines 14-18  Simplified I:\n");
}

// Comment lines quote IR (FileCheck lines in tests/passes/*.chi): their braces open and close
// nothing, so each kernel is still a dump of its own.
TEST(DumpSource, BracesInCommentLinesDoNotNestDumps) {
  const char* text =
      "# CHECK: $1 : if $0 {\n"
      "kernel a {\n"
      "  <u1> $0 = const true\n"
      "}\n"
      "# CHECK: }\n"
      "# CHECK: }\n"
      "kernel b {\n"
      "  # CHECK: $3 : for in range($1, $2) {\n"
      "  <i32> $1 = const 0\n"
      "}\n"
      "kernel c {\n"
      "}\n";
  auto dumps = find_dumps(text);
  ASSERT_EQ(dumps.size(), 3u) << format_dump_list(dumps);
  EXPECT_EQ(format_dump_list(dumps),
            "   1  lines 1-4  (no title)\n"
            "   2  lines 5-10  (no title)\n"
            "   3  lines 11-12  (no title)\n");
  EXPECT_NE(prepare_dump(text, "2", "t").text.find("kernel b"), std::string::npos);
}

TEST(DumpSource, SelectsByNumberByTitleAndTakesTheLastByDefault) {
  EXPECT_NE(prepare_dump(kLog, "", "log").text.find("const 3"), std::string::npos);
  EXPECT_NE(prepare_dump(kLog, "2", "log").text.find("const 2"), std::string::npos);
  EXPECT_NE(prepare_dump(kLog, "lowered", "log").text.find("const 2"), std::string::npos);
  EXPECT_NE(prepare_dump(kLog, "Simplified I:", "log").text.find("const 3"), std::string::npos);
  auto k = parse_kernel(prepare_dump(kLog, "2", "log").text, "log");
  EXPECT_EQ(k->root().size(), 3u);
}

TEST(DumpSource, ASelectionMatchingNoneOrSeveralDumpsListsThem) {
  auto none = error_of([] { prepare_dump(kLog, "Offloaded", "log"); });
  EXPECT_NE(std::string(none.what()).find("--dump=Offloaded matches none"), std::string::npos) << none.what();
  EXPECT_NE(std::string(none.what()).find("2  lines 8-12  Lowered:"), std::string::npos) << none.what();
  auto many = error_of([] { prepare_dump(kLog, "l", "log"); });
  EXPECT_NE(std::string(many.what()).find("matches 3"), std::string::npos) << many.what();
  auto range = error_of([] { prepare_dump(kLog, "4", "log"); });
  EXPECT_NE(std::string(range.what()).find("--dump=4: the file holds 3 dump(s)"), std::string::npos) << range.what();
}

TEST(DumpSource, FrontendIrIsALocatedErrorNamingTheStage) {
  auto e = error_of([] { prepare_dump(kLog, "1", "log"); });
  EXPECT_EQ(e.diagnostic().line, 5);
  EXPECT_EQ(e.diagnostic().column, 4);
  EXPECT_NE(e.diagnostic().message.find("frontend IR"), std::string::npos);
  EXPECT_EQ(e.diagnostic().source_line, "  #@tmp0[] = 0");
}

TEST(DumpSource, AnAtSignInACommentIsNotFrontendIr) {
  std::string_view text = "# calls @main_t0 (see // @x)\nkernel {\n  <i32> $0 = const 1 // @y\n}\n";
  auto p = prepare_dump(text, "", "f.chi");
  EXPECT_EQ(parse_kernel(p.parser_input(text), "f.chi")->root().size(), 1u);
}

TEST(DumpSource, TheLexerRefusesAFrontendStatementRatherThanDroppingItAsAComment) {
  auto e = error_of([] { parse_kernel("kernel {\n  #@tmp0[] = 0\n}\n", "f.chi"); });
  EXPECT_EQ(e.diagnostic().line, 2);
  EXPECT_NE(e.diagnostic().message.find("frontend IR"), std::string::npos);
}

TEST(DumpSource, ParseErrorsPointAtTheOriginalLines) {
  std::string log =
      std::string(kLog) + "[I 07/04/20 01:29:35.037] [x.cpp:f@1] Broken:\nkernel {\n  <i32> $0 = cosnt 3\n}\n";
  auto p = prepare_dump(log, "", "log");
  auto e = error_of([&] {
    try {
      parse_kernel(p.text, "log");
    } catch (const UserError& u) {
      throw UserError(p.relocate(u.diagnostic(), log));
    }
  });
  EXPECT_EQ(e.diagnostic().line, 21);
  EXPECT_EQ(e.diagnostic().source_line, "  <i32> $0 = cosnt 3");
}

TEST(DumpSource, JoinsAStatementWrappedOverTwoLinesAndMapsColumnsIntoTheSecond) {
  std::string text =
      "kernel {\n"
      "  <*i32> $1 = global ptr [x], index []\n"
      "    activate=true\n"
      "  <i32> $2 = global load $1 $9\n"
      "}\n";
  auto p = prepare_dump(text, "", "w.chi");
  // The tail's line stays, blank, so that later lines keep their numbers.
  EXPECT_EQ(p.text,
            "kernel {\n  <*i32> $1 = global ptr [x], index [] activate=true\n\n  <i32> $2 = global load $1 $9\n}\n");
  std::string wrapped_error =
      "kernel {\n"
      "  <*i32> $1 = global ptr [x], index [] activate=true\n"
      "  <i32> $2 = global load\n"
      "      $1 junk\n"
      "}\n";
  auto q = prepare_dump(wrapped_error, "", "w.chi");
  auto e = error_of([&] {
    try {
      parse_kernel(q.text, "w.chi");
    } catch (const UserError& u) {
      throw UserError(q.relocate(u.diagnostic(), wrapped_error));
    }
  });
  EXPECT_EQ(e.diagnostic().line, 4) << e.what();
  EXPECT_EQ(e.diagnostic().column, 10) << e.what();
  EXPECT_EQ(e.diagnostic().source_line, "      $1 junk");
}

TEST(DumpSource, LinesKeepTheirNumbersAndMessagesNamingALineAreMapped) {
  auto p = prepare_dump(kLog, "2", "log");
  EXPECT_EQ(p.text.substr(0, 8), std::string(7, '\n') + "k");  // the dump starts on line 8, as in the log
  std::string bare = "<i32> $0 = const 1\n<i32> $1 = cosnt 1\n";
  auto q = prepare_dump(bare, "", "b.chi");  // `kernel {` goes on top: prepared line 3 is line 2
  Diagnostic d;
  d.line = 3;
  d.column = 13;
  d.message = "unsupported statement 'cosnt' at line 3";
  Diagnostic r = q.relocate(d, bare);
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(r.column, 13);
  EXPECT_EQ(r.message, "unsupported statement 'cosnt' at line 2");
  EXPECT_EQ(r.source_line, "<i32> $1 = cosnt 1");
}

TEST(DumpSource, AWrappedLogLineIsOneTitle) {
  std::string text =
      "[I 08/26/20 19:11:30.900] [compile_to_offloads.cpp:taichi::lang::irpass::`anon\n"
      "ymous-namespace'::make_pass_printer::<lambda_fe1d>\n"
      "::operator ()@18] [fib_c5_0_grad_grad] Simplified I:\n"
      "kernel {\n"
      "  <i32> $0 = const 5\n"
      "}\n";
  auto dumps = find_dumps(text);
  ASSERT_EQ(dumps.size(), 1u);
  EXPECT_EQ(dumps[0].title, "[fib_c5_0_grad_grad] Simplified I:");
  EXPECT_EQ(dumps[0].first_line, 4);
}

TEST(DumpSource, RulesBetweenDumpsAreSkipped) {
  std::string text =
      std::string("before simplify\n==========\n") + kClean + "==========\nafter simplify\n==========\n" + kClean;
  auto dumps = find_dumps(text);
  ASSERT_EQ(dumps.size(), 2u);
  EXPECT_EQ(dumps[0].title, "before simplify");
  EXPECT_EQ(dumps[1].title, "after simplify");
  EXPECT_EQ(parse_kernel(prepare_dump(text, "1", "r.chi").text, "r.chi")->root().size(), 3u);
}

TEST(DumpSource, ABareStatementListIsReadAsAKernel) {
  std::string text =
      "<i32> $0 = const 1\r\n"
      "<*i32> $1 = global ptr [x], index [] activate=true\r\n"
      "$2 : global store [$1 <- $0]\r\n";
  auto p = prepare_dump(text, "", "b.chi");
  EXPECT_TRUE(p.info.bare);
  auto k = parse_kernel(p.text, "b.chi");
  EXPECT_EQ(print_kernel(*k), kClean);
}

// A header written above a pasted list (to declare what the dump leaves out, such as sparse
// SNodes) stays a header: `kernel {` opens after it, and errors still name the pasted lines.
TEST(DumpSource, HeaderLinesAboveABareListStayTheHeader) {
  std::string text =
      "field x : i32[]\n"
      "dense S : [4]\n"
      "<i32> $0 = const 1\n"
      "<*i32> $1 = global ptr [x], index [] activate=true\n"
      "$2 : global store [$1 <- $0]\n";
  auto p = prepare_dump(text, "", "h.chi");
  EXPECT_TRUE(p.info.bare);
  auto k = parse_kernel(p.text, "h.chi");
  EXPECT_EQ(print_kernel(*k), "dense S : [4]\nfield x : i32[]\n" + std::string(kClean));
  std::string broken = text;
  broken.replace(broken.find("const 1"), 5, "cosnt");
  auto q = prepare_dump(broken, "", "h.chi");
  Diagnostic d = error_of([&] {
                   try {
                     parse_kernel(q.text, "h.chi");
                   } catch (const UserError& u) {
                     throw UserError(q.relocate(u.diagnostic(), broken));
                   }
                 }).diagnostic();
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.source_line, "<i32> $0 = cosnt 1");
  // Header lines and nothing else: no list to wrap, and the parser says what it expected.
  EXPECT_FALSE(prepare_dump("dense S : [4]\n", "", "h.chi").info.bare);
}

TEST(DumpSource, ByteOrderMarkAndCrlfAreAccepted) {
  std::string text =
      "\xEF\xBB\xBFkernel {\r\n  <i32> $0 = const 1\r\n  <*i32> $1 = global ptr [x], index [] activate=true\r\n"
      "  $2 : global store [$1 <- $0]\r\n}\r\n";
  auto p = prepare_dump(text, "", "c.chi");
  EXPECT_TRUE(p.unchanged);  // the parser takes BOM and CRLF itself
  auto k = parse_kernel(p.parser_input(text), "c.chi");
  EXPECT_EQ(print_kernel(*k), kClean);
}

TEST(DumpSource, AStringLiteralSpanningLinesIsKeptAsWritten) {
  std::string text =
      "kernel {\n"
      "  <i32> $0 = const 1\n"
      "  print $0, \"\n"
      "\"\n"
      "}\n";
  auto p = prepare_dump(text, "", "s.chi");
  EXPECT_EQ(p.parser_input(text), text);
  std::string logged = "Lowered:\n" + text;  // with a title the text is prepared, and still kept
  EXPECT_EQ(prepare_dump(logged, "", "s.chi").text, "\n" + text);
}

TEST(DumpSource, TextWithoutStatementsGoesToTheParserAsWritten) {
  auto p = prepare_dump("hello world\n", "", "g.chi");
  EXPECT_TRUE(p.unchanged);
  EXPECT_TRUE(find_dumps("hello world\n").empty());
  EXPECT_TRUE(prepare_dump("[Taichi] only a banner\n", "", "g.chi").unchanged);
  EXPECT_TRUE(prepare_dump("", "", "g.chi").unchanged);
}

// Mangled pastes (lines dropped, duplicated, cut, joined, characters flipped) end in a kernel or
// a UserError whose location lies inside the text: never a crash, a hang or another exception.
TEST(DumpSource, MangledPastesAreKernelsOrLocatedErrors) {
  std::mt19937 rng(16);
  std::string base = std::string(kLog) + "<i32> $0 = const 1\n  print $0, \"\n\"\n";
  int located = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string t = base;
    for (int edits = 1 + rng() % 4; edits > 0; --edits) {
      if (t.empty()) break;
      size_t at = rng() % t.size();
      switch (rng() % 5) {
        case 0:
          t.erase(at, 1 + rng() % 12);
          break;
        case 1: {
          std::string copy = t.substr(rng() % t.size(), 1 + rng() % 20);
          t.insert(at, copy);
          break;
        }
        case 2:
          t[at] = "\n\r\"[]{}$<>:# @\xEF"[rng() % 16];
          break;
        case 3:
          t.insert(at, 1, '\n');
          break;
        default:
          if (t[at] == '\n') t[at] = ' ';
          break;
      }
    }
    int lines = 1 + static_cast<int>(std::count(t.begin(), t.end(), '\n'));
    for (const char* selection : {"", "1", "Lowered"}) {
      try {
        auto p = prepare_dump(t, selection, "m.chi");
        try {
          parse_kernel(p.parser_input(t), "m.chi");
        } catch (const UserError& e) {
          Diagnostic d = p.relocate(e.diagnostic(), t);
          ASSERT_LE(d.line, lines) << t;
          ++located;
        }
      } catch (const UserError& e) {
        ASSERT_LE(e.diagnostic().line, lines) << t;
      }
    }
  }
  EXPECT_GT(located, 1000);
}

}  // namespace
}  // namespace pb::ir
