#include "runtime/core/stack_capacity.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::runtime::detail {

UserError unsized_stack_error(const ir::AdStackAllocaStmt& a, const ir::Kernel& k, const std::string& label) {
  return UserError(fmt::format("stack ${} has no size (max_size=0): run determine_ad_stack_size or give a fixed "
                               "ad_stack_size (`{}` in {})",
                               a.id, ir::print_stmt(a, k), label),
                   "run the determine_ad_stack_size pass before running the kernel, or compile with a fixed "
                   "ad_stack_size");
}

int64_t stack_capacity(const ir::AdStackAllocaStmt& s, const ir::Kernel& k, const State& st,
                       std::span<Buffer* const> field_bufs, const std::string& stack_text) {
  if (s.max_size > 0 || !s.size) return s.max_size;
  ir::SizeEnv env;
  env.arg = [&](int index) -> int64_t {
    if (index < 0 || static_cast<size_t>(index) >= st.args.size() || st.args[static_cast<size_t>(index)].is_ndarray ||
        st.args[static_cast<size_t>(index)].is_tensor)
      throw UserError(fmt::format("argument {} is not given as a scalar", index), "add it to the inputs' \"args\"");
    return st.args[static_cast<size_t>(index)].scalar.as_i64();
  };
  env.ndarray = [&](int index, std::span<const int64_t> idx) -> int64_t {
    if (index < 0 || static_cast<size_t>(index) >= st.args.size() || !st.args[static_cast<size_t>(index)].is_ndarray)
      throw UserError(fmt::format("argument {} is not given as an ndarray", index), "add it to the inputs' \"args\"");
    const Buffer& b = st.args[static_cast<size_t>(index)].array;
    if (idx.size() != b.shape.size())
      throw UserError(fmt::format("ndarray argument {} has shape {} but is read with {} index(es)", index,
                                  ir::shape_to_string(b.shape), idx.size()));
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (idx[d] >= b.shape[d])
        throw UserError(fmt::format("index {} is out of bounds for axis {} of ndarray argument {} of shape {}", idx[d],
                                    d, index, ir::shape_to_string(b.shape)),
                        "the size bounds a loop index by more than the kernel reaches; give this kernel a fixed "
                        "size (reverse_ad{ad_stack_size=N})");
      off = off * b.shape[d] + idx[d];
    }
    return b.data[static_cast<size_t>(off)].as_i64();
  };
  env.field = [&](const std::string& name, std::span<const int64_t> idx) -> int64_t {
    auto id = k.find_field(name);
    const Buffer* b = id ? field_bufs[static_cast<size_t>(*id)] : nullptr;
    if (!b)
      throw UserError(fmt::format("field '{}' has no data in the state", name), "give the field a shape and data");
    if (idx.size() != b->shape.size())
      throw UserError(fmt::format("field '{}' has shape {} but is read with {} index(es)", name,
                                  ir::shape_to_string(b->shape), idx.size()));
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (idx[d] >= b->shape[d])
        // The sizing maximised over a wider index range than the kernel reads (a loop bound
        // through a select or a guard it can only bound from above).
        throw UserError(fmt::format("index {} is out of bounds for axis {} of field '{}' of shape {}", idx[d], d, name,
                                    ir::shape_to_string(b->shape)),
                        "the size bounds a loop index by more than the kernel reaches; give this kernel a fixed "
                        "size (reverse_ad{ad_stack_size=N})");
      off = off * b->shape[d] + idx[d];
    }
    return b->data[static_cast<size_t>(off)].as_i64();
  };
  try {
    return std::max<int64_t>(ir::evaluate(*s.size, env), 1);
  } catch (const UserError& e) {
    throw UserError(
        fmt::format("cannot evaluate the size of {}: {}", stack_text, e.diagnostic().message),
        e.diagnostic().remedy.empty() ? "check the inputs the size expression reads" : e.diagnostic().remedy);
  }
}

void StackCapacities::bind(const ir::Kernel& k, const State& st, std::span<Buffer* const> field_bufs) {
  read_ranges_.clear();
  cached_.clear();
  generation_ = 0;
  evaluations_ = 0;
  auto add = [&](const Buffer* b) {
    if (b && !b->data.empty()) read_ranges_.emplace_back(b->data.data(), b->data.data() + b->data.size());
  };
  ir::walk(k.root(), [&](const ir::Stmt& stmt) {
    const auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&stmt);
    if (!a || a->max_size > 0 || !a->size) return;
    for (const ir::SizeExpr* e : ir::nodes(*a->size)) {
      if (e->op() == ir::SizeOp::Field) {
        if (auto id = k.find_field(e->name())) add(field_bufs[static_cast<size_t>(*id)]);
      } else if (e->op() == ir::SizeOp::Ndarray) {
        auto index = static_cast<size_t>(e->value());
        if (index < st.args.size() && st.args[index].is_ndarray) add(&st.args[index].array);
      }
    }
  });
}

int64_t StackCapacities::capacity(const ir::AdStackAllocaStmt& s, const ir::Kernel& k, const State& st,
                                  std::span<Buffer* const> field_bufs, const std::function<std::string()>& stack_text) {
  if (s.max_size > 0 || !s.size) return s.max_size;
  auto it = cached_.find(s.id);
  if (it != cached_.end() && it->second.first == generation_) return it->second.second;
  int64_t cap = stack_capacity(s, k, st, field_bufs, stack_text());
  ++evaluations_;
  cached_[s.id] = {generation_, cap};
  return cap;
}

}  // namespace pb::runtime::detail
