// Reading kernels from files: text (Quadrants dumps, passbench .chi) or JSON, detected from
// the content. "-" reads standard input.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/dump_source.h"
#include "ir/kernel.h"

namespace pb::workbench {

// Reads a whole file ("-" = stdin). Throws UserError when it cannot be read.
std::string read_file(const std::string& path);
// Parses text or JSON (the first non-blank character '{' means JSON). `name` is used in
// diagnostics (file:line:col, lines of the original text). Text goes through
// ir::prepare_dump first: `dump` selects one of several dumps ("" = the last; a number; a title).
std::unique_ptr<ir::Kernel> parse_kernel_source(const std::string& source, const std::string& name,
                                                const std::string& dump = {});
std::unique_ptr<ir::Kernel> load_kernel(const std::string& path, const std::string& dump = {});
// The dumps a text file holds (print_ir logs hold one per stage).
std::vector<ir::DumpInfo> list_dumps(const std::string& path);
// Parses JSON text, turning syntax errors into located UserErrors.
nlohmann::json parse_json_text(const std::string& text, const std::string& name);

// The inputs a command runs `kernel_path` with: the file given with --inputs (`inputs_flag`),
// else the inputs a fixture file carries ("inputs", or "inputs_file" beside it), else none.
// `name` is what errors about them cite (the file, or `FIXTURE: inputs`). `gradcheck` is a
// fixture's "gradcheck" object (its loss and wrt fields), for gradcheck's defaults.
struct CommandInputs {
  std::optional<nlohmann::json> json;
  std::string name;
  std::optional<nlohmann::json> gradcheck;
};
CommandInputs command_inputs(const std::string& inputs_flag, const std::string& kernel_path);

}  // namespace pb::workbench
