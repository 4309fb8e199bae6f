// Internal to determine_ad_stack_size: symbolic stack depths, and loop trip counts and loop-bound
// values as size expressions (ir/size_expr.h).
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/kernel.h"

namespace pb::passes::detail {

// An upper bound on a stack depth: the sum of `terms` (non-negative size expressions) plus
// `offset` (any sign). Terms are kept apart so that a reversed loop's pops can cancel the
// pushes of the forward loop with the same trip count.
struct Depth {
  std::vector<ir::SizeExprPtr> terms;
  int64_t offset = 0;

  bool is_constant() const { return terms.empty(); }
  bool mentions(const std::string& var) const;
};

Depth plus(Depth a, const Depth& b);
Depth max(const Depth& a, const Depth& b);
// `trips` repetitions of a region of net `d` (exact for a constant count; for a symbolic one a
// negative offset is dropped, which only raises the bound).
Depth times(const ir::SizeExprPtr& trips, const Depth& d);
// Removes one term equal to `t`; false when there is none.
bool cancel_term(Depth& d, const ir::SizeExprPtr& t);
bool same(const Depth& a, const Depth& b);
// The sum as one expression, constant first; a negative offset becomes a clamped subtraction.
ir::SizeExprPtr to_expr(const Depth& d);

// A loop bound the size grammar cannot express: `why` says what, `at` is the statement.
class BoundError : public std::runtime_error {
 public:
  BoundError(const std::string& why, const ir::Stmt* at) : std::runtime_error(why), at_(at) {}
  const ir::Stmt* at() const { return at_; }

 private:
  const ir::Stmt* at_;
};

// Builds size expressions for loop trip counts and loop-variable ranges from the statements that
// compute the bounds: integer constants, scalar integer arguments, loads of integer fields the
// kernel never writes (at indices built the same way), loop indices (as variables named after
// their loop), add/sub/mul/max/min, select (bounded by max), integer casts, and local loads
// (the max over every value stored to the alloca). Throws BoundError otherwise.
class BoundBuilder {
 public:
  explicit BoundBuilder(const ir::Kernel& k);
  // For a caller that walks the kernel anyway: it must then show every statement to note().
  struct Unscanned {};
  BoundBuilder(const ir::Kernel& k, Unscanned) : k_(k) {}
  // Records what the bounds depend on in `s` (the fields the kernel writes).
  void note(const ir::Stmt& s);

  ir::SizeExprPtr trip_count(const ir::RangeForStmt& loop);
  // The half-open range covering the values of a loop's index `axis` (range for or struct for
  // over a space of known shape).
  std::pair<ir::SizeExprPtr, ir::SizeExprPtr> index_range(const ir::Stmt& loop, int axis);
  // The size variable for loop index `axis` of `loop`: `i12`, `i12_1`.
  static std::string var_name(const ir::Stmt& loop, int axis);
  // The number of index axes of a loop (1 for range for; the space's rank for struct for).
  int rank(const ir::Stmt& loop) const;

 private:
  struct Built {
    ir::SizeExprPtr expr;
    bool exact = true;  // false: only an upper bound of the value
  };
  std::unordered_map<const ir::RangeForStmt*, ir::SizeExprPtr> trip_counts_;  // every stack of a loop asks again
  Built value(const ir::Stmt* s);
  Built binary(const ir::BinaryOpStmt& s);
  Built local_load(const ir::LocalLoadStmt& s);
  Built field_load(const ir::GlobalLoadStmt& s);  // a field element, or an ndarray element
  Built ndarray_load(const ir::GlobalLoadStmt& s, const ir::ExternalPtrStmt& ptr);
  std::vector<ir::SizeExprPtr> exact_indices(const ir::GlobalLoadStmt& s, std::span<ir::Stmt* const> indices,
                                             const std::string& what);
  int64_t positive_constant(const ir::BinaryOpStmt& s);
  ir::SizeExprPtr lower_bound(const ir::Stmt* begin);
  ir::SizeExprPtr over_loops_not_enclosing(ir::SizeExprPtr e, const ir::Stmt* from, const ir::Stmt* to);
  const ir::Shape* space_shape(const ir::StructForStmt& loop) const;

  const ir::Kernel& k_;
  std::set<ir::FieldId> written_fields_;
  std::set<int> written_ndarrays_;         // argument indices
  std::set<const ir::Stmt*> in_progress_;  // allocas whose stores are being built (cycle guard)
};

}  // namespace pb::passes::detail
