// Carrying out a run request on a chosen backend: the workbench's side of the execution request
// (runtime/core/execution.h). The derived kernel (reverse or tangent) is made once by the request's
// pipeline and the same request runs on each backend; every face (run, gradcheck, jvpcheck,
// adjointcheck, fixture check, the GUI) goes through execute_on.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/backend.h"
#include "runtime/core/execution.h"
#include "workbench/workspace/run.h"

namespace pb::workbench {

// "interp", "cpu", "vulkan", or several separated by commas; "all" gives every backend. Throws
// UserError naming the choices.
std::vector<Backend> parse_backends(std::string_view text);

struct BackendOptions {
  std::string device;  // Vulkan: a substring of the device name ("" = the first device)
  // Runs in place of every compiled backend (cpu, vulkan), never of the interpreter: the tests
  // plant a backend that is wrong or refuses, to prove the checks fail on it.
  runtime::Backend* stand_in = nullptr;
  // The cpu backend's largest function in statements (RunOptions::cpu_part_statements); -1: the
  // request's own.
  int64_t cpu_part_statements = -1;
};

// The backend object of a kind (opening the device or loading the module on first use). Throws
// UserError when it cannot be had (no Vulkan device, no CPU module).
runtime::Backend& backend_for(Backend b, const BackendOptions& o = {});

// A request whose derived kernel is made: run it on as many backends as wanted.
struct PreparedRequest {
  runtime::ExecutionRequest exec;
  std::unique_ptr<ir::Kernel> derived;  // the reverse or tangent kernel (owned here)
  std::string pipeline;                 // the pipeline that made it
  std::vector<std::string> warnings;    // of the pipeline's passes, "pass: message"
  // check_global_access ran in the pipeline, could not prove the kernel within the rule and was
  // not told to warn: execute_on checks the primal run per element on the interpreter first.
  bool access_unproven = false;
};

// Makes the derived kernel of `req` from `k` (reverse: req.pipeline or reverse_ad; forward:
// req.pipeline or forward_ad). Throws UserError naming a failing pass. `k` must outlive the result.
PreparedRequest prepare_request(const ir::Kernel& k, const RunRequest& req);

// Carries out `p` on `b`. Throws runtime::Refusal for a part `b` cannot carry out and UserError for
// bad inputs (both exit 2), RunFailure for a run-time error of the kernel (exit 1).
runtime::ExecutionResult execute_on(Backend b, const PreparedRequest& p, const BackendOptions& o = {});

// With p.access_unproven: the primal run of p on `initial`, checked per element on the
// interpreter, must keep the global data access rule, or a RunFailure names the two accesses (the
// gradient of a kernel that breaks it is wrong on a parallel backend, and only by luck right on a
// serial one). Another error of that run is left to the request's own run to report. execute_on
// calls it.
void check_unproven_access(const PreparedRequest& p, const runtime::State& initial);
// The same from a given initial state.
runtime::ExecutionResult execute_on(Backend b, const PreparedRequest& p, runtime::State initial,
                                    const BackendOptions& o = {});

// The result as `run` prints it: runtime::state_to_json of the final state, with "return".
nlohmann::json execution_values(const runtime::ExecutionResult& r);

// One launch of a request on a backend, as timing tables show it.
struct TimedLaunch {
  Backend backend = Backend::interp;
  std::string kernel;  // "y (reverse)"
  std::string device;  // "" for the host
  runtime::LaunchTimes times;
};
std::vector<TimedLaunch> timed_launches(Backend b, const runtime::ExecutionResult& r);

// The request's stack-usage report: one row per stack of the last launch whose alloc ran.
std::vector<StackUse> stack_uses(const runtime::ExecutionResult& r);

}  // namespace pb::workbench
