// The subcommands of `passbench`. Each returns the process exit code: 0 success, 1 a check,
// verification or run failure, 2 usage error or bad input. They throw UserError for bad input;
// main() prints it and exits 2.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pb::cli {

struct PrintArgs {
  std::string file;
  std::string emit = "text";
  bool renumber = false;
};
int cmd_print(const PrintArgs& a);

int cmd_verify(const std::string& file);

struct RunArgs {
  std::string file;
  std::string inputs;
  std::vector<std::string> seed_grads;  // FIELD=VALUE
  bool shuffle = false;
  uint64_t seed = 0;
  bool f64 = false;
};
int cmd_run(const RunArgs& a);

int cmd_fixture(bool update, const std::vector<std::string>& paths);

}  // namespace pb::cli
