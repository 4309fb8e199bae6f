#include "ir/widen.h"

#include "ir/visitor.h"

namespace pb::ir {

std::unique_ptr<Kernel> widen_f32_to_f64(const Kernel& k) {
  bool bit_cast = false;
  walk(k.root(), [&](const Stmt& s) {
    if (auto* u = dyn_cast<UnaryOpStmt>(&s); u && u->op == UnaryOp::cast_bits)
      bit_cast = bit_cast || u->type.scalar == ScalarKind::f32 || u->x()->type.scalar == ScalarKind::f32;
  });
  if (bit_cast) return nullptr;
  auto out = k.clone();
  walk(out->root(), [&](Stmt& s) {
    if (s.type.scalar == ScalarKind::f32) s.type.scalar = ScalarKind::f64;
    if (auto* c = dyn_cast<ConstStmt>(&s); c && c->value.kind() == ScalarKind::f32)
      c->value = c->value.cast_to(ScalarKind::f64);
  });
  for (size_t f = 0; f < out->fields().size(); ++f) {
    Field& field = out->field(static_cast<FieldId>(f));
    if (field.dtype == ScalarKind::f32) field.dtype = ScalarKind::f64;
  }
  for (ArgDecl& a : out->args)
    if (a.dtype == ScalarKind::f32) a.dtype = ScalarKind::f64;
  return out;
}

}  // namespace pb::ir
