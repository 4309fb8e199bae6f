// The execution request: everything `run` can ask of a kernel (primal, reverse, forward, stack
// usage, access checking), carried out the same way on every backend. execute() turns a request
// into its launches on one Backend; the backend runs each launch in its own compiled code, and a
// part it cannot carry out is refused by name before anything runs.
//
// Modes (the derived kernels are made by the caller's pipelines: reverse_ad, forward_ad):
//   primal   seed the gradients named in grad_seeds, launch `kernel`;
//   reverse  launch `kernel`, seed the gradients, launch `derived` (the gradient kernel);
//   forward  seed the duals named in dual_seeds, launch `derived` (the tangent kernel), whose
//            fields include the duals the primal lacks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/backend.h"
#include "runtime/core/launch.h"
#include "runtime/core/state.h"

namespace pb::runtime {

enum class Mode { primal, reverse, forward };
std::string_view mode_name(Mode m);

using Seeds = std::vector<std::pair<std::string, double>>;  // array name -> every element's seed

struct ExecutionRequest {
  Mode mode = Mode::primal;
  const ir::Kernel* kernel = nullptr;   // the kernel as given
  const ir::Kernel* derived = nullptr;  // reverse: the gradient kernel; forward: the tangent kernel
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;  // names the inputs in errors about them ("" = none)
  Seeds grad_seeds;         // primal, reverse
  Seeds dual_seeds;         // forward
  RunOptions options;
  bool stack_usage = false;  // report each stack's deepest depth and capacity
};

struct LaunchRecord {
  std::string kernel;                // the kernel's name, with " (reverse)" or " (tangent)" for a derived one
  const ir::Kernel* code = nullptr;  // the kernel launched (the request's kernel or its derived one)
  RunResult result;
};

struct ExecutionResult {
  State state;                           // after the last launch
  const ir::Kernel* state_of = nullptr;  // the kernel whose fields `state` holds (state_to_json)
  std::vector<LaunchRecord> launches;    // in order
  // The launch whose printed text and returned values are the request's: the primal launch, or
  // the tangent launch in forward mode.
  const RunResult& main() const { return launches.front().result; }
  // The launch whose stack depths a stack-usage report shows: the last one.
  const RunResult& last() const { return launches.back().result; }
};

// The request's state before any launch: inputs read for the kernel that runs first.
State initial_state(const ExecutionRequest& req);

// Throws UserError naming a seed of `req` that names no array of `state`'s kernel (or one without
// a gradient or dual); execute() checks this before the first launch.
void check_seeds(const ExecutionRequest& req, State& state);

// Carries out `req` on `backend`. Throws Refusal (before launching anything) for a part the
// backend lacks; UserError for bad inputs or seeds; whatever the backend's launches throw.
ExecutionResult execute(Backend& backend, const ExecutionRequest& req);
// The same from a given initial state (a perturbed one, say).
ExecutionResult execute(Backend& backend, const ExecutionRequest& req, State initial);

}  // namespace pb::runtime
