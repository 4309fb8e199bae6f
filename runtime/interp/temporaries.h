// Internal to runtime/interp: the global temporaries of an offloaded kernel, one zero-initialised
// buffer per run addressed by byte offset (docs/interpreter.md). A temporary holds a scalar or a
// tensor (its elements consecutive, each as wide as its element type); the bytes of one are never
// read as another, which the accessors refuse by returning nullptr.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "ir/value.h"

namespace pb::runtime::detail {

class Temporaries {
 public:
  // The scalar at `offset`, zero until written; nullptr inside a tensor temporary. Node-based:
  // pointers stay valid for the run.
  ir::Value* scalar(int64_t offset, ir::ScalarKind kind) {
    if (tensor_covering(offset, 1)) return nullptr;
    return &scalars_.try_emplace(offset, ir::Value::zero(kind)).first->second;
  }
  // The `lanes` consecutive elements (each `width` bytes) of the tensor at `offset`; nullptr when
  // its bytes hold scalars or another tensor, or a tensor of another shape starts there.
  ir::Value* tensor(int64_t offset, uint32_t lanes, ir::ScalarKind kind, int64_t width) {
    auto it = tensors_.find(offset);
    if (it == tensors_.end()) {
      int64_t bytes = static_cast<int64_t>(lanes) * width;
      auto s = scalars_.lower_bound(offset);
      if ((s != scalars_.end() && s->first < offset + bytes) || tensor_covering(offset, bytes)) return nullptr;
      it = tensors_.emplace(offset, Tensor{std::vector<ir::Value>(lanes, ir::Value::zero(kind)), width}).first;
    }
    if (it->second.values.size() != lanes || it->second.width != width) return nullptr;
    return it->second.values.data();
  }

 private:
  struct Tensor {
    std::vector<ir::Value> values;
    int64_t width = 0;
  };
  // Whether a tensor temporary holds any of the `bytes` bytes from `offset`.
  bool tensor_covering(int64_t offset, int64_t bytes) const {
    auto it = tensors_.lower_bound(offset);
    if (it != tensors_.end() && it->first < offset + bytes) return true;
    if (it == tensors_.begin()) return false;
    --it;
    return offset < it->first + static_cast<int64_t>(it->second.values.size()) * it->second.width;
  }
  std::map<int64_t, ir::Value> scalars_;
  std::map<int64_t, Tensor> tensors_;
};

}  // namespace pb::runtime::detail
