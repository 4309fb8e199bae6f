// f64 elementary functions for SPIR-V, where GLSL.std.450 defines them for 16/32-bit floats
// only, and an exact fmod (drivers' OpFRem is not: lavapipe's loses bits): the algorithms of codegen/math/f64.h emitted
// as SPIR-V. Each function is defined once per module, as an OpFunction the first use emits, and called; its float
// arithmetic is decorated NoContraction, so drivers neither fuse nor reassociate it.
#pragma once

#include <map>

#include "codegen/spirv/module_builder.h"

namespace pb::codegen::spirv {

enum class F64Function { sin, cos, tan, tanh, asin, acos, exp, log, atan2, pow, fmod };

class F64Math {
 public:
  explicit F64Math(ModuleBuilder& b) : b_(b) {}
  // Calls `fn` on f64 `args` (two for atan2, pow and fmod) inside the open block. The module must
  // declare the Float64 capability.
  Id call(F64Function fn, const Operands& args);

 private:
  Id define(F64Function fn);
  ModuleBuilder& b_;
  std::map<F64Function, Id> functions_;
};

}  // namespace pb::codegen::spirv
