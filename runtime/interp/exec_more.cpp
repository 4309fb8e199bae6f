#include "runtime/interp/exec_more.h"

#include <fmt/format.h>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace pb::runtime::detail {
namespace {

using ir::ScalarKind;
using ir::Value;

// Containers of passbench's own kernels (declared `dense` spaces, fields) and reference SNodes
// named `S<id>dense` / `S<id>root` are dense; the rest (pointer, bitmasked, dynamic, hash) are not.
bool is_dense(const ir::Kernel& k, const std::string& snode) {
  if (k.find_space(snode) || k.find_field(snode)) return true;
  return snode.ends_with("dense") || snode.ends_with("root");
}

struct More {
  ScalarKind kind;
  std::span<const Value> in;
  MoreContext& ctx;

  [[noreturn]] void fail(const ir::Stmt& s, const std::string& what, const std::string& remedy) const {
    throw UserError(fmt::format("{} at `{}` in {}", what, ir::print_stmt(s, ctx.kernel), ctx.label), remedy);
  }

  std::optional<Value> operator()(const ir::LoopUniqueStmt&) const { return in[0]; }
  std::optional<Value> operator()(const ir::RangeAssumptionStmt& s) const {
    int64_t v = in[0].as_i64(), base = in[1].as_i64();
    if (v < base + s.low || v >= base + s.high)
      fail(s, fmt::format("the assumption does not hold: {} is outside [{}, {})", v, base + s.low, base + s.high),
           "the kernel's code relies on this range (the reference compiler does not check it); fix the index "
           "arithmetic or the dump");
    return in[0];
  }
  std::optional<Value> operator()(const ir::DecorationStmt&) const { return std::nullopt; }  // a hint only
  std::optional<Value> operator()(const ir::ExternalTensorShapeAlongAxisStmt& s) const {
    if (s.arg_id.size() != 1)
      fail(s, "the shape of an ndarray member of a struct argument is not run yet",
           "pass the ndarray as an argument of its own");
    auto index = static_cast<size_t>(s.arg_id[0]);
    if (index >= ctx.state.args.size() || !ctx.state.args[index].is_ndarray)
      fail(s, fmt::format("argument {} is not an ndarray", index),
           "give an ndarray object for it in the inputs' \"args\"");
    const ir::Shape& shape = ctx.state.args[index].array.shape;
    if (static_cast<size_t>(s.axis) >= shape.size())
      fail(s, fmt::format("ndarray argument {} has {} dimension(s), no axis {}", index, shape.size(), s.axis),
           "give the ndarray as many dimensions as the kernel reads");
    return Value::from_int(kind, shape[static_cast<size_t>(s.axis)]);
  }
  std::optional<Value> operator()(const ir::SNodeOpStmt& s) const {
    if (!is_dense(ctx.kernel, s.snode))
      fail(s,
           fmt::format("SNode '{}' is not dense: sparse SNodes (pointer, bitmasked, dynamic, hash) are not run yet",
                       s.snode),
           "run the kernel on a build with dense SNodes only, or on the reference runtime");
    if (s.op == "is_active") return Value::from_int(kind, 1);  // every cell of a dense SNode is active
    if (s.op == "activate" || s.op == "deactivate") return Value::from_int(kind, 0);  // no effect on dense
    fail(s, fmt::format("SNode op '{}' is not run yet (it has meaning on dynamic or pointer SNodes only)", s.op),
         "run the kernel on the reference runtime");
  }
  std::optional<Value> operator()(const ir::RandStmt&) const {
    // Deterministic: drawn from the run's generator, seeded by the run options' seed.
    uint64_t bits = ctx.rng();
    // Floats are uniform in [0, 1), with as many random bits as the type holds (never rounding to 1).
    if (kind == ScalarKind::f32) return Value::from_double(kind, static_cast<double>(bits >> 40) * 0x1.0p-24);
    if (ir::is_float(kind)) return Value::from_double(kind, static_cast<double>(bits >> 11) * 0x1.0p-53);
    return Value::from_uint(kind, bits);
  }
  template <class T>
  std::optional<Value> operator()(const T& s) const {
    PB_ASSERT(false, fmt::format("`{}` is run by interpreter.cpp, not here", ir::print_stmt(s, ctx.kernel)));
    return std::nullopt;
  }
};

}  // namespace

std::optional<Value> exec_more(const ir::Stmt& s, ScalarKind kind, std::span<const Value> inputs, MoreContext& ctx) {
  return ir::visit(s, More{kind, inputs, ctx});
}

}  // namespace pb::runtime::detail
