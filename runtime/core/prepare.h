// What a backend does to a kernel before it runs it: the compiled backends (and the dynamic
// global-access check) take scalar kernels, so a kernel with tensor-typed statements runs
// scalarized, as the reference's code generators run it. The state is the same either way: a
// tensor cell's elements are its field's last dimensions.
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime {

// A scalarized clone of `k` when it has tensor-typed statements, else null (run `k` itself).
// Throws UserError, prefixed with `who` ("cpu runs the kernel scalarized: ..."), when scalarize
// refuses the kernel.
std::unique_ptr<ir::Kernel> scalarized_if_tensor(const ir::Kernel& k, std::string_view who);

// While it lives, `state` also holds the element arguments that `k` reads in place of its
// caller's tensor arguments (bind_element_args); the state's own arguments come back after.
class ElementArgsBound {
 public:
  ElementArgsBound(const ir::Kernel& k, State& state);
  ~ElementArgsBound();
  ElementArgsBound(const ElementArgsBound&) = delete;
  ElementArgsBound& operator=(const ElementArgsBound&) = delete;

 private:
  void restore() noexcept;
  State& state_;
  size_t original_size_;
  std::vector<std::pair<int, ArgValue>> saved_;  // entries the element arguments took over
};

}  // namespace pb::runtime
