// Symbolic capacities of autodiff stacks: an immutable expression tree over kernel arguments,
// integer field and ndarray elements and bound variables. determine_ad_stack_size builds them; the runtime
// evaluates them when the stack alloc executes. Grammar and semantics: docs/ir-format.md.
//
// Every value is a non-negative integer: a negative argument or field element reads as 0,
// `a - b` is max(a - b, 0), `a // c` and `a % c` take a positive constant c, and
// `max(v in range(b, e): x)` over an empty range is 0.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pb::ir {

class Cursor;

enum class SizeOp : uint8_t { Const, Arg, Field, Ndarray, Var, Add, Sub, Mul, FloorDiv, Mod, Max, Min, MaxOverRange };

class SizeExpr;
using SizeExprPtr = std::shared_ptr<const SizeExpr>;

class SizeExpr {
 public:
  // Nodes exactly as given (no folding), so parsed text prints back unchanged.
  static SizeExprPtr constant(int64_t value);  // value >= 0
  static SizeExprPtr arg(int index);
  static SizeExprPtr field(std::string name, std::vector<SizeExprPtr> indices);
  static SizeExprPtr ndarray(int arg_index, std::vector<SizeExprPtr> indices);  // `arg(2)[i]`
  static SizeExprPtr var(std::string name);
  // Add, Sub, Mul, Max, Min; FloorDiv and Mod with a positive constant rhs.
  static SizeExprPtr binary(SizeOp op, SizeExprPtr lhs, SizeExprPtr rhs);
  static SizeExprPtr max_over_range(std::string var, SizeExprPtr begin, SizeExprPtr end, SizeExprPtr body);

  SizeOp op() const { return op_; }
  // Const: the value; Arg and Ndarray: the argument index.
  int64_t value() const { return value_; }
  // Field and Var: the name; MaxOverRange: its variable.
  const std::string& name() const { return name_; }
  // Field and Ndarray: the indices; binary ops: lhs, rhs; MaxOverRange: begin, end, body.
  std::span<const SizeExprPtr> operands() const { return operands_; }
  bool is_const() const { return op_ == SizeOp::Const; }

 private:
  SizeExpr(SizeOp op, int64_t value, std::string name, std::vector<SizeExprPtr> operands)
      : op_(op), value_(value), name_(std::move(name)), operands_(std::move(operands)) {}
  SizeOp op_;
  int64_t value_ = 0;
  std::string name_;
  std::vector<SizeExprPtr> operands_;
};

// Builders that fold constants and identities (0 + x, x - 0, 1 * x, max(0, x), min(0, x), ...); constants
// go first in sums and products (`2 + n[]`). fold_max_over_range drops an unused variable and
// replaces the maximum of a body non-decreasing in its variable by the body at `end - 1`; both
// are upper bounds that differ from the maximum only on an empty range.
SizeExprPtr fold_add(SizeExprPtr a, SizeExprPtr b);
SizeExprPtr fold_sub(SizeExprPtr a, SizeExprPtr b);
SizeExprPtr fold_mul(SizeExprPtr a, SizeExprPtr b);
SizeExprPtr fold_max(SizeExprPtr a, SizeExprPtr b);
SizeExprPtr fold_min(SizeExprPtr a, SizeExprPtr b);
SizeExprPtr fold_floordiv(SizeExprPtr a, int64_t divisor);  // divisor > 0
SizeExprPtr fold_mod(SizeExprPtr a, int64_t divisor);       // divisor > 0
SizeExprPtr fold_max_over_range(const std::string& var, SizeExprPtr begin, SizeExprPtr end, SizeExprPtr body);

bool equal(const SizeExpr& a, const SizeExpr& b);
bool mentions(const SizeExpr& e, std::string_view var);  // `var` occurs free in `e`
// `e` with `replacement` for the free occurrences of `var`, re-folded with the builders above.
SizeExprPtr substitute(const SizeExprPtr& e, std::string_view var, const SizeExprPtr& replacement);
// Every node, pre-order (for checks such as "every field named exists").
std::vector<const SizeExpr*> nodes(const SizeExpr& e);
// Variables used outside any max(v in range ...) that binds them.
std::vector<std::string> free_variables(const SizeExpr& e);

// The text form, with the fewest parentheses that keep the tree: `2 + n[] * arg(0)`.
std::string to_string(const SizeExpr& e);
// Parses the text form from `cur` (stops before the first character that cannot continue the
// expression) or a whole string. Errors are located pb::UserErrors.
SizeExprPtr parse_size_expr(Cursor& cur);
SizeExprPtr parse_size_expr(std::string_view text, const std::string& file = "<size>");

// Reads kernel state for evaluate(). Both may throw pb::UserError (missing argument, index out
// of bounds); evaluate passes it through.
struct SizeEnv {
  std::function<int64_t(int index)> arg;
  std::function<int64_t(const std::string& field, std::span<const int64_t> indices)> field;
  std::function<int64_t(int arg_index, std::span<const int64_t> indices)> ndarray;
};
// Sums and products saturate at INT64_MAX. More than kMaxSizeIterations iterations of
// max-over-range in one evaluation is a pb::UserError (the bound is too costly to evaluate).
inline constexpr int64_t kMaxSizeIterations = int64_t{1} << 24;
int64_t evaluate(const SizeExpr& e, const SizeEnv& env);

}  // namespace pb::ir
