#include "ir/widen.h"

#include "ir/visitor.h"

namespace pb::ir {

namespace {
bool narrow(ScalarKind k) { return k == ScalarKind::f32 || k == ScalarKind::f16; }
}  // namespace

std::unique_ptr<Kernel> widen_f32_to_f64(const Kernel& k) {
  bool bit_cast = false;
  walk(k.root(), [&](const Stmt& s) {
    if (auto* u = dyn_cast<UnaryOpStmt>(&s); u && u->op == UnaryOp::cast_bits)
      bit_cast = bit_cast || narrow(u->type.scalar) || narrow(u->x()->type.scalar);
  });
  if (bit_cast) return nullptr;
  auto out = k.clone();
  walk(out->root(), [&](Stmt& s) {
    if (narrow(s.type.scalar)) s.type.scalar = ScalarKind::f64;
    if (auto* c = dyn_cast<ConstStmt>(&s); c && narrow(c->value.kind())) c->value = c->value.cast_to(ScalarKind::f64);
  });
  for (size_t f = 0; f < out->fields().size(); ++f) {
    Field& field = out->field(static_cast<FieldId>(f));
    if (narrow(field.dtype)) field.dtype = ScalarKind::f64;
  }
  for (ArgDecl& a : out->args)
    if (narrow(a.dtype)) a.dtype = ScalarKind::f64;
  return out;
}

}  // namespace pb::ir
