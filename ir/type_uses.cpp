#include "ir/type_uses.h"

#include <fmt/format.h>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::ir {

bool is_core_type(DataType t) {
  if (t.quant != 0) return false;
  switch (t.scalar) {
    case ScalarKind::unknown:
    case ScalarKind::u1:
    case ScalarKind::i32:
    case ScalarKind::i64:
    case ScalarKind::u32:
    case ScalarKind::u64:
    case ScalarKind::f32:
    case ScalarKind::f64:
      return true;
    case ScalarKind::f16:
    case ScalarKind::i8:
    case ScalarKind::i16:
    case ScalarKind::u8:
    case ScalarKind::u16:
      return false;
  }
  return false;
}

std::optional<std::string> first_type_use_outside(const Kernel& k, bool (*accept)(DataType)) {
  for (const Field& f : k.fields())
    if (!accept(DataType::of(f.dtype))) return fmt::format("field {} is {}", f.name, scalar_name(f.dtype));
  for (const ArgDecl& a : k.args)
    if (!accept(DataType::of(a.dtype)))
      return fmt::format("argument {} is {}{}", a.index, a.ndarray ? "an ndarray of " : "", scalar_name(a.dtype));
  std::optional<std::string> found;
  walk(k.root(), [&](const Stmt& s) {
    if (!found && !accept(s.type)) found = fmt::format("`{}` is {}", print_stmt(s, k), to_string(s.type));
  });
  return found;
}

}  // namespace pb::ir
