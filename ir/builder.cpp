#include "ir/builder.h"

#include "ir/assert.h"
#include "ir/type_rules.h"

namespace pb::ir {

Stmt* Builder::insert(std::unique_ptr<Stmt> s) {
  auto rule = type_rule(*s, k_);
  PB_ASSERT(rule.error.empty(), "builder created an ill-typed statement: " + rule.error);
  s->type = rule.type;
  if (s->id < 0) s->id = k_.fresh_id();
  return block_->insert_before(before_, std::move(s));
}

UnaryOpStmt* Builder::unary(UnaryOp op, Stmt* x) {
  PB_ASSERT(!is_cast(op), "use Builder::cast for casts");
  return create<UnaryOpStmt>(op, x);
}

UnaryOpStmt* Builder::cast(Stmt* x, ScalarKind to) {
  auto s = k_.make<UnaryOpStmt>(UnaryOp::cast_value, x);
  s->type = DataType::of(to);
  return static_cast<UnaryOpStmt*>(insert(std::move(s)));
}

RangeForStmt* Builder::range_for(Stmt* b, Stmt* e, bool reversed) {
  auto s = k_.make<RangeForStmt>(b, e);
  s->reversed = reversed;
  return static_cast<RangeForStmt*>(insert(std::move(s)));
}

}  // namespace pb::ir
