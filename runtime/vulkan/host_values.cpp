#include "runtime/vulkan/host_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "ir/diagnostic.h"
#include "ir/eval.h"
#include "ir/statements.h"
#include "ir/visitor.h"

namespace pb::runtime::vulkan::detail {

namespace {

using codegen::spirv::Binding;
using codegen::spirv::BindingKind;
using codegen::spirv::PushConstant;
using ir::ScalarKind;

uint64_t two_words(const uint32_t* w, size_t i) { return w[2 * i] | (uint64_t{w[2 * i + 1]} << 32); }

// A range bound as the host can evaluate it: constants, arguments, casts, binary operations and
// field elements at evaluable indices. nullopt for anything else (or an index out of bounds).
std::optional<ir::Value> evaluate(const ir::Kernel& k, const ir::Stmt* s, const State& state, int depth = 0) {
  if (depth > 16) return std::nullopt;
  if (const auto* c = ir::dyn_cast<ir::ConstStmt>(s)) return c->value;
  if (const auto* a = ir::dyn_cast<ir::ArgLoadStmt>(s)) {
    if (a->arg_index < 0 || static_cast<size_t>(a->arg_index) >= state.args.size()) return std::nullopt;
    const ArgValue& v = state.args[static_cast<size_t>(a->arg_index)];
    if (v.is_ndarray || v.is_tensor) return std::nullopt;
    return v.scalar;
  }
  if (const auto* sh = ir::dyn_cast<ir::ExternalTensorShapeAlongAxisStmt>(s)) {
    if (sh->arg_id.size() != 1 || sh->arg_id[0] < 0 || static_cast<size_t>(sh->arg_id[0]) >= state.args.size())
      return std::nullopt;
    const ArgValue& v = state.args[static_cast<size_t>(sh->arg_id[0])];
    if (!v.is_ndarray || sh->axis < 0 || static_cast<size_t>(sh->axis) >= v.array.shape.size()) return std::nullopt;
    return ir::Value::from_int(s->type.scalar, v.array.shape[static_cast<size_t>(sh->axis)]);
  }
  if (const auto* u = ir::dyn_cast<ir::UnaryOpStmt>(s); u && u->op == ir::UnaryOp::cast_value) {
    auto x = evaluate(k, u->x(), state, depth + 1);
    if (!x) return std::nullopt;
    return x->cast_to(s->type.scalar);
  }
  if (const auto* b = ir::dyn_cast<ir::BinaryOpStmt>(s)) {
    auto x = evaluate(k, b->lhs(), state, depth + 1);
    auto y = evaluate(k, b->rhs(), state, depth + 1);
    if (!x || !y) return std::nullopt;
    try {
      return ir::eval_binary(b->op, *x, *y, s->type.scalar);
    } catch (const ir::EvalError&) {
      return std::nullopt;
    }
  }
  if (const auto* g = ir::dyn_cast<ir::GlobalLoadStmt>(s)) {
    const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(g->src());
    if (!p) return std::nullopt;
    auto it = state.fields.find(k.field(p->field).name);
    if (it == state.fields.end() || it->second.shape.size() != p->indices().size()) return std::nullopt;
    int64_t linear = 0;
    for (size_t axis = 0; axis < p->indices().size(); ++axis) {
      auto i = evaluate(k, p->indices()[axis], state, depth + 1);
      if (!i) return std::nullopt;
      int64_t v = i->as_i64(), extent = it->second.shape[axis];
      if (v < 0 || v >= extent) return std::nullopt;
      linear = linear * extent + v;
    }
    return it->second.data.at(static_cast<size_t>(linear));
  }
  return std::nullopt;
}

const ir::Stmt* find_stmt(const ir::Kernel& k, int id) {
  const ir::Stmt* found = nullptr;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (s.id == id && !found) found = &s;
  });
  return found;
}

}  // namespace

void append_value(std::vector<uint32_t>& out, const ir::Value& v, ScalarKind as) {
  if (ir::bit_width(as) == 64) {
    uint64_t b = v.cast_to(as).bits();
    out.push_back(static_cast<uint32_t>(b));
    out.push_back(static_cast<uint32_t>(b >> 32));
  } else if (as == ScalarKind::u1) {
    out.push_back(v.as_bool() ? 1u : 0u);
  } else if (as == ScalarKind::f16) {  // stored as the f32 it rounds to (exact)
    out.push_back(std::bit_cast<uint32_t>(v.cast_to(as).as_f32()));
  } else {
    out.push_back(static_cast<uint32_t>(v.cast_to(as).bits()));
  }
}

ir::Value read_return(const uint32_t* slot, ScalarKind k) {
  bool narrow = ir::is_integral(k) && k != ScalarKind::u1 && ir::bit_width(k) < 32;
  if (!narrow) return read_value(slot, 0, k);
  return read_value(slot, 0, ir::is_signed(k) ? ScalarKind::i32 : ScalarKind::u32).cast_to(k);
}

ir::Value read_value(const uint32_t* w, size_t i, ScalarKind k) {
  switch (k) {
    case ScalarKind::f32:
      return ir::Value::make_f32(std::bit_cast<float>(w[i]));
    case ScalarKind::f16:  // a word the kernel rounded to a half
      return ir::Value::make_f16(std::bit_cast<float>(w[i]));
    case ScalarKind::i32:
      return ir::Value::make_i32(static_cast<int32_t>(w[i]));
    case ScalarKind::u32:
      return ir::Value::make_u32(w[i]);
    case ScalarKind::u1:
      return ir::Value::make_bool(w[i] != 0);
    case ScalarKind::f64:
      return ir::Value::make_f64(std::bit_cast<double>(two_words(w, i)));
    case ScalarKind::i64:
      return ir::Value::make_i64(static_cast<int64_t>(two_words(w, i)));
    case ScalarKind::u64:
      return ir::Value::make_u64(two_words(w, i));
    default:
      throw UserError(fmt::format("Vulkan: buffers of {} elements are not supported", ir::scalar_name(k)),
                      "run this kernel on --backend=interp");
  }
}

Buffer* buffer_of(const Binding& b, State& state) {
  auto missing = [&]() -> Buffer* {
    throw UserError(fmt::format("Vulkan: the inputs give no buffer for binding {} ({} {})", b.binding,
                                codegen::spirv::binding_kind_name(b.kind), b.name),
                    "give the field's shape (or the ndarray) in the inputs");
  };
  switch (b.kind) {
    case BindingKind::field:
    case BindingKind::grad_field: {
      auto it = state.fields.find(b.name);
      return it == state.fields.end() ? missing() : &it->second;
    }
    case BindingKind::ndarray:
    case BindingKind::ndarray_grad:
    case BindingKind::ndarray_dual: {
      if (b.arg < 0 || static_cast<size_t>(b.arg) >= state.args.size()) return missing();
      ArgValue& a = state.args[static_cast<size_t>(b.arg)];
      if (!a.is_ndarray) return missing();
      if (b.kind == BindingKind::ndarray) return &a.array;
      auto& companion = b.kind == BindingKind::ndarray_grad ? a.grad : a.dual;
      if (!companion)
        companion =
            Buffer::zeros(a.array.dtype, a.array.shape,
                          fmt::format("arg {} {}", b.arg, b.kind == BindingKind::ndarray_grad ? "gradient" : "dual"));
      return &*companion;
    }
    case BindingKind::temps:
    case BindingKind::heap:
    case BindingKind::flags:
    case BindingKind::activity:
      return nullptr;
  }
  return nullptr;
}

std::vector<uint32_t> push_constant_words(const ir::Kernel& k, const codegen::spirv::CompiledKernel& ck,
                                          const State& state) {
  std::vector<uint32_t> out((ck.push_constant_bytes + 3) / 4, 0);
  for (const PushConstant& p : ck.push_constants) {
    std::vector<uint32_t> w;
    auto index = static_cast<size_t>(p.index);
    auto axis = static_cast<size_t>(p.axis);
    switch (p.kind) {
      case PushConstant::Kind::arg:
        if (index >= state.args.size())
          throw UserError(fmt::format("Vulkan: the inputs give no argument {}", p.index), "add it to \"args\"");
        append_value(w, state.args[index].scalar, p.type);
        break;
      case PushConstant::Kind::field_extent:
        w.push_back(static_cast<uint32_t>(state.fields.at(k.field(p.index).name).shape.at(axis)));
        break;
      case PushConstant::Kind::ndarray_extent:
        if (index >= state.args.size() || !state.args[index].is_ndarray)
          throw UserError(fmt::format("argument {} is not an ndarray", p.index),
                          "give an ndarray object for it in the inputs' \"args\"");
        if (axis >= state.args[index].array.shape.size())
          throw UserError(fmt::format("ndarray argument {} has {} dimension(s), no axis {}", p.index,
                                      state.args[index].array.shape.size(), p.axis),
                          "give the ndarray as many dimensions as the kernel reads");
        w.push_back(static_cast<uint32_t>(state.args[index].array.shape[axis]));
        break;
      case PushConstant::Kind::space_extent:
        w.push_back(static_cast<uint32_t>(space_shape(k, state, p.space).at(axis)));
        break;
    }
    std::copy(w.begin(), w.end(), out.begin() + p.offset / 4);
  }
  return out;
}

std::optional<uint64_t> task_iterations(const ir::Kernel& k, const codegen::spirv::TaskInfo& task, const State& state) {
  if (task.invocations) return task.invocations;
  if (task.kind == codegen::spirv::TaskKind::struct_for) {
    ir::Shape shape = space_shape(k, state, task.space);
    uint64_t n = 1;
    for (size_t axis = 0; axis < task.space_shape.size() && axis < shape.size(); ++axis)
      n *= static_cast<uint64_t>(std::max<int64_t>(shape[axis], 0));
    return n;
  }
  const auto* loop = ir::dyn_cast<ir::RangeForStmt>(find_stmt(k, task.loop_stmt_id));
  if (!loop) return std::nullopt;
  auto begin = evaluate(k, loop->begin(), state);
  auto end = evaluate(k, loop->end(), state);
  if (!begin || !end) return std::nullopt;
  int64_t b = begin->as_i64(), e = end->as_i64();
  return e > b ? static_cast<uint64_t>(e - b) : 0;
}

}  // namespace pb::runtime::vulkan::detail
