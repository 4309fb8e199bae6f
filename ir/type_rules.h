// The typing rules of CHI IR, written once: the parser uses them to type statements that carry
// no type hint, the builder to type what it creates, and the verifier to check every statement.
#pragma once

#include <string>

#include "ir/kernel.h"

namespace pb::ir {

struct TypeRuleResult {
  DataType type;      // the type the statement must have (unknown for non-values)
  std::string error;  // empty when the operands are well-typed
};

// Computes the result type of `s` from its operands and attributes. Statements whose type is
// an attribute (casts, argloads without a declaration, allocas) return their own type.
TypeRuleResult type_rule(const Stmt& s, const Kernel& k);

}  // namespace pb::ir
