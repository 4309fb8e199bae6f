#include "workbench/workspace/run.h"

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "runtime/interp/state.h"

namespace pb::workbench {

void seed_gradients(const ir::Kernel& k, runtime::State& state,
                    const std::vector<std::pair<std::string, double>>& seeds) {
  for (const auto& [name, value] : seeds) {
    auto id = k.find_field(name);
    if (!id) throw UserError(fmt::format("--seed-grad: no field named '{}'", name), "name a field of the kernel");
    auto grad = k.field(*id).grad;
    if (!grad) throw UserError(fmt::format("--seed-grad: field '{}' has no gradient field", name), fmt::format("declare it in the header: `field {0} : f32[N] grad {0}_grad`", name));
    auto it = state.fields.find(k.field(*grad).name);
    if (it == state.fields.end())
      throw UserError(fmt::format("--seed-grad: the shape of field '{}' is unknown", name),
                      "declare its shape in the header or give it in the inputs");
    auto& buf = it->second;
    for (auto& v : buf.data) v = ir::Value::from_double(buf.dtype, value);
  }
}

RunOutput run_on_interpreter(const ir::Kernel& k, const RunRequest& req) {
  runtime::State state = runtime::make_state(k, req.inputs);
  seed_gradients(k, state, req.seed_grads);
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
