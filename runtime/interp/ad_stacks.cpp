#include "runtime/interp/ad_stacks.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/printer.h"
#include "runtime/core/stack_capacity.h"

namespace pb::runtime::detail {

std::string AdStacks::stack_text(const ir::AdStackAllocaStmt& a) const {
  return fmt::format("stack ${} (`{}`) in {}", a.id, ir::print_stmt(a, k_), label_);
}

void AdStacks::alloc(size_t slot, const ir::AdStackAllocaStmt& a, int64_t capacity, bool unsized_unlimited) {
  if (capacity == 0 && !unsized_unlimited) throw unsized_stack_error(a, k_, label_);
  Stack& st = stacks_.at(slot);
  st.capacity = capacity;
  st.entries.clear();
  st.alloc_id = a.id;
}

void AdStacks::push(size_t slot, const ir::AdStackAllocaStmt& a, const ir::Stmt& at, const ir::Value& primal,
                    ir::ScalarKind kind) {
  Stack& st = stacks_.at(slot);
  if (st.capacity > 0 && static_cast<int64_t>(st.entries.size()) >= st.capacity)
    throw UserError(fmt::format("autodiff stack overflow: {} exceeded {} at `{}`", stack_text(a),
                                a.size ? fmt::format("max_size=0, size {} evaluated to {} at the stack alloc",
                                                     ir::to_string(*a.size), st.capacity)
                                       : fmt::format("max_size={}", a.max_size),
                                ir::print_stmt(at, k_)),
                    "raise ad_stack_size, or leave the stack adaptive (max_size=0) and run determine_ad_stack_size; "
                    "if the stack was sized by that pass, its bound is wrong");
  st.entries.emplace_back(primal, ir::Value::zero(kind));
  st.max_depth = std::max(st.max_depth, static_cast<int64_t>(st.entries.size()));
}

AdStacks::Entry& AdStacks::top(size_t slot, const ir::AdStackAllocaStmt& a, const ir::Stmt& at, const char* what) {
  Stack& st = stacks_.at(slot);
  if (st.entries.empty())
    throw UserError(fmt::format("autodiff stack underflow: {} on the empty {} at `{}`", what, stack_text(a),
                                ir::print_stmt(at, k_)),
                    "every pop, load top and acc adj needs an earlier matching push after the stack alloc; check "
                    "the pairing of forward pushes and reverse pops");
  return st.entries.back();
}

void AdStacks::pop(size_t slot, const ir::AdStackAllocaStmt& a, const ir::Stmt& at) {
  top(slot, a, at, "pop");
  stacks_.at(slot).entries.pop_back();
}

void AdStacks::report_depths(std::map<int, int64_t>& out) const {
  for (const Stack& st : stacks_)
    if (st.alloc_id >= 0) out[st.alloc_id] = st.max_depth;
}

}  // namespace pb::runtime::detail
