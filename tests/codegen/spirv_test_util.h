// Helpers for the SPIR-V tests: parse kernels, count instructions in a module, find lines of
// its disassembly.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <spirv/unified1/spirv.hpp>
#include <string>
#include <vector>

#include "codegen/spirv/compile.h"
#include "codegen/spirv/validate.h"
#include "ir/parser.h"

namespace pb::codegen::spirv::test {

inline std::unique_ptr<ir::Kernel> parse(const std::string& text) { return ir::parse_kernel(text, "test.chi"); }

// Instructions of `words` (after the header) as (opcode, operands) pairs.
struct Instruction {
  spv::Op opcode;
  std::vector<uint32_t> operands;
};
inline std::vector<Instruction> instructions(const std::vector<uint32_t>& words) {
  std::vector<Instruction> out;
  for (size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16;
    out.push_back({static_cast<spv::Op>(words[i] & 0xffff),
                   {words.begin() + static_cast<long>(i) + 1, words.begin() + static_cast<long>(i + count)}});
    i += count ? count : 1;
  }
  return out;
}

inline size_t count_opcode(const std::vector<uint32_t>& words, spv::Op opcode) {
  size_t n = 0;
  for (const auto& inst : instructions(words)) n += inst.opcode == opcode;
  return n;
}

// Lines of the disassembly that contain `needle`.
inline std::vector<std::string> lines_with(const std::vector<uint32_t>& words, const std::string& needle) {
  std::vector<std::string> out;
  std::string text = disassemble(words), line;
  for (char c : text) {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line.find(needle) != std::string::npos) out.push_back(line);
    line.clear();
  }
  return out;
}

}  // namespace pb::codegen::spirv::test
