#include "runtime/interp/backend.h"

#include <chrono>

#include "runtime/core/prepare.h"
#include "runtime/interp/interpreter.h"

namespace pb::runtime::interp {

namespace {

class InterpreterBackend final : public Backend {
 public:
  std::string_view name() const override { return "interp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.shuffle = c.trace_decisions = c.f64_mode = c.check_global_access = true;
    c.unsized_stacks_unlimited = c.stack_usage = c.prints = true;
    return c;
  }
  RunResult launch(const ir::Kernel& k, State& state, const RunOptions& options) override {
    auto start = std::chrono::steady_clock::now();
    // The dynamic access check tracks scalar elements: a tensor kernel is checked scalarized.
    std::unique_ptr<ir::Kernel> scalar;
    if (options.check_global_access) scalar = scalarized_if_tensor(k, "the global-access check");
    RunResult r = run_kernel(scalar ? *scalar : k, state, options);
    r.times.total_ms = r.times.kernel_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
};

}  // namespace

Backend& backend() {
  static InterpreterBackend b;
  return b;
}

}  // namespace pb::runtime::interp
