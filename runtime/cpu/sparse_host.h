// Internal to runtime/cpu: the sparse-SNode host of one launch (codegen/llvm/emit.h, kSparse*).
//
// Contract: it keeps the activity of the kernel's sparse spaces by the interpreter's rules
// (runtime/core/sparse.h, the same code), in DeviceMemory::activity, over the launch's packed
// field buffers: deactivating a cell zeroes their elements there, and append writes there. The
// task functions call it under one lock, so parallel iterations may activate cells concurrently.
// A problem a callback meets (an SNode op with no meaning, a full dynamic cell, a chain through a
// cell outside its space) is kept, the call returns a harmless value (not live, 0), and the launch
// fails with the first one after the task.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "runtime/core/sparse.h"
#include "runtime/cpu/cpu.h"
#include "runtime/cpu/jit.h"

namespace pb::runtime::cpu::detail {

class SparseHost {
 public:
  // Binds the cells to `m` (checks the declarations as the interpreter does: throws UserError).
  SparseHost(const CpuKernel& ck, DeviceMemory& m);
  // The live cells of `space` now, row-major over its full shape.
  std::vector<int64_t> cells(const std::string& space);
  // Throws the first problem a callback kept during the task, naming it.
  void throw_if_failed(const std::string& task) const;

  // The callbacks' work (sparse_host.cpp), each under the lock.
  bool reach(int32_t field, int64_t element, bool activate);
  int64_t lookup(int32_t site, int64_t parent, int64_t index);
  void snode_op(int32_t site, uint64_t* words);
  int64_t* cell_list(int32_t site, int64_t* count);

 private:
  void keep(const std::string& message, const std::string& remedy);
  std::string at(const ir::Stmt& s) const;  // "at `STMT` in kernel ..."

  const CpuKernel& ck_;
  runtime::detail::SparseCells cells_;
  std::vector<int> site_space_;  // by sparse site: the space's index in cells_, or -1
  std::mutex mu_;
  std::optional<Diagnostic> problem_;
};

// Adds the sparse callbacks' addresses to `callbacks`.
void add_sparse_callbacks(HostCallbacks& callbacks);

}  // namespace pb::runtime::cpu::detail
