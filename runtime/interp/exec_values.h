// Internal to runtime/interp: what the interpreter does for the kinds no backend compiles
// (ir::has_no_backend), for argument loads and for the access chain's index arithmetic
// (linearized, offset, bit_extract): values computed from operands and arguments alone, kept
// apart from interpreter.cpp's state.
#pragma once

#include <optional>
#include <random>
#include <span>
#include <string>

#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime::detail {

struct ValuesContext {
  const ir::Kernel& kernel;
  const State& state;
  std::mt19937_64& rng;      // the run's seeded generator (rand draws from it)
  const std::string& label;  // `kernel "name"`, for errors
  int64_t iteration;         // of the running top-level loop; -1 outside one
};

// The value `s` gives (nullopt: none), from its operands' values `inputs` (pointers are empty
// values) and its working kind. A statement with no meaning here throws UserError naming it
// and the kernel, with a remedy.
std::optional<ir::Value> exec_values(const ir::Stmt& s, ir::ScalarKind kind, std::span<const ir::Value> inputs,
                                     ValuesContext& ctx);

}  // namespace pb::runtime::detail
