#include "runtime/interp/exec_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <initializer_list>
#include <string_view>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/visitor.h"

namespace pb::runtime::detail {
namespace {

using ir::ScalarKind;
using ir::Value;

struct Values {
  ScalarKind kind;
  std::span<const Value> in;
  ValuesContext& ctx;

  [[noreturn]] void fail(const ir::Stmt& s, const std::string& what, const std::string& remedy) const {
    throw UserError(fmt::format("{} at `{}` in {}", what, ir::print_stmt(s, ctx.kernel), ctx.label), remedy);
  }

  std::optional<Value> operator()(const ir::LinearizeStmt& s) const {
    int64_t v = 0;
    for (size_t i = 0; i < s.strides.size(); ++i) v = v * s.strides[i] + in[i].as_i64();
    return Value::from_int(kind, v);
  }
  std::optional<Value> operator()(const ir::IntegerOffsetStmt& s) const {
    return Value::from_int(kind, in[0].as_i64() + s.offset);
  }
  std::optional<Value> operator()(const ir::BitExtractStmt& s) const {
    uint64_t bits = in[0].as_u64() >> s.bit_begin;
    int width = s.bit_end - s.bit_begin;
    uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    return Value::from_uint(kind, bits & mask);
  }
  // Tensor kinds run in runtime/interp/exec_tensor.cpp (detail::Op::tensor).
  template <class T>
    requires(std::same_as<T, ir::MatrixInitStmt> || std::same_as<T, ir::GetElementStmt> ||
             std::same_as<T, ir::MatrixPtrStmt> || std::same_as<T, ir::MatrixOfGlobalPtrStmt> ||
             std::same_as<T, ir::MatrixOfMatrixPtrStmt>)
  std::optional<Value> operator()(const T& s) const {
    fail(s, "a tensor statement reached the scalar executor", "report this: it is a passbench bug");
  }
  // The cell's number, row-major over the SNode's full shape (a dynamic SNode's: over its parent's
  // cells); the SNode op it feeds works on that cell (runtime/interp/sparse.cpp).
  std::optional<Value> operator()(const ir::SNodePtrStmt& s) const {
    std::optional<ir::Shape> cells = ir::cell_pointer_shape(ctx.kernel, s.snode);
    if (!cells) fail(s, fmt::format("the SNode '{}' is not declared", s.snode), ir::kDeclareSNodeRemedy);
    const ir::Shape& shape = *cells;
    if (in.size() != shape.size())
      fail(s,
           fmt::format("the cells of SNode '{}' {} have {} coordinate(s), but the global ptr gives {}", s.snode,
                       ctx.kernel.find_space(s.snode)->kind == ir::SNodeKind::dynamic ? "(its parent's cells)" : "",
                       shape.size(), in.size()),
           "give one index per dimension of the SNode's full shape (of its parent's, for a dynamic SNode)");
    int64_t cell = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t v = in[d].as_i64();
      if (v < 0 || v >= shape[d])
        fail(
            s,
            fmt::format("index {} is out of bounds for dimension {} of SNode '{}' ({} cells)", v, d, s.snode, shape[d]),
            "check the index against the SNode's shape in the header");
      cell = cell * shape[d] + v;
    }
    return Value::from_int(ScalarKind::i64, cell);
  }
  std::optional<Value> operator()(const ir::LoopUniqueStmt&) const { return in[0]; }
  // Its readers (external function calls) are not read either: an ndarray is addressed through
  // external_ptr, whose base is the argument itself.
  std::optional<Value> operator()(const ir::ExternalTensorBasePtrStmt& s) const {
    fail(s, "the base address of an ndarray (external_tensor_base_ptr) has no meaning on the interpreter",
         "address the ndarray's elements with external_ptr on its argload, or run the kernel on the reference "
         "runtime");
  }
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
  std::optional<Value> operator()(const ir::ArgLoadStmt& s) const {
    const auto& args = ctx.state.args;
    if (s.arg_index < 0 || static_cast<size_t>(s.arg_index) >= args.size())
      fail(s, fmt::format("argument {} is not given", s.arg_index), "add it to the inputs' \"args\"");
    const ArgValue& a = args[static_cast<size_t>(s.arg_index)];
    if (s.type.pointer) {  // an ndarray's base: external_ptr addresses its elements
      if (!a.is_ndarray)
        fail(s, fmt::format("argument {} is a scalar, but the kernel loads an ndarray", s.arg_index),
             "give an ndarray object for it");
      return Value{};
    }
    if (a.is_ndarray || a.is_tensor)
      fail(s,
           fmt::format("argument {} is {}, but the kernel loads a scalar", s.arg_index,
                       a.is_ndarray ? "an ndarray" : "a tensor"),
           "give a number for it");
    if (a.scalar.kind() == kind) return a.scalar;
    if (!ir::is_float(a.scalar.kind()) || !ir::is_float(kind))
      fail(s,
           fmt::format("argument {} holds {} but the kernel loads {}", s.arg_index, ir::scalar_name(a.scalar.kind()),
                       ir::scalar_name(kind)),
           "give the argument its declared type");
    return a.scalar.cast_to(kind);
  }
  std::optional<Value> operator()(const ir::RandStmt&) const {
    // Deterministic: drawn from the run's generator, seeded by the run options' seed.
    uint64_t bits = ctx.rng();
    // Floats are uniform in [0, 1), with as many random bits as the type holds (never rounding to 1).
    if (kind == ScalarKind::f32) return Value::from_double(kind, static_cast<double>(bits >> 40) * 0x1.0p-24);
    if (ir::is_float(kind)) return Value::from_double(kind, static_cast<double>(bits >> 11) * 0x1.0p-53);
    return Value::from_uint(kind, bits);
  }
  std::optional<Value> operator()(const ir::InternalFuncStmt& s) const;
  std::optional<Value> operator()(const ir::BlockCornerIndexStmt& s) const {
    fail(s, "block-local storage (block corner index) is not run yet",
         "dump the kernel before the make_block_local pass, or without block-local storage (bls)");
  }
  std::optional<Value> operator()(const ir::BlockLocalPtrStmt& s) const {
    fail(s, "block-local storage (block local ptr) is not run yet",
         "dump the kernel before the make_block_local pass, or without block-local storage (bls)");
  }
  // Its only reader, a call, is not run: the reference itself has no effect.
  std::optional<Value> operator()(const ir::ReferenceStmt&) const { return std::nullopt; }
  std::optional<Value> operator()(const ir::FuncCallStmt& s) const {
    fail(s, fmt::format("calls of real functions (\"{}\") are not run yet", s.func),
         "inline the function (a plain ti.func) and dump the kernel again");
  }
  std::optional<Value> operator()(const ir::BitStructStoreStmt& s) const {
    fail(s, "bit struct (quantized) stores are not run yet", "run the kernel without quantized types");
  }
  template <class T>
  std::optional<Value> operator()(const T& s) const {
    PB_ASSERT(false, fmt::format("`{}` is run by interpreter.cpp, not here", ir::print_stmt(s, ctx.kernel)));
    return std::nullopt;
  }
};

// Internal functions on a subgroup and a block of one thread: barriers and fences do nothing,
// local and subgroup ids are 0, global ids are the iteration, reductions and scans give the
// value, a shuffle or broadcast from lane 0 gives the value (another lane does not exist).
std::optional<Value> Values::operator()(const ir::InternalFuncStmt& s) const {
  const std::string& f = s.func_name;
  auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), f) != names.end();
  };
  auto arg = [&](size_t i) {
    if (i >= in.size())
      fail(s, fmt::format("internal call {} takes at least {} argument(s), got {}", f, i + 1, in.size()),
           "check the dump: the reference passes them all");
    return in[i];
  };
  auto truth = [&](const Value& v) { return Value::from_int(kind, v.is_zero() ? 0 : 1); };
  if (is({"workgroupBarrier", "workgroupMemoryBarrier", "subgroupBarrier", "subgroupMemoryBarrier", "block_barrier",
          "block_mem_fence", "grid_memfence", "warp_barrier", "do_nothing"}))
    return Value::from_int(kind, 0);
  if (is({"localInvocationId", "subgroupInvocationId", "block_thread_idx"})) return Value::from_int(kind, 0);
  if (is({"globalInvocationId", "vkGlobalThreadIdx", "linear_thread_idx"}))
    return Value::from_int(kind, ctx.iteration < 0 ? 0 : ctx.iteration);
  if (is({"subgroupElect", "subgroupSize", "cuda_active_mask", "cuda_uni_sync_i32"})) return Value::from_int(kind, 1);
  if (is({"subgroupBallotU32", "subgroupBallotU64", "block_barrier_and_i32", "block_barrier_or_i32",
          "block_barrier_count_i32", "cuda_ballot_i32", "cuda_all_sync_i32", "cuda_any_sync_i32"}))
    return truth(arg(in.size() > 1 ? in.size() - 1 : 0));  // the predicate comes last
  if (is({"cuda_match_any_sync_i32", "cuda_match_all_sync_i32"})) return Value::from_int(kind, 1);
  if (f.starts_with("subgroupAdd") || f.starts_with("subgroupMul") || f.starts_with("subgroupMin") ||
      f.starts_with("subgroupMax") || f.starts_with("subgroupAnd") || f.starts_with("subgroupOr") ||
      f.starts_with("subgroupXor") || f.starts_with("subgroupInclusive"))
    return arg(0).cast_to(kind);
  if (is({"subgroupBroadcast", "subgroupShuffle", "subgroupShuffleDown", "subgroupShuffleUp"})) {
    if (!arg(1).is_zero())
      fail(s,
           fmt::format("{} reads lane or offset {} of a one-thread subgroup, which SPIR-V leaves undefined", f,
                       arg(1).to_string()),
           "the interpreter runs a subgroup of one thread; only lane 0 (offset 0) has a value");
    return arg(0).cast_to(kind);
  }
  if (f.starts_with("cuda_shfl_")) return arg(1).cast_to(kind);  // a lane outside the warp reads its own value
  fail(s, fmt::format("internal function '{}' has no meaning on the interpreter", f),
       "run the kernel on the reference runtime, or dump it without this intrinsic");
}

}  // namespace

std::optional<Value> exec_values(const ir::Stmt& s, ScalarKind kind, std::span<const Value> inputs,
                                 ValuesContext& ctx) {
  return ir::visit(s, Values{kind, inputs, ctx});
}

}  // namespace pb::runtime::detail
