#include "runtime/core/prepare.h"

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "ir/type_uses.h"
#include "passes/scalarize.h"

namespace pb::runtime {

std::unique_ptr<ir::Kernel> scalarized_if_tensor(const ir::Kernel& k, std::string_view who) {
  if (!ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); })) return nullptr;
  auto scalar = k.clone();
  try {
    passes::scalarize(*scalar);
  } catch (const UserError& e) {
    Diagnostic d = e.diagnostic();
    d.message = fmt::format("{} runs the kernel scalarized: {}", who, d.message);
    throw UserError(d);
  }
  return scalar;
}

ElementArgsBound::ElementArgsBound(const ir::Kernel& k, State& state)
    : state_(state), original_size_(state.args.size()) {
  for (const ir::ArgDecl& a : k.args)
    if (a.element_of >= 0 && static_cast<size_t>(a.index) < original_size_)
      saved_.emplace_back(a.index, state.args[static_cast<size_t>(a.index)]);
  try {
    bind_element_args(k, state);
  } catch (...) {
    restore();
    throw;
  }
}

ElementArgsBound::~ElementArgsBound() { restore(); }

void ElementArgsBound::restore() noexcept {
  for (auto& [index, value] : saved_) state_.args[static_cast<size_t>(index)] = std::move(value);
  saved_.clear();
  if (state_.args.size() > original_size_)
    state_.args.erase(state_.args.begin() + static_cast<std::ptrdiff_t>(original_size_), state_.args.end());
}

}  // namespace pb::runtime
