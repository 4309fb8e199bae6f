// Running a kernel on the reference interpreter from workspace-level inputs: the inputs JSON,
// gradient seeds and run options, with results as the JSON both faces show.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "runtime/interp/interpreter.h"
#include "runtime/interp/state.h"

namespace pb::workbench {

// Where a kernel runs: the reference interpreter (the default), the LLVM CPU JIT or Vulkan.
enum class Backend { interp, cpu, vulkan };
// "interp", "cpu" or "vulkan"; nullopt for anything else.
std::optional<Backend> backend_from_name(std::string_view name);
std::string_view backend_name(Backend b);
// Runs `k` on `state` on `backend`: the one place a backend is chosen. Throws UserError.
runtime::RunResult run_on_backend(Backend backend, const ir::Kernel& k, runtime::State& state,
                                  const runtime::RunOptions& options);

struct RunRequest {
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;                                 // the inputs file, named in errors about the inputs
  std::string kernel_name = "FILE";                        // the kernel's file, named in remedies
  std::vector<std::pair<std::string, double>> seed_grads;  // FIELD=VALUE: every element of FIELD's gradient
  runtime::RunOptions options;
  Backend backend = Backend::interp;
};

struct RunOutput {
  nlohmann::json values;  // runtime::state_to_json
  std::string printed;
  std::vector<int> unexercised_stacks;  // see unexercised_stacks()
};

// The stack allocs of `k` with a push inside a nested block (a loop or if body) that the run left
// no deeper than the pushes beside the alloc make it (or whose alloc did not run), by id in program
// order. reverse_ad pushes a stack's zero and initial value beside its alloc, so a loop that ran
// 0 times leaves exactly those: a test of such a stack does not test it.
std::vector<int> unexercised_stacks(const ir::Kernel& k, const runtime::RunResult& r);

// A run-time error of the kernel itself (stack overflow, assert, out-of-bounds index), as
// opposed to bad inputs, which stay plain UserErrors.
class RunFailure : public UserError {
 public:
  explicit RunFailure(const UserError& e) : UserError(e.diagnostic()) {}
};

// An array whose gradient can be seeded or checked, named as the outputs name it: a float field
// with a gradient field ("x"), or a float ndarray argument ("arg1", its gradient array; one is
// made, zero, when the inputs give none). Throws UserError naming what is wrong and the remedy.
struct DiffArray {
  runtime::Buffer* primal = nullptr;
  runtime::Buffer* grad = nullptr;
};
DiffArray diff_array(const ir::Kernel& k, runtime::State& state, const std::string& name, const std::string& role);

// Float ndarray arguments, by output name ("arg<N>").
std::vector<std::string> float_ndarray_names(const runtime::State& state);

// Sets every element of each seeded field's (or ndarray's) gradient. Throws UserError naming one
// that does not exist or has no gradient.
void seed_gradients(const ir::Kernel& k, runtime::State& state,
                    const std::vector<std::pair<std::string, double>>& seeds);

// runtime::make_state, with a UserError about the inputs prefixed by `inputs_name` (when given).
runtime::State state_from_inputs(const ir::Kernel& k, const nlohmann::json& inputs, const std::string& inputs_name);

// Runs on req.backend (the interpreter unless asked otherwise).
// Throws UserError for bad inputs and RunFailure for run-time errors.
RunOutput run_on_interpreter(const ir::Kernel& k, const RunRequest& req);

// Adds a kernel's returned values to its output values as "return": [...] (nothing when none).
void add_returned(nlohmann::json& values, const std::vector<ir::Value>& returned);

}  // namespace pb::workbench
