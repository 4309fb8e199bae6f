#include "runtime/interp/exec_tensor.h"

#include <fmt/format.h>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/eval.h"
#include "ir/printer.h"
#include "ir/tensor_type.h"
#include "ir/visitor.h"

namespace pb::runtime::detail {
namespace {

using ir::Value;

struct Exec {
  const Op& op;
  TensorContext& ctx;

  [[noreturn]] void fail(const std::string& what, const std::string& remedy) const {
    throw UserError(fmt::format("{} at `{}` in {}", what, ir::print_stmt(*op.stmt, ctx.kernel), ctx.label), remedy);
  }
  // Lane `l` of operand `i`; a scalar operand gives its one value to every lane.
  const Value& in(size_t i, uint32_t l = 0) const {
    uint32_t slot = op.operands[i];
    PB_ASSERT(ctx.defined[slot],
              fmt::format("`{}` reads operand {} before it was computed", ir::print_stmt(*op.stmt, ctx.kernel), i));
    return ctx.values[slot + (op.stmt->operand(i)->type.is_tensor() ? l : 0)];
  }
  Value* ptr(size_t i) const {
    Value* p = ctx.ptrs[op.operands[i]];
    PB_ASSERT(
        p, fmt::format("`{}` uses pointer operand {} before it was computed", ir::print_stmt(*op.stmt, ctx.kernel), i));
    return p;
  }
  void set(uint32_t l, const Value& v) const { ctx.values[op.slot + l] = v; }
  void done() const { ctx.defined[op.slot] = 1; }
  uint32_t lanes_of(size_t i) const {
    return static_cast<uint32_t>(ir::tensor_elements(op.stmt->operand(i)->type.pointee()));
  }
  template <class F>
  Value evaluate(F f) const {
    try {
      return f();
    } catch (const ir::EvalError& e) {
      fail(e.message, e.remedy);
    }
  }

  // The base of an ndarray of tensors (external_ptr addresses it), or a tensor passed by value.
  void operator()(const ir::ArgLoadStmt& s) const {
    const auto& args = ctx.args;
    if (s.arg_index < 0 || static_cast<size_t>(s.arg_index) >= args.size())
      fail(fmt::format("argument {} is not given", s.arg_index), "add it to the inputs' \"args\"");
    const ArgValue& a = args[static_cast<size_t>(s.arg_index)];
    if (a.is_ndarray || s.type.pointer) {
      if (!a.is_ndarray)
        fail(fmt::format("argument {} is not an ndarray, but the kernel addresses one", s.arg_index),
             "give an ndarray object for it");
      done();
      return;
    }
    if (!a.is_tensor || a.array.size() != op.lanes)
      fail(fmt::format("argument {} is not given as a tensor of {} elements", s.arg_index, op.lanes),
           "give its elements as an array in the inputs' \"args\"");
    for (uint32_t l = 0; l < op.lanes; ++l) set(l, a.array.data[l].cast_to(op.kind));
    done();
  }
  void operator()(const ir::AllocaStmt&) const {
    uint32_t n = lanes_of_pointee();
    for (uint32_t l = 0; l < n; ++l) set(l, Value::zero(op.kind));
    ctx.ptrs[op.slot] = &ctx.values[op.slot];
    done();
  }
  uint32_t lanes_of_pointee() const { return static_cast<uint32_t>(ir::tensor_elements(op.stmt->type.pointee())); }
  void load() const {
    const Value* p = ptr(0);
    for (uint32_t l = 0; l < op.lanes; ++l) set(l, p[l]);
    done();
  }
  void store() const {
    Value* p = ptr(0);
    for (uint32_t l = 0, n = lanes_of(0); l < n; ++l) p[l] = in(1, l);
  }
  void operator()(const ir::LocalLoadStmt&) const { load(); }
  void operator()(const ir::GlobalLoadStmt&) const { load(); }
  void operator()(const ir::LocalStoreStmt&) const { store(); }
  void operator()(const ir::GlobalStoreStmt&) const { store(); }
  void operator()(const ir::AtomicOpStmt& s) const {
    Value* p = ptr(0);
    for (uint32_t l = 0; l < op.lanes; ++l) {
      Value old = p[l];
      p[l] = evaluate([&] { return ir::eval_atomic(s.op, old, in(1, l)); });
      set(l, old);
    }
    done();
  }
  void operator()(const ir::UnaryOpStmt& s) const {
    if (s.op == ir::UnaryOp::cast_bits)
      fail("a bit cast of a tensor is not run", "run the scalarize pass first, which casts element by element");
    for (uint32_t l = 0; l < op.lanes; ++l) {
      const Value& x = in(0, l);
      set(l, s.op == ir::UnaryOp::cast_value ? x.cast_to(op.kind)
                                             : evaluate([&] { return ir::eval_unary(s.op, x, op.kind); }));
    }
    done();
  }
  void operator()(const ir::BinaryOpStmt& s) const {
    for (uint32_t l = 0; l < op.lanes; ++l)
      set(l, evaluate([&] { return ir::eval_binary(s.op, in(0, l), in(1, l), op.kind); }));
    done();
  }
  void operator()(const ir::TernaryOpStmt&) const {
    for (uint32_t l = 0; l < op.lanes; ++l) set(l, in(0, l).is_zero() ? in(2, l) : in(1, l));
    done();
  }
  void operator()(const ir::MatrixInitStmt&) const {
    for (uint32_t l = 0; l < op.lanes; ++l) set(l, in(l).cast_to(op.kind));
    done();
  }
  void operator()(const ir::GetElementStmt& s) const {
    auto e = ir::element_index(s.src()->type, s.index);
    PB_ASSERT(e, "get_element index outside its tensor (the verifier checks it)");
    set(0, in(0, static_cast<uint32_t>(*e)));
    done();
  }
  void operator()(const ir::MatrixPtrStmt& s) const {
    int64_t n = ir::tensor_elements(s.origin()->type.pointee());
    int64_t offset = in(1).as_i64();
    if (ir::isa<ir::GetChStmt>(s.origin())) offset /= ir::bit_width(s.origin()->type.scalar) / 8;  // bytes there
    if (offset < 0 || offset >= n)
      fail(fmt::format("element {} is outside {}", offset, ir::to_string(s.origin()->type.pointee())),
           "check the shift ptr offset against the tensor's shape");
    ctx.ptrs[op.slot] = ptr(0) + offset;
    done();
  }
  void operator()(const ir::GlobalTemporaryStmt& s) const {
    ir::DataType t = s.type.pointee();
    ir::Value* p = ctx.temps.tensor(s.offset, lanes_of_pointee(), op.kind, ir::bit_width(t.scalar) / 8);
    if (!p)
      fail(
          fmt::format("the bytes of this {} temporary are also used as scalars or as another tensor", ir::to_string(t)),
          "give each global temporary its own bytes (the reference's offload does), or scalarize the kernel");
    ctx.ptrs[op.slot] = p;
    done();
  }
  // Everything else that can meet a tensor: a pointer tensor, a stack, a print...
  template <class T>
  void operator()(const T&) const {
    fail(fmt::format("`{}` on a tensor is not run", ir::kind_name(T::kKind)),
         "run the scalarize pass first (`--passes=scalarize`), which turns tensors into scalars");
  }
};

}  // namespace

void exec_tensor(const Op& op, TensorContext& ctx) { ir::visit(*op.stmt, Exec{op, ctx}); }

}  // namespace pb::runtime::detail
