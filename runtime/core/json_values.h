// Internal to runtime/interp: conversions between JSON and values/buffers, shared by
// make_state (state.cpp) and state_to_json (state_json.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "runtime/core/state.h"

namespace pb::runtime::detail {

// Converts one JSON scalar to kind `k`: numbers (integral values only for integer kinds, in
// range), true/false for u1, "nan"/"inf"/"-inf" for floats. `what` names it in errors.
ir::Value value_from_json(const nlohmann::json& j, ir::ScalarKind k, const std::string& what);
// Floats as doubles (non-finite as "nan"/"inf"/"-inf"), ints as ints, u1 as 0/1.
nlohmann::json value_to_json(const ir::Value& v);

// The shape of nested JSON data: [] for a scalar, [n] for a flat array, [n, m] for an array of
// n arrays of m, ... Throws UserError when the nesting is ragged.
ir::Shape nested_shape(const nlohmann::json& data, const std::string& what);

// Reads `data` (flat row-major, or nested matching `shape`) into a buffer of `shape`.
Buffer read_buffer(const nlohmann::json& data, ir::ScalarKind k, const ir::Shape& shape, const std::string& what);

// Reads a JSON list of positive extents.
ir::Shape read_shape(const nlohmann::json& j, const std::string& what);

}  // namespace pb::runtime::detail
