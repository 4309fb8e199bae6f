// Internal to runtime/interp: formatting of assert messages. The arithmetic of unary, binary
// and atomic statements lives in ir/eval.h, shared with constant folding.
#pragma once

#include <span>
#include <string>

#include "ir/value.h"

namespace pb::runtime::detail {

// printf-style formatting of an assert message: %d %i %u %x %X %o %c %f %F %e %E %g %G %a %A %s
// and %% (flags, width, precision and length modifiers accepted). A directive without a matching
// argument stays as written; arguments left over are appended as " [a, b]".
std::string format_printf(const std::string& format, std::span<const ir::Value> args);

}  // namespace pb::runtime::detail
