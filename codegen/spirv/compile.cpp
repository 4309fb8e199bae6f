#include "codegen/spirv/compile.h"

#include <fmt/format.h>

#include "codegen/spirv/narrow_ints.h"
#include "codegen/spirv/resources.h"
#include "codegen/spirv/task_emitter.h"
#include "codegen/spirv/task_plan.h"
#include "codegen/spirv/validate.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/type_uses.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv {
namespace {

// A short readable form of a range bound: 16, arg(0), n[], n[] - 1, ...
std::string describe(const ir::Kernel& k, const ir::Stmt* s, int depth = 0) {
  if (depth > 4) return fmt::format("${}", s->id);
  if (const auto* c = ir::dyn_cast<ir::ConstStmt>(s)) return c->value.to_string();
  if (const auto* a = ir::dyn_cast<ir::ArgLoadStmt>(s)) return fmt::format("arg({})", a->arg_index);
  if (const auto* sh = ir::dyn_cast<ir::ExternalTensorShapeAlongAxisStmt>(s); sh && sh->arg_id.size() == 1)
    return fmt::format("arg({}).shape[{}]", sh->arg_id[0], sh->axis);
  if (const auto* u = ir::dyn_cast<ir::UnaryOpStmt>(s); u && u->op == ir::UnaryOp::cast_value)
    return describe(k, u->x(), depth + 1);
  if (const auto* g = ir::dyn_cast<ir::GlobalLoadStmt>(s)) {
    if (const auto* p = ir::dyn_cast<ir::GlobalPtrStmt>(g->src())) {
      std::string idx;
      for (const ir::Stmt* i : p->indices()) idx += (idx.empty() ? "" : ", ") + describe(k, i, depth + 1);
      return fmt::format("{}[{}]", k.field(p->field).name, idx);
    }
  }
  if (const auto* b = ir::dyn_cast<ir::BinaryOpStmt>(s))
    return fmt::format("({} {} {})", describe(k, b->lhs(), depth + 1), ir::op_name(b->op),
                       describe(k, b->rhs(), depth + 1));
  return fmt::format("${}", s->id);
}

RangeBound bound_of(const ir::Kernel& k, const ir::Stmt* s) {
  RangeBound b;
  if (const auto* c = ir::dyn_cast<ir::ConstStmt>(s)) b.constant = c->value.as_i64();
  b.source = describe(k, s);
  return b;
}

// An offloaded range_for bound: a constant, a global temporary, or a value of an earlier task.
RangeBound task_bound_of(const ir::Kernel& k, const ir::OffloadedStmt& o, const ir::TaskBound& b) {
  switch (b.kind) {
    case ir::TaskBound::Kind::constant:
      return {b.value, std::to_string(b.value)};
    case ir::TaskBound::Kind::temporary:
      return {std::nullopt, fmt::format("tmp(offset={}B)", b.value)};
    case ir::TaskBound::Kind::operand:
      return bound_of(k, o.bound_operand(b));
  }
  return {};
}

void describe_dispatch(const ir::Kernel& k, const detail::Task& task, TaskInfo& info) {
  info.loop_stmt_id = task.kind == TaskKind::serial ? -1 : task.roots.front()->id;
  const ir::OffloadedStmt* o = task.offloaded;
  if (task.kind == TaskKind::serial) {
    info.invocations = 1;
  } else if (o && task.kind == TaskKind::range_for) {
    info.begin = task_bound_of(k, *o, o->begin);
    info.end = task_bound_of(k, *o, o->end);
    if (info.begin.constant && info.end.constant)
      info.invocations = static_cast<uint64_t>(std::max<int64_t>(*info.end.constant - *info.begin.constant, 0));
  } else if (const auto* rf = ir::dyn_cast<ir::RangeForStmt>(task.roots.front())) {
    info.begin = bound_of(k, rf->begin());
    info.end = bound_of(k, rf->end());
    if (info.begin.constant && info.end.constant)
      info.invocations = static_cast<uint64_t>(std::max<int64_t>(*info.end.constant - *info.begin.constant, 0));
  } else {
    const ir::Stmt& sf = *task.roots.front();
    info.space = detail::iterated_space(sf);
    auto shape = detail::struct_for_shape(k, sf);
    int rank = detail::struct_for_rank(k, sf);
    uint64_t n = 1;
    for (int axis = 0; axis < rank; ++axis) {
      if (shape) n *= static_cast<uint64_t>((*shape)[static_cast<size_t>(axis)]);
      info.space_shape.push_back(shape ? std::optional<int64_t>((*shape)[static_cast<size_t>(axis)]) : std::nullopt);
    }
    if (shape) info.invocations = n;
  }
}

// The types a kernel's `return` statements give, in order (every return must give the same);
// empty when it has none.
std::vector<ir::ScalarKind> return_types(const ir::Kernel& k) {
  std::optional<std::vector<ir::ScalarKind>> types;
  ir::walk(k.root(), [&](const ir::Stmt& s) {
    const auto* r = ir::dyn_cast<ir::ReturnStmt>(&s);
    if (!r) return;
    std::vector<ir::ScalarKind> these;
    for (const ir::Stmt* v : r->operands()) these.push_back(v->type.scalar);
    if (types && *types != these)
      throw UserError(
          fmt::format("`{}` returns other types than an earlier return of the kernel", ir::print_stmt(s, k)),
          "return the same types from every return statement, as the reference requires");
    types = std::move(these);
  });
  return types.value_or(std::vector<ir::ScalarKind>{});
}

}  // namespace

bool compiles_type(ir::DataType t) { return t.quant == 0; }

CompiledKernel compile(const ir::Kernel& source, const LoweringOptions& options) {
  auto errors = ir::verify(source);
  if (!errors.empty())
    throw UserError(fmt::format("the kernel does not verify, so it cannot be compiled: {}", errors.front().format()),
                    "fix the IR (passbench verify) before compiling it");
  if (auto use = ir::first_type_use_outside(source, [](ir::DataType t) { return !t.is_tensor(); }))
    throw UserError(fmt::format("the SPIR-V backend compiles scalar kernels; this one uses a tensor type: {}", *use),
                    "run the scalarize pass first (--passes=scalarize), which turns tensors into scalars");
  if (auto use = ir::first_type_use_outside(source, compiles_type))
    throw UserError(fmt::format("the SPIR-V backend does not compile quant types yet: {}", *use),
                    "run the kernel on the interpreter (--backend=interp), which runs quant integers");
  std::unique_ptr<ir::Kernel> lowered = lower_narrow_integers(source);
  const ir::Kernel& kernel = lowered ? *lowered : source;
  CompiledKernel out;
  out.kernel_name = kernel.name;
  out.options = options;
  detail::KernelPlan plan = detail::plan_kernel(kernel);
  out.returns = return_types(source);
  if (!out.returns.empty()) {  // after the temporaries, 8-byte aligned: the marker, then one slot per value
    out.return_word = plan.temps_words + plan.temps_words % 2;
    plan.temps_words = out.return_word + 2 + 2 * static_cast<uint32_t>(out.returns.size());
  }
  detail::KernelResources res = detail::assign_resources(kernel, plan, options);
  out.bindings = res.bindings;
  out.push_constants = res.push_constants;
  out.push_constant_bytes = res.push_constant_bytes;
  out.temps_words = plan.temps_words;
  out.activity = detail::activity_ranges(res.sparse);
  auto add = [&](TaskInfo info, const std::string& name) {
    if (options.validate) {
      ValidationResult v = validate(info.spirv);
      if (!v.ok)
        internal_error(__FILE__, __LINE__,
                       fmt::format("SPIR-V codegen bug: the module of task {} ({}) fails validation:\n{}\n{}", name,
                                   lowering_name(options), v.message, v.excerpt));
    }
    out.tasks.push_back(std::move(info));
  };
  for (const detail::Task& task : plan.tasks) {
    if (task.kind == TaskKind::struct_for) {  // a sparse space's cells are listed as the task starts
      int space = res.sparse.find(detail::iterated_space(*task.roots.front()));
      if (space >= 0 && res.sparse.spaces[static_cast<size_t>(space)].list_word >= 0) {
        detail::Task listing;
        listing.kind = TaskKind::range_for;
        listing.name = task.name + "_list";
        add(detail::TaskEmitter(kernel, plan, res, options, listing, out).emit_listing(space), listing.name);
      }
    }
    TaskInfo info = detail::TaskEmitter(kernel, plan, res, options, task, out).emit();
    describe_dispatch(kernel, task, info);
    add(std::move(info), task.name);
  }
  return out;
}

}  // namespace pb::codegen::spirv
