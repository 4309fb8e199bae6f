// The progress line of long work (compile, compare-lowerings, fixture runs): drawn on a terminal
// (a pseudo-terminal from `script`), never on a pipe. PASSBENCH_PROGRESS_AFTER_MS=0 shows it from
// the start, so short test runs are long enough.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cli_helpers.h"

using pb::test::run_cli;
using pb::test::slurp;
using pb::test::source_path;

namespace {

std::string decay() { return source_path("fixtures/codegen/decay_field_n5_f32.chi") + " --passes=reverse_ad"; }

// Runs passbench with `args` under a pseudo-terminal; returns everything it wrote (stdout and
// stderr share the terminal).
std::string run_on_terminal(const std::string& args) {
  const std::string out = pb::test::write_temp("terminal.out", "");
  const std::string inner = "PASSBENCH_PROGRESS_AFTER_MS=0 " + std::string(PASSBENCH_CLI) + " " + args;
  const std::string cmd = "script -qec '" + inner + "' /dev/null </dev/null >" + out + " 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), -1);
  return slurp(out);
}

// The same under a pipe (stderr to a file), with the progress delay at 0 too.
pb::test::CliResult run_piped(const std::string& args) {
  setenv("PASSBENCH_PROGRESS_AFTER_MS", "0", 1);
  pb::test::CliResult r = run_cli(args);
  unsetenv("PASSBENCH_PROGRESS_AFTER_MS");
  return r;
}

constexpr const char* kRedraw = "\r\033[K";

TEST(Progress, CompileShowsStageTaskAndPassOnATerminal) {
  const std::string text = run_on_terminal("compile " + decay() + " --target=msl --measure-passes");
  EXPECT_NE(text.find(std::string(kRedraw) + "compile: "), std::string::npos) << text;
  EXPECT_NE(text.find(", task 1 of 1"), std::string::npos) << text;
  EXPECT_NE(text.find(" of 34"), std::string::npos) << text;           // pass i of 34
  EXPECT_NE(text.find("#include <metal_stdlib>"), std::string::npos);  // the output itself
}

TEST(Progress, CompareLoweringsShowsTheLoweringOnATerminal) {
  const std::string text = run_on_terminal("compare-lowerings " + decay());
  EXPECT_NE(text.find(std::string(kRedraw) + "compare-lowerings: lowering "), std::string::npos) << text;
  EXPECT_NE(text.find(" of 16, "), std::string::npos) << text;
}

TEST(Progress, FixtureRunsShowTheFixtureOnATerminal) {
  const std::string text = run_on_terminal("fixture check -q " + source_path("fixtures/codegen"));
  EXPECT_NE(text.find(std::string(kRedraw) + "fixture check: fixture "), std::string::npos) << text;
  EXPECT_NE(text.find(" done: "), std::string::npos) << text;
  EXPECT_NE(text.find(".fixture.json"), std::string::npos) << text;
  EXPECT_NE(text.find("fixtures: "), std::string::npos) << text;  // the summary follows
}

TEST(Progress, QuietOnAPipe) {
  for (const std::string& args :
       {"compile " + decay() + " --target=msl --measure-passes", "compare-lowerings " + decay(),
        "fixture check -q " + source_path("fixtures/codegen")}) {
    const pb::test::CliResult r = run_piped(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("\033["), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
