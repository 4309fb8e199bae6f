// Size measures of one SPIR-V module, read straight from its binary words.
// Returns nothing on a malformed binary (the caller reports it); never modifies the module.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pb::codegen::spirv {

struct ModuleStats {
  uint32_t id_bound = 0;            // header word 3: every result id is < id_bound
  uint64_t instructions = 0;        // instructions after the 5-word header
  uint64_t phis = 0;                // OpPhi instructions
  uint64_t function_variables = 0;  // OpVariable with storage class Function
  uint64_t bytes = 0;               // 4 x words, header included
  uint64_t live_ids = 0;            // distinct result ids defined by the module
};

// Parses `words` with SPIRV-Tools' binary parser. On failure returns nullopt and, if `error`
// is given, the parser's diagnostic.
std::optional<ModuleStats> measure_module(std::span<const uint32_t> words, std::string* error = nullptr);

}  // namespace pb::codegen::spirv
