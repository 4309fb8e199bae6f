#include "runtime/interp/access_check.h"

#include <fmt/format.h>

#include <vector>

#include "ir/printer.h"

namespace pb::runtime::detail {

namespace {

std::string element(const std::string& array, const Buffer& b, const ir::Value* cell) {
  auto flat = static_cast<int64_t>(cell - b.data.data());
  std::vector<int64_t> idx(b.shape.size());
  for (size_t d = b.shape.size(); d-- > 0;) {
    idx[d] = flat % b.shape[d];
    flat /= b.shape[d];
  }
  return b.shape.empty() ? array : fmt::format("{}, element [{}],", array, fmt::join(idx, ", "));
}

bool holds(const Buffer& b, const ir::Value* cell) {
  return !b.data.empty() && cell >= b.data.data() && cell < b.data.data() + b.data.size();
}

std::string iteration_name(int64_t i) { return i < 0 ? "outside every loop" : fmt::format("in iteration {}", i); }

}  // namespace

bool GlobalAccessTracker::tracked(const ir::Kernel& k, const ir::Stmt& ptr) {
  if (auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(&ptr)) {
    const ir::Field& f = k.field(g->field);
    return f.grad.has_value() && ir::is_float(f.dtype);
  }
  if (auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(&ptr))
    return !e->is_grad && !e->is_dual && ir::is_float(e->type.scalar);
  return false;
}

std::optional<std::string> GlobalAccessTracker::write(const ir::Kernel& k, const State& state, const ir::Value* cell,
                                                      const ir::Stmt* store, int64_t iteration) const {
  auto it = reads_.find(cell);
  if (it == reads_.end()) return std::nullopt;
  std::string name = "an element";
  for (const auto& [field, b] : state.fields)
    if (holds(b, cell)) name = element(fmt::format("field '{}'", field), b, cell);
  for (size_t i = 0; i < state.args.size(); ++i)
    if (state.args[i].is_ndarray && holds(state.args[i].array, cell))
      name = element(fmt::format("ndarray argument {}", i), state.args[i].array, cell);
  return fmt::format(
      "global data access rule: {} is written after it was read in the same launch (the reverse kernel of a kernel "
      "that does this may read the new value)\n  read:  `{}` {} of the top-level loop\n  write: `{}` {} of the "
      "top-level loop",
      name, ir::print_stmt(*it->second.load, k), iteration_name(it->second.iteration), ir::print_stmt(*store, k),
      iteration_name(iteration));
}

}  // namespace pb::runtime::detail
