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

}  // namespace pb::runtime
