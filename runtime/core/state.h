// Host memory a kernel runs against: field buffers, kernel arguments and index-space shapes,
// read from and written back to the inputs JSON format:
//   {"fields": {"x": {"shape": [4], "data": [...], "grad": [...], "dual": [...]}},
//    "args": [3, 0.5, [1, 2], {"shape": [4], "data": [...], "grad": [...], "dual": [...]}],
//    "spaces": {"S1dense": [16]}, "active": {"S1pointer": [0, 1, 0, 1]}, "length": {"S2dynamic": [3, 0]}}
// An argument is a number, a tensor passed by value (an array, flat or nested), or an ndarray
// object. Data may be flat (row-major) or nested; non-finite floats are the strings "nan", "inf", "-inf".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/value.h"

namespace pb::runtime {

// A dense row-major array. Every element has kind `dtype`.
// The most memory the interpreter gives one run's buffers together. A shape past it (or whose
// element count overflows) is a UserError naming the buffer and the bytes it needs.
inline constexpr int64_t kMaxStateBytes = int64_t{8} << 30;

struct Buffer {
  ir::ScalarKind dtype = ir::ScalarKind::unknown;
  ir::Shape shape;
  std::vector<ir::Value> data;

  // `what` names the buffer in the error a shape that cannot be allocated gives.
  static Buffer zeros(ir::ScalarKind dtype, ir::Shape shape, const std::string& what = "a buffer");
  size_t size() const { return data.size(); }
};

// One kernel argument: a scalar, a tensor passed by value, or an ndarray with an optional
// gradient array.
struct ArgValue {
  bool is_ndarray = false;
  bool is_tensor = false;      // a tensor passed by value: its elements in `array`, shaped as the tensor
  ir::Value scalar;            // scalars only
  Buffer array;                // ndarrays and tensors
  std::optional<Buffer> grad;  // ndarrays only; read by `external_ptr ... is_grad=true`
  std::optional<Buffer> dual;  // ndarrays only; read by `external_ptr ... is_dual=true`
};

struct State {
  std::map<std::string, Buffer> fields;     // keyed by field name; grad/dual fields under their own names
  std::vector<ArgValue> args;               // indexed by argument index
  std::map<std::string, ir::Shape> spaces;  // index-space shapes given by the inputs
  // Declared sparse spaces (runtime/core/sparse.h): pointer and bitmasked ones 0/1 per cell
  // (row-major over the space's shape); dynamic ones the length under each parent cell.
  std::map<std::string, std::vector<int64_t>> activity;
};

// Builds the state for `k` from `inputs` (null or {} means all defaults). Every field whose shape
// is known (header, or inputs) gets a buffer, zero unless given; companions (grad/dual) follow
// their primal's shape. Throws UserError naming the field/arg/space and the remedy.
State make_state(const ir::Kernel& k, const nlohmann::json& inputs);

// Gives `s` the scalar arguments that stand for elements of its tensor arguments
// (ir::ArgDecl::element_of, made by scalarize), from those tensors. Throws UserError when a
// tensor is not given or is too small.
void bind_element_args(const ir::Kernel& k, State& s);

// Makes every f32 and f16 buffer (fields, ndarrays and their companions, tensor arguments) f64, exactly: what a
// kernel widened by ir::widen_f32_to_f64 runs on, so perturbed values keep double precision.
void widen_floats(State& s);

// Every primal field with its companions' data under "grad"/"dual", and every ndarray argument
// under "ndarrays" ("arg<N>"; omitted when there are none). Floats as doubles (f32 converts
// exactly), ints as ints, u1 as 0/1.
nlohmann::json state_to_json(const ir::Kernel& k, const State& s);

// The shape of index space `space` (a struct for's domain): a declared `dense` space; else the
// field of that name; else a field declared `in` it; else the inputs' "spaces". Throws UserError.
ir::Shape space_shape(const ir::Kernel& k, const State& s, const std::string& space);

// The dimensions of a tensor cell (empty for tensor 0, a scalar): a field or ndarray of tensors is
// stored with them after its own.
ir::Shape cell_dims(uint32_t tensor);

// Number of elements of a shape (1 for a 0-d shape).
int64_t num_elements(const ir::Shape& shape);

}  // namespace pb::runtime
