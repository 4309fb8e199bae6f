// Internal to runtime/interp: statements with a tensor value, operand or pointee. A tensor value
// fills consecutive slots (detail::Op::lanes); a pointer to a tensor addresses its first element,
// the others follow it (a field's or ndarray's cell, an alloca's slots).
#pragma once

#include <string>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/state.h"
#include "runtime/interp/program.h"
#include "runtime/interp/temporaries.h"

namespace pb::runtime::detail {

struct TensorContext {
  const ir::Kernel& kernel;
  std::vector<ir::Value>& values;     // by slot
  std::vector<char>& defined;         // by slot
  std::vector<ir::Value*>& ptrs;      // by slot
  Temporaries& temps;                 // the kernel's global temporaries
  const std::string& label;           // `kernel "name"`, for errors
  const std::vector<ArgValue>& args;  // the kernel's arguments (tensors passed by value are read here)
};

// Runs `op` (op.tensor is set). Throws UserError, naming the statement, for what has no meaning
// here (a bit cast of a tensor, a tensor of pointers, a tensor temporary over other bytes).
void exec_tensor(const Op& op, TensorContext& ctx);

}  // namespace pb::runtime::detail
