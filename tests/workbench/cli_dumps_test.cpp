// `passbench dumps` and `--dump` on the commands that load a kernel: a print_ir log is listed,
// one dump is selected, and errors point at the log's own lines.
#include <gtest/gtest.h>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::write_temp;

namespace {

const char* kLog =
    "[Taichi] version 1.7.0, llvm 15.0.4, commit 2fd24490, linux, python 3.10.12\n"
    "[I 11/23/26 12:34:56.789 1234] [compile_to_offloads.cpp:operator()@22] [k_c4_0] Lowered:\n"
    "kernel {\n"
    "  <i32> $0 = const 1\n"
    "  <*i32> $1 = global ptr [S1place<i32>], index [] activate=true\n"
    "  $2 : global store [$1 <- $0]\n"
    "}\n"
    "[I 11/23/26 12:34:56.790 1234] [compile_to_offloads.cpp:operator()@22] [k_c4_0] Simplified I:\n"
    "kernel {\n"
    "  <i32> $0 = const 2\n"
    "  <*i32> $1 = global ptr [S1place<i32>],\n"
    "    index [] activate=true\n"
    "  $2 : global store [$1 <- $0]\n"
    "}\n";

TEST(CliDumps, ListsTheDumpsOfALog) {
  auto r = run_cli("dumps " + write_temp("log1.txt", kLog));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "   1  lines 3-7  [k_c4_0] Lowered:\n   2  lines 9-14  [k_c4_0] Simplified I:\n");
}

TEST(CliDumps, AJsonKernelIsOneDump) {
  auto j = run_cli("print --emit=json -", "kernel {\n  <i32> $0 = const 1\n}\n");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto r = run_cli("dumps " + write_temp("k.json", j.out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("   1  lines 1-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(JSON)"), std::string::npos) << r.out;
  auto bad = run_cli("verify --dump=2 " + write_temp("k2.json", j.out));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--dump=2: a JSON kernel holds one dump"), std::string::npos) << bad.err;
}

TEST(CliDumps, EveryLoadingCommandTakesDump) {
  std::string log = write_temp("log2.txt", kLog);
  auto last = run_cli("print " + log);
  EXPECT_EQ(last.exit_code, 0) << last.err;
  EXPECT_NE(last.out.find("const 2"), std::string::npos) << last.out;  // the last dump, wrapped line joined
  auto first = run_cli("print --dump=1 " + log);
  EXPECT_NE(first.out.find("const 1"), std::string::npos) << first.err;
  auto titled = run_cli("verify --dump=lowered " + log);
  EXPECT_EQ(titled.exit_code, 0) << titled.err;
  for (const char* cmd : {"run", "replay", "gradcheck --loss='S1place<i32>'", "compile --target=spvasm"}) {
    auto r = run_cli(std::string(cmd) + " --dump=3 '" + log + "'");
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("--dump=3: the file holds 2 dump(s)"), std::string::npos) << cmd << ": " << r.err;
  }
}

TEST(CliDumps, ParseErrorsNameTheLogsOwnLines) {
  std::string text =
      std::string(kLog) + "[I 11/23/26 12:34:56.791 1234] [x.cpp:f@1] [k_c4_0] Broken:\n<i32> $0 = cosnt 3\n";
  auto r = run_cli("verify " + write_temp("log3.txt", text));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("log3.txt:16:"), std::string::npos) << r.err;  // a bare list on line 16 of the log
  EXPECT_NE(r.err.find("<i32> $0 = cosnt 3"), std::string::npos) << r.err;
}

}  // namespace
