// The one interface every backend implements (interpreter, LLVM CPU JIT, Vulkan): launch a kernel
// against a State, and declare what else it can do. Backends are peers: none includes another's
// headers; what they share lives in runtime/core. A request part a backend cannot carry out is
// refused by name (Refusal), never ignored.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "runtime/core/launch.h"
#include "runtime/core/state.h"

namespace pb::runtime {

// What a backend can do besides launching a kernel: each flag is a request part (RunOptions, or
// ExecutionRequest::stack_usage) that the backend carries out in its own code.
struct Capabilities {
  bool shuffle = false;                   // RunOptions::shuffle: iterations in a seeded permuted order
  bool trace_decisions = false;           // RunOptions::trace_decisions
  bool f64_mode = false;                  // RunOptions::f64: f32 computed as f64
  bool check_global_access = false;       // RunOptions::check_global_access, the dynamic check
  bool unsized_stacks_unlimited = false;  // RunOptions::unsized_stacks_unlimited
  bool stack_usage = false;               // RunResult::max_stack_depth and stack_capacity
  bool device_timestamps = false;         // LaunchTimes::kernel_timed
  bool prints = false;                    // print statements write RunResult::printed
};

// The request parts beyond launching that a backend may lack (Capabilities' flags).
enum class RequestPart {
  shuffle,
  trace_decisions,
  f64_mode,
  check_global_access,
  unsized_stacks_unlimited,
  stack_usage
};
// How a user reads the part: "f64 mode (f32 computed as f64)".
std::string_view request_part_name(RequestPart p);

// A backend that cannot carry out part of a request: a user error (exit 2), not a run failure.
// `parts` names the request parts it lacks (empty: the kernel itself, a device feature, ...).
class Refusal : public UserError {
 public:
  using UserError::UserError;
  Refusal(const Diagnostic& d, std::vector<RequestPart> parts) : UserError(d), parts(std::move(parts)) {}
  std::vector<RequestPart> parts;
};

// A backend that is not there: no device, no driver, no module. A user error (exit 2) when the
// backend was named; a comparison over every backend lists it as absent and compares the others.
class BackendAbsent : public UserError {
 public:
  using UserError::UserError;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "interp", "cpu", "vulkan": the name users choose it by.
  virtual std::string_view name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // Runs `k` against `state` (verified by the caller), writing every buffer back. Throws Refusal
  // for what the backend cannot do with this kernel, UserError for a run-time error of the kernel
  // (overflow, assert, out-of-bounds index) naming the kernel and the statement.
  virtual RunResult launch(const ir::Kernel& k, State& state, const RunOptions& options) = 0;
};

// The request parts `options` (and a stack-usage report) asks for that `caps` lacks; empty when none.
std::vector<RequestPart> missing_capabilities(const Capabilities& caps, const RunOptions& options, bool stack_usage);

// Throws Refusal naming `b` and every missing part.
void require_capabilities(const Backend& b, const RunOptions& options, bool stack_usage);

}  // namespace pb::runtime
