// Run requests at the workspace level: the inputs JSON, the mode, seeds and run options, with
// results as the JSON both faces show. execute.h carries a request out on a backend.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "runtime/core/execution.h"
#include "runtime/core/launch.h"
#include "runtime/core/seeds.h"
#include "runtime/core/state.h"

namespace pb::workbench {

// Where a kernel runs: the reference interpreter (the default), the LLVM CPU JIT or Vulkan.
enum class Backend { interp, cpu, vulkan };
// "interp", "cpu" or "vulkan"; nullopt for anything else.
std::optional<Backend> backend_from_name(std::string_view name);
std::string_view backend_name(Backend b);

// Everything `run` can ask (runtime/core/execution.h): the mode, the pipeline that makes the
// derived kernel, the seeds, the run options and a stack-usage report, on one backend.
struct RunRequest {
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;           // the inputs file, named in errors about the inputs
  std::string kernel_name = "FILE";  // the kernel's file, named in remedies
  runtime::Mode mode = runtime::Mode::primal;
  std::string pipeline;       // reverse / forward: makes the derived kernel ("" = the default)
  runtime::Seeds seed_grads;  // FIELD=VALUE: every element of FIELD's gradient
  runtime::Seeds seed_duals;  // forward: every element of FIELD's dual
  runtime::RunOptions options;
  bool stack_usage = false;  // report each stack's deepest depth against its capacity
  Backend backend = Backend::interp;
};

// How deep one stack of the reverse kernel got in a run, against the capacity its alloc gave it.
struct StackUse {
  int stack_id = 0;
  int64_t deepest = 0;
  int64_t capacity = 0;   // 0: unlimited (an unsized stack)
  bool symbolic = false;  // sized by a size expression rather than a constant max_size
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

// The arrays a request seeds and checks (runtime/core/seeds.h).
using runtime::diff_array;
using runtime::DiffArray;
using runtime::dual_array;
using runtime::float_ndarray_names;
using runtime::seed_gradients;

// runtime::make_state, with a UserError about the inputs prefixed by `inputs_name` (when given).
runtime::State state_from_inputs(const ir::Kernel& k, const nlohmann::json& inputs, const std::string& inputs_name);

// Runs `k` as req asks it (mode primal) on req.backend (the interpreter unless asked otherwise).
// Throws UserError for bad inputs, runtime::Refusal for what the backend cannot do, RunFailure for
// run-time errors.
RunOutput run_primal(const ir::Kernel& k, const RunRequest& req);

// Adds a kernel's returned values to its output values as "return": [...] (nothing when none).
void add_returned(nlohmann::json& values, const std::vector<ir::Value>& returned);

}  // namespace pb::workbench
