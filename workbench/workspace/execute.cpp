#include "workbench/workspace/execute.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/diagnostic.h"
#include "ir/statements.h"
#include "ir/visitor.h"
#include "runtime/core/json_values.h"
#include "runtime/cpu/backend.h"
#include "runtime/interp/backend.h"
#include "runtime/vulkan/backend.h"
#include "workbench/workspace/forward.h"
#include "workbench/workspace/gradient.h"

namespace pb::workbench {

std::vector<Backend> parse_backends(std::string_view text) {
  if (text == "all") return {Backend::interp, Backend::cpu, Backend::vulkan};
  std::vector<Backend> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string_view name = text.substr(start, comma - start);
    std::optional<Backend> b = backend_from_name(name);
    if (!b)
      throw UserError(fmt::format("--backend: unknown backend '{}'", name),
                      "choose interp, cpu, vulkan, all, or several separated by commas");
    if (std::find(out.begin(), out.end(), *b) == out.end()) out.push_back(*b);
    start = comma + 1;
  }
  return out;
}

runtime::Backend& backend_for(Backend b, const BackendOptions& o) {
  if (o.stand_in && b != Backend::interp) return *o.stand_in;
  switch (b) {
    case Backend::interp:
      return runtime::interp::backend();
    case Backend::cpu:
      return runtime::cpu::backend();
    case Backend::vulkan:
      return runtime::vulkan::backend(o.device);
  }
  PB_ASSERT(false, "a backend kind without a backend");
}

PreparedRequest prepare_request(const ir::Kernel& k, const RunRequest& req) {
  PreparedRequest p;
  runtime::ExecutionRequest& e = p.exec;
  e.mode = req.mode;
  e.kernel = &k;
  e.inputs = req.inputs;
  e.inputs_name = req.inputs_name;
  e.grad_seeds = req.seed_grads;
  e.dual_seeds = req.seed_duals;
  e.options = req.options;
  e.stack_usage = req.stack_usage;
  switch (req.mode) {
    case runtime::Mode::primal:
      break;
    case runtime::Mode::reverse:
      p.pipeline = req.pipeline.empty() ? kDefaultReversePipeline : req.pipeline;
      p.derived = make_reverse_kernel(k, p.pipeline, req.kernel_name, &p.warnings, &p.access_unproven);
      break;
    case runtime::Mode::forward:
      p.pipeline = req.pipeline.empty() ? kDefaultForwardPipeline : req.pipeline;
      p.derived = make_dual_kernel(k, p.pipeline, req.kernel_name);
      break;
  }
  e.derived = p.derived.get();
  return p;
}

namespace {

// A run-time error of the kernel becomes a RunFailure (exit 1); a refusal stays one (exit 2).
template <class F>
runtime::ExecutionResult guarded(F&& body) {
  try {
    return body();
  } catch (const runtime::Refusal&) {
    throw;
  } catch (const RunFailure&) {
    throw;
  } catch (const UserError& e) {
    throw RunFailure(e);
  }
}

}  // namespace

void check_unproven_access(const PreparedRequest& p, const runtime::State& initial) {
  if (!p.access_unproven || p.exec.options.check_global_access) return;
  runtime::ExecutionRequest e = p.exec;
  e.mode = runtime::Mode::primal;
  e.derived = nullptr;
  e.grad_seeds.clear();
  e.stack_usage = false;
  e.options.check_global_access = true;
  try {
    runtime::execute(runtime::interp::backend(), e, initial);
  } catch (const UserError& err) {
    const Diagnostic& d = err.diagnostic();
    if (d.message.find("global data access rule") == std::string::npos) return;
    Diagnostic out = d;
    out.message +=
        "\n  (check_global_access could not prove the kernel within the rule, so the primal run was "
        "checked per element on the interpreter first)";
    throw RunFailure(UserError(out));
  }
}

runtime::ExecutionResult execute_on(Backend b, const PreparedRequest& p, const BackendOptions& o) {
  runtime::State initial = runtime::initial_state(p.exec);  // an inputs error is not a run failure
  return execute_on(b, p, std::move(initial), o);
}

runtime::ExecutionResult execute_on(Backend b, const PreparedRequest& p, runtime::State initial,
                                    const BackendOptions& o) {
  runtime::Backend& backend = backend_for(b, o);
  runtime::require_capabilities(backend, p.exec.options, p.exec.stack_usage);
  runtime::check_seeds(p.exec, initial);  // a bad seed is not a run failure
  check_unproven_access(p, initial);
  if (o.cpu_part_statements < 0 || b != Backend::cpu)
    return guarded([&] { return runtime::execute(backend, p.exec, std::move(initial)); });
  runtime::ExecutionRequest e = p.exec;
  e.options.cpu_part_statements = o.cpu_part_statements;
  return guarded([&] { return runtime::execute(backend, e, std::move(initial)); });
}

nlohmann::json execution_values(const runtime::ExecutionResult& r) {
  nlohmann::json values = runtime::state_to_json(*r.state_of, r.state);
  add_returned(values, r.main().returned);
  return values;
}

std::vector<TimedLaunch> timed_launches(Backend b, const runtime::ExecutionResult& r) {
  std::vector<TimedLaunch> out;
  out.reserve(r.launches.size());
  for (const runtime::LaunchRecord& l : r.launches) out.push_back({b, l.kernel, l.result.device, l.result.times});
  return out;
}

std::vector<StackUse> stack_uses(const runtime::ExecutionResult& r) {
  std::vector<StackUse> out;
  const runtime::LaunchRecord& last = r.launches.back();
  ir::walk(last.code->root(), [&](ir::Stmt& s) {
    auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&s);
    if (!a) return;
    auto deepest = last.result.max_stack_depth.find(a->id);
    if (deepest == last.result.max_stack_depth.end()) return;
    auto cap = last.result.stack_capacity.find(a->id);
    out.push_back(
        {a->id, deepest->second, cap == last.result.stack_capacity.end() ? 0 : cap->second, a->size != nullptr});
  });
  return out;
}

}  // namespace pb::workbench
