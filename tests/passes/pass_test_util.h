// IR-in/IR-out helpers for pass tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace pb::test {

inline std::unique_ptr<ir::Kernel> parse(const std::string& text) { return ir::parse_kernel(text, "<test>"); }

inline std::string print(const ir::Kernel& k) { return ir::print_kernel(k); }

// The verifier's messages joined, "" when the kernel is valid.
inline std::string verify_text(const ir::Kernel& k) {
  std::string out;
  for (const auto& e : ir::verify(k)) out += e.format() + "\n";
  return out;
}

}  // namespace pb::test
