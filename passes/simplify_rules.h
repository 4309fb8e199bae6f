// Internal to simplify: the rewrite rules for one statement, independent of traversal.
#pragma once

#include <optional>

#include "ir/statements.h"

namespace pb::passes::simplify_rules {

// The constant `s` evaluates to when its operands are constants (or by an integer identity
// such as x-x), with the interpreter's semantics; nullopt when it does not fold.
std::optional<ir::Value> fold(const ir::Stmt& s);
// The existing statement `s` equals by an exact identity (x*1 -> x), or nullptr.
ir::Stmt* identity(ir::Stmt* s);

}  // namespace pb::passes::simplify_rules
