// `passbench gradcheck`: gradient checking on the command line (`run --grad` is in commands.cpp).
#pragma once

#include <string>

#include "workbench/cli/commands.h"

namespace pb::cli {

// Forward + reverse run; prints the fields with their gradients as JSON, like `run`.

struct GradcheckArgs {
  std::string file;
  std::string dump;                     // which dump of a multi-dump log (--dump); "" = the last
  std::string inputs;                   // path of the inputs JSON; empty: all fields zero
  workbench::GradcheckOptions options;  // loss, wrt, eps, rel, abs, pipeline (inputs are read here)
  std::string backend = "interp";       // where the analytic gradient runs (--backend)
  std::string global_access = "error";  // --global-access: a violation of the access rule, error or warn
};
// Prints the worst elements, the kinks and a summary line; 0 when every compared element is
// within tolerance, 1 on a mismatch or a run-time error.
int cmd_gradcheck(const GradcheckArgs& a);

}  // namespace pb::cli
