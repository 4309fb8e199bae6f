// `passbench replay` and `passbench passes`: the pass workbench on the command line.
#pragma once

#include <string>
#include <vector>

namespace pb::cli {

struct ReplayArgs {
  std::string file;
  std::string dump;    // which dump of a multi-dump log (--dump); "" = the last
  std::string passes;  // pipeline text; empty: the fixture's pipeline
  bool passes_given = false;
  bool print_after_all = false;
  bool print_before_all = false;
  bool print_pipeline_passes = false;  // print the expanded pipeline and exit
  bool annotate_ib = false;            // mark independent blocks in printed IR
  std::vector<std::string> print_after;
  std::vector<std::string> print_before;
  std::string print_changed;  // "", "full" or "diff"
  bool time_passes = false;
  bool stats = false;
  bool stats_all = false;  // with --stats: zero counters and every per-item note too
  bool verify_each = true;
  bool verify_expanded = false;  // --verify-expanded: also after each pass of a named pipeline
  std::string emit = "text";
  std::string output;  // -o; empty: stdout
  std::string inputs;
  bool run = false;
  std::string stop_after;
  std::string stop_before;
  int64_t bisect_limit = -1;
  std::string reproducer_dir;  // empty: the system temp folder
  std::string color = "auto";  // auto|always|never
};
int cmd_replay(const ReplayArgs& a);
int cmd_passes();

}  // namespace pb::cli
