#include "runtime/vulkan/run.h"

#include <algorithm>
#include <chrono>

#include "codegen/spirv/compile.h"
#include "ir/printer.h"
#include "ir/statements.h"
#include "ir/visitor.h"
#include "runtime/core/prepare.h"
#include "runtime/core/stack_capacity.h"

namespace pb::runtime::vulkan {

namespace {

bool uses_kind(const ir::Kernel& k, std::initializer_list<ir::ScalarKind> kinds) {
  bool found = false;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    for (auto x : kinds) found |= s.type.scalar == x;
  });
  for (const auto& f : k.fields())
    for (auto x : kinds) found |= f.dtype == x;
  return found;
}

// Stacks sized by an expression get what it evaluates to now when that is above the default. An
// expression that reads values an earlier task writes may grow during the launch: the bounds
// check then reports the overflow.
void size_stacks(const ir::Kernel& k, State& state, codegen::spirv::LoweringOptions& o) {
  std::vector<Buffer*> field_bufs;
  for (const auto& f : k.fields()) {
    auto it = state.fields.find(f.name);
    field_bufs.push_back(it == state.fields.end() ? nullptr : &it->second);
  }
  ir::walk(k.root(), [&](ir::Stmt& s) {
    const auto* alloc = ir::dyn_cast<ir::AdStackAllocaStmt>(&s);
    if (!alloc || alloc->max_size > 0 || !alloc->size || o.stack_capacity_by_stmt.count(s.id)) return;
    try {
      int64_t need = detail::stack_capacity(*alloc, k, state, field_bufs, ir::print_stmt(s, k));
      if (need > o.symbolic_stack_capacity) o.stack_capacity_by_stmt[s.id] = need;
    } catch (const UserError&) {
      return;  // not evaluable on the host: the default capacity and the bounds check stand
    }
  });
}

}  // namespace

codegen::spirv::LoweringOptions lowering_for(const ir::Kernel& k, const DeviceInfo& device,
                                             codegen::spirv::LoweringOptions base) {
  base.float64 = base.float64 || uses_kind(k, {ir::ScalarKind::f64});
  base.int64 = base.int64 || base.float64 || uses_kind(k, {ir::ScalarKind::i64, ir::ScalarKind::u64});
  base.atomic_float_add = base.atomic_float_add || device.atomic_float_add;
  base.preserve_inf_nan = base.preserve_inf_nan || device.preserve_inf_nan_f32;
  base.preserve_inf_nan_f64 = base.preserve_inf_nan_f64 || device.preserve_inf_nan_f64;
  if (base.unroll == 0) base.unroll = codegen::spirv::kRunUnroll;
  if (base.vector == codegen::spirv::VectorSteps::caller_default) base.vector = codegen::spirv::VectorSteps::on;
  return base;
}

RunReport run_kernel(Runtime& runtime, const ir::Kernel& k, State& state, const codegen::spirv::LoweringOptions& base,
                     const LaunchOptions& options) {
  ElementArgsBound elements(k, state);  // a scalarized kernel reads its caller's tensor arguments by element
  codegen::spirv::LoweringOptions o = lowering_for(k, runtime.device(), base);
  o.while_budget =
      options.max_steps == 0 ? 0 : static_cast<uint32_t>(std::min<uint64_t>(options.max_steps, UINT32_MAX));
  o.check_loop_exits = true;
  o.run_time_checks = true;
  size_stacks(k, state, o);
  RunReport report;
  auto start = std::chrono::steady_clock::now();
  report.compiled = codegen::spirv::compile(k, o);
  report.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report.launch = runtime.launch(k, report.compiled, state, options);
  if (auto error = flag_error(report.compiled, report.launch)) throw UserError(*error);
  return report;
}

}  // namespace pb::runtime::vulkan
