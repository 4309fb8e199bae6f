#include "ir/type_uses.h"

#include <fmt/format.h>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::ir {

std::optional<std::string> first_type_use_outside(const Kernel& k, bool (*accept)(DataType)) {
  for (const Field& f : k.fields())
    if (!accept(f.cell_type())) return fmt::format("field {} is {}", f.name, to_string(f.cell_type()));
  for (const ArgDecl& a : k.args)
    if (!accept(a.element_type()))
      return fmt::format("argument {} is {}{}", a.index, a.ndarray ? "an ndarray of " : "",
                         to_string(a.element_type()));
  std::optional<std::string> found;
  walk(k.root(), [&](const Stmt& s) {
    if (!found && !accept(s.type)) found = fmt::format("`{}` is {}", print_stmt(s, k), to_string(s.type));
  });
  return found;
}

}  // namespace pb::ir
