#include "runtime/core/access_check.h"

#include <fmt/format.h>

#include <vector>

#include "ir/printer.h"

namespace pb::runtime::detail {

namespace {

std::string iteration_name(int64_t i) { return i < 0 ? "outside every loop" : fmt::format("in iteration {}", i); }

bool holds(const Buffer& b, const ir::Value* cell) {
  return !b.data.empty() && cell >= b.data.data() && cell < b.data.data() + b.data.size();
}

}  // namespace

std::string state_element_name(const State& state, const ir::Value* cell) {
  for (const auto& [field, b] : state.fields)
    if (holds(b, cell)) return element_name(fmt::format("field '{}'", field), b.shape, cell - b.data.data());
  for (size_t i = 0; i < state.args.size(); ++i)
    if (const Buffer& b = state.args[i].array; state.args[i].is_ndarray && holds(b, cell))
      return element_name(fmt::format("ndarray argument {}", i), b.shape, cell - b.data.data());
  return "an element";
}

std::string element_name(const std::string& array, const ir::Shape& shape, int64_t flat) {
  if (shape.empty()) return array;
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("{}, element [{}],", array, fmt::join(idx, ", "));
}

namespace {

// "global data access rule: ELEMENT WHAT", then the two accesses, each with its iteration.
std::string violation(const ir::Kernel& k, const std::string& element, const char* what, const char* first_label,
                      const GlobalAccessTracker::Read& first, const ir::Stmt* second, int64_t iteration) {
  return fmt::format(
      "global data access rule: {} {}\n  {} `{}` {} of the top-level loop\n  write: `{}` {} of the "
      "top-level loop",
      element, what, first_label, ir::print_stmt(*first.load, k), iteration_name(first.iteration),
      ir::print_stmt(*second, k), iteration_name(iteration));
}

}  // namespace

std::string global_access_violation(const ir::Kernel& k, const std::string& element,
                                    const GlobalAccessTracker::Read& read, const ir::Stmt* store, int64_t iteration) {
  return violation(k, element,
                   "is written after it was read in the same launch (the reverse kernel of a kernel that does this "
                   "may read the new value)",
                   "read: ", read, store, iteration);
}

std::string overwrite_violation(const ir::Kernel& k, const std::string& element, const GlobalAccessTracker::Read& first,
                                const ir::Stmt* second, int64_t iteration) {
  return violation(k, element,
                   "is written by two iterations of the top-level loop, one of them with a plain store (the value "
                   "left depends on the order iterations run in, and the reverse kernel gives the adjoint to every "
                   "racing iteration)",
                   "write:", first, second, iteration);
}

}  // namespace pb::runtime::detail
