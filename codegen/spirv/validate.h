// In-process validation and disassembly of emitted modules (SPIRV-Tools). A module that fails
// validation is a codegen bug: compile() turns the failure into an InternalError carrying the
// validator's message and the disassembly around the offending instruction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pb::codegen::spirv {

struct ValidationResult {
  bool ok = true;
  std::string message;  // the validator's message (empty when ok)
  std::string excerpt;  // disassembly lines around the offending instruction, marked with '>'
};

// Validates for Vulkan 1.1 (SPIR-V 1.3) with the default block layout rules (std430 storage
// buffers and push constants are laid out exactly, so no relaxed layout is needed).
ValidationResult validate(const std::vector<uint32_t>& words);

// One instruction per line, friendly names (%x_grad), no header comment. Returns a line saying
// why when the words cannot be disassembled.
std::string disassemble(const std::vector<uint32_t>& words);

// The lines of `disassembly` within `context` lines of the first line containing `needle`,
// the matching line marked with '>'. Empty when nothing matches.
std::string excerpt_around(const std::string& disassembly, const std::string& needle, int context = 6);

}  // namespace pb::codegen::spirv
