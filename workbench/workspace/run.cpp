#include "workbench/workspace/run.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "ir/diagnostic.h"
#include "ir/visitor.h"
#include "runtime/core/json_values.h"
#include "runtime/core/state.h"
#include "workbench/workspace/execute.h"

namespace pb::workbench {

runtime::State state_from_inputs(const ir::Kernel& k, const nlohmann::json& inputs, const std::string& inputs_name) {
  try {
    return runtime::make_state(k, inputs);
  } catch (const UserError& e) {
    if (inputs_name.empty()) throw;
    Diagnostic d = e.diagnostic();
    d.message = inputs_name + ": " + d.message;
    throw UserError(d);
  }
}

std::optional<Backend> backend_from_name(std::string_view name) {
  if (name == "interp") return Backend::interp;
  if (name == "cpu") return Backend::cpu;
  if (name == "vulkan") return Backend::vulkan;
  return std::nullopt;
}

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::interp:
      return "interp";
    case Backend::cpu:
      return "cpu";
    case Backend::vulkan:
      return "vulkan";
  }
  return "?";
}

RunOutput run_primal(const ir::Kernel& k, const RunRequest& req) {
  RunRequest primal = req;
  primal.mode = runtime::Mode::primal;
  PreparedRequest p = prepare_request(k, primal);
  runtime::ExecutionResult r = execute_on(req.backend, p);
  return {execution_values(r), r.main().printed, unexercised_stacks(k, r.main())};
}

void add_returned(nlohmann::json& values, const std::vector<ir::Value>& returned) {
  if (returned.empty()) return;
  nlohmann::json& ret = values["return"] = nlohmann::json::array();
  for (const ir::Value& v : returned) ret.push_back(runtime::detail::value_to_json(v));
}

std::vector<int> unexercised_stacks(const ir::Kernel& k, const runtime::RunResult& r) {
  struct Pushes {
    int64_t beside = 0;  // in the alloc's own block
    bool nested = false;
  };
  std::map<const ir::Stmt*, Pushes> pushes;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    auto* push = ir::dyn_cast<ir::AdStackPushStmt>(&s);
    if (!push) return;
    const ir::Stmt* alloc = push->operand(0);
    Pushes& p = pushes[alloc];
    if (push->parent() == alloc->parent())
      ++p.beside;
    else
      p.nested = true;
  });
  std::vector<int> ids;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (!ir::isa<ir::AdStackAllocaStmt>(&s)) return;
    auto p = pushes.find(&s);
    if (p == pushes.end() || !p->second.nested) return;
    auto it = r.max_stack_depth.find(s.id);
    if (it == r.max_stack_depth.end() || it->second <= p->second.beside) ids.push_back(s.id);
  });
  return ids;
}

}  // namespace pb::workbench
