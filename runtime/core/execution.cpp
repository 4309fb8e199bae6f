#include "runtime/core/execution.h"

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "runtime/core/seeds.h"

namespace pb::runtime {

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::primal:
      return "primal";
    case Mode::reverse:
      return "reverse";
    case Mode::forward:
      return "forward";
  }
  return "?";
}

namespace {

const ir::Kernel& first_kernel(const ExecutionRequest& req) {
  PB_ASSERT(req.kernel, "an execution request names its kernel");
  PB_ASSERT(req.mode == Mode::primal || req.derived, "reverse and forward requests carry their derived kernel");
  return req.mode == Mode::forward ? *req.derived : *req.kernel;
}

std::string label(const ir::Kernel& k, const char* suffix) { return (k.name.empty() ? "kernel" : k.name) + suffix; }

// One launch; an error names which launch of the request it came from and, off the interpreter,
// the backend ("in the reverse kernel on cpu: ...").
RunResult launch(Backend& b, const ir::Kernel& k, State& state, const RunOptions& options, const char* which) {
  try {
    return b.launch(k, state, options);
  } catch (const Refusal&) {
    throw;
  } catch (const UserError& e) {
    std::string where = which;
    if (b.name() != "interp") where += (where.empty() ? "on " : " on ") + std::string(b.name());
    if (where.empty()) throw;
    Diagnostic d = e.diagnostic();
    d.message = where + ": " + d.message;
    throw UserError(d);
  }
}

}  // namespace

State initial_state(const ExecutionRequest& req) {
  try {
    return make_state(first_kernel(req), req.inputs);
  } catch (const UserError& e) {
    if (req.inputs_name.empty()) throw;
    Diagnostic d = e.diagnostic();
    d.message = req.inputs_name + ": " + d.message;
    throw UserError(d);
  }
}

ExecutionResult execute(Backend& backend, const ExecutionRequest& req) {
  require_capabilities(backend, req.options, req.stack_usage);
  return execute(backend, req, initial_state(req));
}

void check_seeds(const ExecutionRequest& req, State& state) {
  const ir::Kernel& first = first_kernel(req);
  for (const auto& seed : req.grad_seeds) diff_array(first, state, seed.first, "--seed-grad");
  for (const auto& seed : req.dual_seeds) dual_array(first, state, seed.first, "--seed-dual");
}

ExecutionResult execute(Backend& backend, const ExecutionRequest& req, State initial) {
  require_capabilities(backend, req.options, req.stack_usage);
  const ir::Kernel& first = first_kernel(req);
  check_seeds(req, initial);
  ExecutionResult out;
  out.state = std::move(initial);
  out.state_of = &first;
  switch (req.mode) {
    case Mode::primal:
      seed_gradients(first, out.state, req.grad_seeds);
      out.launches.push_back({label(first, ""), &first, launch(backend, first, out.state, req.options, "")});
      break;
    case Mode::reverse:
      out.launches.push_back(
          {label(first, ""), &first, launch(backend, first, out.state, req.options, "in the forward run")});
      seed_gradients(first, out.state, req.grad_seeds);
      out.launches.push_back({label(first, " (reverse)"), req.derived,
                              launch(backend, *req.derived, out.state, req.options, "in the reverse kernel")});
      break;
    case Mode::forward:
      seed_duals(first, out.state, req.dual_seeds);
      out.launches.push_back({label(first, " (tangent)"), &first,
                              launch(backend, first, out.state, req.options, "in the tangent kernel")});
      break;
  }
  return out;
}

}  // namespace pb::runtime
