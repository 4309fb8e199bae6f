#include "ir/tensor_type.h"

#include <algorithm>

#include "ir/assert.h"
#include "ir/type_tables.h"

namespace pb::ir {
std::optional<uint32_t> intern_tensor_shape(std::span<const int> dims) {
  if (dims.empty()) return std::nullopt;
  int64_t n = 1;
  for (int d : dims) {
    if (d < 1) return std::nullopt;
    n *= d;
    if (n > kMaxTensorElements) return std::nullopt;
  }
  TypeTables& t = type_tables();
  std::lock_guard lock(t.mutex);
  for (size_t i = 0; i < t.shapes.size(); ++i)
    if (std::equal(t.shapes[i].begin(), t.shapes[i].end(), dims.begin(), dims.end()))
      return static_cast<uint32_t>(i + 1);
  if (t.shapes.size() >= kMaxTypeIds) return std::nullopt;
  t.shapes.emplace_back(dims.begin(), dims.end());
  return static_cast<uint32_t>(t.shapes.size());
}

const std::vector<int>& tensor_shape(uint32_t id) {
  TypeTables& t = type_tables();
  std::lock_guard lock(t.mutex);
  PB_ASSERT(id >= 1 && id <= t.shapes.size(), "tensor_shape: an id intern_tensor_shape did not return");
  return t.shapes[id - 1];
}

int64_t tensor_elements(DataType t) {
  if (t.tensor == 0) return 1;
  int64_t n = 1;
  for (int d : tensor_shape(t.tensor)) n *= d;
  return n;
}

std::optional<int64_t> element_index(DataType t, std::span<const int> index) {
  if (t.tensor == 0 || index.empty()) return std::nullopt;
  const std::vector<int>& dims = tensor_shape(t.tensor);
  if (index.size() == 1 && dims.size() != 1) {
    if (index[0] < 0 || index[0] >= tensor_elements(t)) return std::nullopt;
    return index[0];
  }
  if (index.size() != dims.size()) return std::nullopt;
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (index[d] < 0 || index[d] >= dims[d]) return std::nullopt;
    flat = flat * dims[d] + index[d];
  }
  return flat;
}

std::string tensor_shape_text(uint32_t id) {
  std::string s = "(";
  for (int d : tensor_shape(id)) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + ")";
}

}  // namespace pb::ir
