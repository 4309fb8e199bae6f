// `passbench difftest`: the CLI face of workbench/workspace/difftest.h.
#pragma once

#include <string>

namespace pb::cli {

struct DifftestArgs {
  std::string file;    // FILE mode: a kernel or fixture
  std::string dump;    // which dump of a multi-dump log
  std::string inputs;  // FILE mode: inputs JSON (default: a fixture's own)
  std::string loss;    // gradcheck's loss (default: a fixture's, else the first written field with a gradient)
  std::string seeds;   // seed mode: A:B
  std::string shard;   // seed mode: I/N
  std::string out;     // where findings are written
  std::string backend = "all";
  std::string device;
  double rtol_f32 = 1e-5, rtol_f64 = 1e-12;  // backends and pipelines against the interpreter
  int jobs = 1;                              // seed mode: kernels checked at once
  bool reduce = true;                        // reduce each finding before writing it
  bool verbose = false;                      // seed mode: every oracle's line of every kernel
};
// One line per oracle and a summary (per kernel with findings in seed mode); 0 when no oracle
// failed and some oracle passed, 1 otherwise.
int cmd_difftest(const DifftestArgs& a);

}  // namespace pb::cli
