#include "ir/type_uses.h"

#include <fmt/format.h>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::ir {

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
