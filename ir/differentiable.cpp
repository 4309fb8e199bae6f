#include "ir/differentiable.h"

#include "ir/statements.h"

namespace pb::ir {

bool is_differentiable_field(const Kernel& k, FieldId f) {
  const Field& field = k.field(f);
  return field.grad.has_value() && is_float(field.dtype);
}

bool is_differentiable_ptr(const Kernel& k, const Stmt* ptr) {
  if (const auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return is_differentiable_field(k, g->field);
  if (const auto* e = dyn_cast<ExternalPtrStmt>(ptr)) return !e->is_grad && !e->is_dual && is_float(e->type.scalar);
  return false;
}

}  // namespace pb::ir
