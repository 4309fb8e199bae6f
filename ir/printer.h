// The canonical text form of CHI IR: the statement lines Quadrants' IR printer writes, plus
// passbench's optional header (fields, index spaces, arguments) before `kernel`.
#pragma once

#include <functional>
#include <string>

#include "ir/kernel.h"

namespace pb::ir {

struct PrintOptions {
  bool header = true;  // print the declared fields/spaces/args before `kernel`
  // Optional trailing annotation per statement, printed as `  # text` (empty: none).
  std::function<std::string(const Stmt&)> annotate;
};

std::string print_kernel(const Kernel& k, const PrintOptions& opts = {});
// One statement's line without indent or nested blocks (`<f32> $3 = sin $2`), for messages.
std::string print_stmt(const Stmt& s, const Kernel& k);
// The header lines only.
std::string print_header(const Kernel& k);
std::string shape_to_string(const Shape& s);

}  // namespace pb::ir
