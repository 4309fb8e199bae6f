#include "workbench/workspace/run.h"

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "runtime/interp/state.h"

namespace pb::workbench {

RunOutput run_on_interpreter(const ir::Kernel& k, const RunRequest& req) {
  runtime::State state = runtime::make_state(k, req.inputs);
  for (const auto& [name, value] : req.seed_grads) {
    auto id = k.find_field(name);
    if (!id) throw UserError(fmt::format("--seed-grad: no field named '{}'", name), "name a field of the kernel");
    auto grad = k.field(*id).grad;
    if (!grad) throw UserError(fmt::format("--seed-grad: field '{}' has no gradient field", name), "declare it in the header: `field " + name + " : f32[N] grad " + name + "_grad`");
    auto& buf = state.fields.at(k.field(*grad).name);
    for (auto& v : buf.data) v = ir::Value::from_double(buf.dtype, value);
  }
  runtime::RunResult result;
  try {
    result = runtime::run_kernel(k, state, req.options);
  } catch (const RunFailure&) {
    throw;
  } catch (const UserError& e) {
    throw RunFailure(e);
  }
  return {runtime::state_to_json(k, state), result.printed};
}

}  // namespace pb::workbench
