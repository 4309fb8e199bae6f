// Target: the inputs JSON (fields, args, spaces) against a fixed kernel that declares every kind of
// buffer: a 1-d field with its gradient, a 0-d field, a 2-d f64 field, a field inferred from use
// (shape only from the inputs), an index space the inputs size, an i32 argument, a 1-d ndarray
// argument and an f64 argument. make_state, a short run and state_to_json must end normally
// or with a user error. Shapes the interpreter would accept but that exceed the fuzzer's memory
// limit are skipped; shapes past the interpreter's own limit still reach it (it must refuse them).
#include <nlohmann/json.hpp>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "runtime/core/state.h"
#include "runtime/interp/interpreter.h"
#include "tests/fuzz/fuzz_support.h"

using namespace pb;

namespace {

constexpr const char* kKernel = R"(field x : f32[4] grad x_grad
field s : f32[]
field m : f64[2, 3]
dense S : [4]
field c : i32[4] in S
arg 0 : i32
arg 1 : ndarray<f32, 1>
arg 2 : f64
kernel {
  <i32> $0 = const 0
  <i32> $1 = argload[0]
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = argload[1]
    <*f32> $7 = external_ptr $6, [$3] layout=AOS is_grad=false
    <f32> $8 = global load $7
    <*f32> $9 = global ptr [u], index [$3] activate=true
    <f32> $10 = global load $9
    <f32> $11 = add $5 $8
    <f32> $12 = add $11 $10
    <*f32> $13 = global ptr [s], index [] activate=true
    <f32> $14 = atomic add($13, $12)
  }
  $15 : struct for in S block_dim=adaptive {
    <i32> $16 = loop $15 index 0
    <*i32> $17 = global ptr [c], index [$16] activate=true
    <i32> $18 = global load $17
    <f64> $19 = argload[2]
    <*f64> $20 = global ptr [m], index [$0, $16] activate=true
    <f64> $21 = global load $20
    <f64> $22 = mul $21 $19
  }
}
)";

const ir::Kernel& kernel() {
  static std::unique_ptr<ir::Kernel> k = ir::parse_kernel(kKernel, "inputs_fuzz.cpp");
  return *k;
}

// The largest element count any "shape" array or "spaces" entry in `j` asks for (saturating).
int64_t largest_shape(const nlohmann::json& j) {
  int64_t largest = 0;
  std::vector<const nlohmann::json*> todo = {&j};
  auto product = [](const nlohmann::json& shape) {
    int64_t n = 1;
    for (const auto& e : shape) {
      if (!e.is_number_integer()) return int64_t{0};
      int64_t d = e.get<int64_t>();
      if (d < 0) return int64_t{0};
      if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
    }
    return n;
  };
  while (!todo.empty()) {
    const nlohmann::json* node = todo.back();
    todo.pop_back();
    if (node->is_object()) {
      for (auto it = node->begin(); it != node->end(); ++it) {
        if (it.value().is_array() && (it.key() == "shape" || node == j.find("spaces").operator->()))
          largest = std::max(largest, product(it.value()));
        todo.push_back(&it.value());
      }
    } else if (node->is_array()) {
      for (const auto& e : *node) todo.push_back(&e);
    }
  }
  return largest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  nlohmann::json inputs = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (inputs.is_discarded()) {
    fuzz::count("not JSON");
    return 0;
  }
  int64_t elements = largest_shape(inputs);
  bool interpreter_refuses = elements > runtime::kMaxStateBytes / int64_t(sizeof(ir::Value));
  if (elements > fuzz::kMaxFuzzElements && !interpreter_refuses) {
    fuzz::count("skipped: a shape over the fuzz memory cap");
    return 0;
  }
  runtime::State state;
  try {
    state = runtime::make_state(kernel(), inputs);
  } catch (const UserError&) {
    fuzz::count("inputs rejected (user error)");
    return 0;
  }
  fuzz::count("inputs accepted");
  runtime::RunOptions options;
  options.max_steps = 20'000;
  try {
    runtime::run_kernel(kernel(), state, options);
    fuzz::count("ran to the end");
  } catch (const UserError&) {
    fuzz::count("run-time error (user error)");
  }
  (void)runtime::state_to_json(kernel(), state).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
