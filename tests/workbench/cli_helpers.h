// Runs the passbench binary as a user would and captures what it prints.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace pb::test {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `args` is appended to the binary's path as shell words (quote them yourself).
inline CliResult run_cli(const std::string& args, const std::string& stdin_text = "") {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("pb_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string tag = std::to_string(counter++);
  fs::path in = dir / ("in" + tag), out = dir / ("out" + tag), err = dir / ("err" + tag);
  std::ofstream(in, std::ios::binary) << stdin_text;
  std::string cmd =
      std::string(PASSBENCH_CLI) + " " + args + " <" + in.string() + " >" + out.string() + " 2>" + err.string();
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out.string());
  r.err = slurp(err.string());
  return r;
}

inline std::string write_temp(const std::string& name, const std::string& content) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pb_cli_files_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

// Removes this process's scratch folders when the test binary exits.
struct ScratchCleanup {
  ~ScratchCleanup() {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const char* prefix : {"pb_cli_test_", "pb_cli_files_", "pb_fixture_test_", "pb_empty_"})
      fs::remove_all(fs::temp_directory_path() / (prefix + std::to_string(::getpid())), ec);
  }
};
inline ScratchCleanup scratch_cleanup;

inline std::string source_path(const std::string& rel) { return std::string(PASSBENCH_SOURCE_DIR) + "/" + rel; }

}  // namespace pb::test
