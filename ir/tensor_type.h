// Tensor types: the reference's `[Tensor (2, 3) f32]`, a value of fixed shape held element by
// element (row-major). A DataType names its shape by an id interned once per process
// (DataType::tensor); the element kind is DataType::scalar.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/type.h"

namespace pb::ir {

inline constexpr int64_t kMaxTensorElements = 1 << 16;  // per tensor value

// The id (>= 1) of `dims`, interned on first use; nullopt for an empty shape, an extent below 1,
// more than kMaxTensorElements elements, or a full table.
std::optional<uint32_t> intern_tensor_shape(std::span<const int> dims);
// The shape an id names. Pre: id was returned by intern_tensor_shape.
const std::vector<int>& tensor_shape(uint32_t id);
// Elements of a tensor type (1 for a type that is not a tensor).
int64_t tensor_elements(DataType t);
// The row-major element a get_element index names: one index per dimension, or one row-major
// index; nullopt when it is outside the tensor (or `t` is not one).
std::optional<int64_t> element_index(DataType t, std::span<const int> index);
// "(2, 3)".
std::string tensor_shape_text(uint32_t id);

}  // namespace pb::ir
