// Reads CHI IR text: the lines Quadrants' IR printer writes (and the older Taichi dialect),
// plus passbench's optional header. Errors are UserError with file:line:col and the line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/kernel.h"

namespace pb::ir {

std::unique_ptr<Kernel> parse_kernel(std::string_view text, const std::string& file = "<input>");

}  // namespace pb::ir
