// `passbench jvpcheck` and `passbench adjointcheck`: forward-mode checks on the command line
// (`run --dual` is in commands.cpp).
#pragma once

#include <string>

#include "workbench/cli/commands.h"
#include "workbench/workspace/forward.h"

namespace pb::cli {

struct JvpcheckArgs {
  std::string file;
  std::string dump;                // which dump of a multi-dump log (--dump); "" = the last
  std::string inputs;              // path of the inputs JSON
  std::string backend = "interp";  // where the tangents run: interp, cpu, vulkan, all or a comma list
  workbench::JvpcheckOptions options;
};
// Prints the worst elements and a summary; 0 when every compared element agrees (and at least one
// was compared), 1 otherwise.
int cmd_jvpcheck(const JvpcheckArgs& a);

struct AdjointcheckArgs {
  std::string file;
  std::string dump;
  std::string inputs;
  std::string backend = "interp";  // where both runs happen: interp, cpu, vulkan, all or a comma list
  workbench::AdjointcheckOptions options;
};
// Prints one line per trial and a summary; 0 when every trial agrees and the kernels touched an
// element, 1 otherwise.
int cmd_adjointcheck(const AdjointcheckArgs& a);

}  // namespace pb::cli
