// Internal to codegen/spirv: where a kernel's sparse SNodes keep their state on the device
// (docs/backends.md, "Sparse SNodes").
//
// Contract: one `activity` binding of uint words holds, per declared sparse space, its activity
// as the interpreter keeps it (runtime/core/sparse.h): 0/1 per cell for pointer, bitmasked and
// hash spaces, the length under each parent cell for dynamic ones. After them, each space a
// struct for walks that is sparse or nested under a sparse one has a cell list: one word per cell
// of its full shape, 1 when the cell was live as the loop's task started. A listing task before
// each such struct-for task writes it, which gives the interpreter's "listed when the loop
// starts" semantics to a loop whose iterations activate or deactivate cells. Every cell number
// is a u32; spaces past that are refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/spirv/compiled_kernel.h"
#include "ir/kernel.h"

namespace pb::codegen::spirv::detail {

struct SparseSpace {
  std::string name;  // empty: not a declared space with a shape (found by no name)
  ir::SNodeKind kind = ir::SNodeKind::dense;
  ir::Shape full, own, parent_full;  // parent_full padded to full's rank; empty without a parent
  int parent = -1;
  bool under_sparse = false;        // it or a space above it is sparse
  uint32_t word = 0, words = 0;     // its activity (sparse kinds)
  int64_t list_word = -1;           // its cell list, when a struct for walks it
  std::vector<ir::FieldId> fields;  // declared in it (companions too)
  bool sparse() const { return kind != ir::SNodeKind::dense; }
};

struct SparseLayout {
  std::vector<SparseSpace> spaces;  // in the kernel's space order
  uint32_t words = 0;               // of the activity binding; 0: the kernel has no sparse space
  // The declared space named `name`, or -1.
  int find(const std::string& name) const;
  // The space a field under a sparse space lives in, or -1.
  int field_space(const ir::Kernel& k, ir::FieldId f) const;
  bool empty() const { return words == 0; }
};

// Throws UserError for a layout the backend cannot hold (more cells than a u32 numbers, a field
// of tensors or of another shape than its sparse space's).
SparseLayout plan_sparse(const ir::Kernel& k);

// The activity ranges the host uploads and reads back (CompiledKernel::activity).
std::vector<SparseRange> activity_ranges(const SparseLayout& l);

}  // namespace pb::codegen::spirv::detail
