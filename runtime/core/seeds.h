// The arrays a request seeds and checks, by the names users give them: a float field ("x"), or a
// float ndarray argument ("arg1"). Gradients and duals are the field's companion fields, or the
// ndarray's grad/dual arrays (made, zero, when the inputs give none).
#pragma once

#include <string>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime {

// An array whose gradient can be seeded or checked. Throws UserError naming what is wrong (no
// such field, not a float field, no gradient field, an unknown shape) and the remedy; `role`
// names the option or check that asked ("--seed-grad").
struct DiffArray {
  Buffer* primal = nullptr;
  Buffer* grad = nullptr;
};
DiffArray diff_array(const ir::Kernel& k, State& state, const std::string& name, const std::string& role);

// The dual (tangent) array of a float field (its dual field) or float ndarray, in a state made for
// a tangent kernel. Throws UserError naming what is wrong and the remedy.
Buffer& dual_array(const ir::Kernel& k, State& state, const std::string& name, const std::string& role);

// Float ndarray arguments, by name ("arg<N>").
std::vector<std::string> float_ndarray_names(const State& state);

// Sets every element of each seeded array's gradient (dual) to its value.
void seed_gradients(const ir::Kernel& k, State& state, const std::vector<std::pair<std::string, double>>& seeds);
void seed_duals(const ir::Kernel& k, State& state, const std::vector<std::pair<std::string, double>>& seeds);

}  // namespace pb::runtime
