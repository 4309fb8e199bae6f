// Where a kernel uses types a consumer cannot handle: backends that compile only part of the
// type system refuse the kernel up front, naming the first use, instead of failing mid-emission.
#pragma once

#include <optional>
#include <string>

#include "ir/kernel.h"

namespace pb::ir {

// The first use of a type `accept` refuses, as text naming it: a field (`field x is f16`), an
// argument, or a statement (its printed line); nullopt when every type is accepted.
std::optional<std::string> first_type_use_outside(const Kernel& k, bool (*accept)(DataType));

}  // namespace pb::ir
