// Internal to codegen/spirv: the kernel-wide interface every task module shares: descriptor
// bindings (set 0: fields, gradient fields, ndarrays, temps, heap, flags, activity) and the push-constant
// block (scalar arguments, then extents that are not known at compile time).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/spirv/compiled_kernel.h"
#include "codegen/spirv/sparse_layout.h"
#include "codegen/spirv/task_plan.h"
#include "ir/kernel.h"

namespace pb::codegen::spirv::detail {

// Which array of an ndarray argument an external ptr addresses: 0 its data, 1 its gradient
// (is_grad), 2 its dual (is_dual).
inline int ndarray_array(const ir::ExternalPtrStmt& e) { return e.is_grad ? 1 : e.is_dual ? 2 : 0; }

struct KernelResources {
  std::vector<Binding> bindings;                            // index == binding number
  std::map<int, uint32_t> field_binding;                    // field id -> binding
  std::map<std::pair<int, int>, uint32_t> ndarray_binding;  // (arg, ndarray_array) -> binding
  std::optional<uint32_t> temps, heap, flags, activity;
  SparseLayout sparse;  // empty for a kernel without sparse spaces

  std::vector<PushConstant> push_constants;
  uint32_t push_constant_bytes = 0;
  std::map<int, uint32_t> arg_member;                                   // scalar arg -> member
  std::map<std::pair<int, int>, uint32_t> field_extent_member;          // (field, axis) -> member
  std::map<std::pair<int, int>, uint32_t> ndarray_extent_member;        // (arg, axis) -> member
  std::map<std::pair<std::string, int>, uint32_t> space_extent_member;  // (space, axis) -> member
};

// The index space a struct for (or an offloaded struct_for task) walks: its space or SNode name.
const std::string& iterated_space(const ir::Stmt& loop);
// The shape that loop iterates: its index space's, else the field's of that name. nullopt
// when neither is known; `rank` is then the number of axes the loop's indices use.
std::optional<ir::Shape> struct_for_shape(const ir::Kernel& k, const ir::Stmt& loop);
int struct_for_rank(const ir::Kernel& k, const ir::Stmt& loop);

KernelResources assign_resources(const ir::Kernel& k, const KernelPlan& plan, const LoweringOptions& o);

}  // namespace pb::codegen::spirv::detail
