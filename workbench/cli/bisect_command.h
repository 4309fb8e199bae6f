// `passbench bisect-result`: which pass changed the answer. Runs the kernel on the inputs before
// the pipeline and after every pass (workbench::Workspace::bisect) and names the first pass whose
// results differ beyond the tolerance.
#pragma once

#include <string>

namespace pb::cli {

struct BisectArgs {
  std::string file;
  std::string dump;    // which dump of a multi-dump log; "" = the last
  std::string passes;  // "" = the fixture's pipeline
  std::string inputs;  // inputs JSON; "" = the fixture's, or the kernel's FILE.inputs.json, or none
  double rel = 1e-5, abs = 1e-8;
};

// Prints one row per pass and the verdict. 0: no pass changed the answer; 1: one did (or a pass
// failed); 2: bad input (the kernel before the pipeline does not run on the inputs, nothing compared).
int cmd_bisect_result(const BisectArgs& a);

}  // namespace pb::cli
