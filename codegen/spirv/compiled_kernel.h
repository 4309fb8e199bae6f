// What compile() returns: one SPIR-V module per task plus everything a host needs to launch
// them (bindings, push constants, dispatch ranges, heap layout, flag words). Plain data.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codegen/spirv/options.h"
#include "ir/type.h"

namespace pb::codegen::spirv {

// Every buffer is a std430 StorageBuffer in descriptor set 0 holding one runtime array.
enum class BindingKind : uint8_t {
  field,         // a field's elements, row-major
  grad_field,    // a gradient (or dual) field's elements
  ndarray,       // an ndarray argument
  ndarray_grad,  // the gradient array of an ndarray argument
  ndarray_dual,  // the dual (tangent) array of an ndarray argument (forward mode)
  temps,         // uint words: root-level values and locals shared between tasks
  heap,          // adstack entries: one slice of heap_stride_words words per invocation
  flags,         // uint words, host visible: see FlagWord
  activity,      // uint words: the sparse spaces' activity, then struct fors' cell lists (SparseRange)
};
std::string_view binding_kind_name(BindingKind k);

struct Binding {
  uint32_t set = 0;
  uint32_t binding = 0;
  BindingKind kind = BindingKind::field;
  std::string name;                                  // field name, "arg 1", "temps", "heap", "flags"
  ir::ScalarKind element = ir::ScalarKind::unknown;  // the IR element type (u1 is stored as u32)
  std::string storage_type;                          // the SPIR-V element type: float, int, uint, double, ...
  int field = -1;                                    // field id (field, grad_field)
  int arg = -1;                                      // argument index (ndarray, ndarray_grad, ndarray_dual)
  std::optional<uint64_t> elements;                  // when known at compile time
  // A field under a sparse space: the buffer holds one more element past the field's, where an
  // access through a cell that is not live goes (its reads give 0; what lands there is dropped).
  bool ambient = false;
};

// Words of the flags buffer. The host zeroes them before a launch and reads them after.
enum FlagWord : uint32_t {
  kFlagStackOverflow = 0,  // max over overflowing pushes of (stack id + 1); 0: none
  kFlagAssert = 1,         // max over failed asserts of their code (AssertInfo::code); 0: none
  kFlagStepBudget = 2,     // max over `while` loops that ran past while_budget of their statement id + 1
  kFlagLoopCut = 3,        // max over serial loops the driver left before their end of their id + 1
  kFlagProblem = 4,        // the first sparse-SNode problem met (ProblemInfo::code); 0: none
  kNumFlagWords = 5,
};

// One member of the push-constant block (std430 offsets).
struct PushConstant {
  enum class Kind : uint8_t { arg, field_extent, ndarray_extent, space_extent };
  Kind kind = Kind::arg;
  std::string name;  // "arg0", "extent_x_1", ...
  uint32_t offset = 0;
  ir::ScalarKind type = ir::ScalarKind::i32;  // as stored (u1 arguments are stored as u32)
  int index = -1;                             // arg index or field id
  std::string space;                          // space_extent: the index space's name
  int axis = -1;                              // extents
};

// A range bound as the host sees it: a constant, or computed in the task from `source` (IR text).
struct RangeBound {
  std::optional<int64_t> constant;
  std::string source;
};

struct StackLayout {
  int stack_id = 0;  // kernel-wide, pre-order; an overflow flag holds stack_id + 1
  int stmt_id = 0;   // the stack alloc's $N
  ir::ScalarKind element = ir::ScalarKind::f32;
  int64_t capacity = 0;      // entries compiled in
  std::string size_expr;     // the size expression when the stack has one (the host checks it <= capacity)
  uint32_t heap_offset = 0;  // heap storage: first word of the stack within an invocation's slice
  uint32_t heap_words = 0;   // heap storage: 2 * capacity ((primal, adjoint) pairs; 4 * for 64-bit values)
};

enum class TaskKind : uint8_t { serial, range_for, struct_for };
std::string_view task_kind_name(TaskKind k);

struct TaskInfo {
  std::string name;  // also the entry point's name
  TaskKind kind = TaskKind::serial;
  int loop_stmt_id = -1;                            // range/struct for: the loop's $N
  RangeBound begin, end;                            // range_for
  std::string space;                                // struct_for: the index space (or field) iterated
  std::vector<std::optional<int64_t>> space_shape;  // struct_for: extents (nullopt: push constant)
  uint32_t workgroup_size = 1;
  // Invocations to launch: the iteration count when it is known at compile time (serial: 1).
  // Otherwise any count works (the task loops over its range with a grid stride); size the heap
  // for the count actually launched.
  std::optional<uint64_t> invocations;
  std::vector<uint32_t> bindings;  // binding numbers this module declares
  uint32_t heap_stride_words =
      0;  // heap storage: words per invocation (the stacks' heap_words, 64-bit ones 16-byte aligned)
  std::vector<StackLayout> stacks;
  // The module only loads and stores device memory: no atomic instruction, no adstack. A GPU
  // streams such a task fastest with fewer, longer-lived invocations (runtime/vulkan/runtime.h).
  bool streaming = false;
  uint32_t unroll = 1;  // iterations per grid-stride step (LoweringOptions::unroll, where the loop qualifies)
  // Consecutive iterations per step of one invocation: kVectorLanes with vector steps
  // (LoweringOptions::vector), else 1. A launch needs count / vector invocations.
  uint32_t vector = 1;
  std::vector<uint32_t> spirv;  // the module
};

struct AssertInfo {
  uint32_t code = 0;  // 1-based, written to the assert flag word
  int stmt_id = 0;
  std::string message;  // printf-style text; the arguments are not captured
};

// A run-time problem of a sparse-SNode statement that the interpreter reports as an error (an
// index outside the space, a full dynamic cell, an op with no meaning there).
struct ProblemInfo {
  uint32_t code = 0;  // 1-based, written to the problem flag word
  int stmt_id = 0;
  std::string message;  // names the statement; the run's values are not captured
  std::string remedy;
};

// Words of the activity binding: one space's activity (pointer, bitmasked, hash: 0/1 per cell,
// row-major over the full shape; dynamic: the length under each parent cell), uploaded from the
// state's and written back after the launch.
struct SparseRange {
  std::string space;
  uint32_t word = 0;
  uint32_t words = 0;
};

struct CompiledKernel {
  std::string kernel_name;
  LoweringOptions options;
  std::vector<TaskInfo> tasks;  // in launch order
  std::vector<Binding> bindings;
  std::vector<PushConstant> push_constants;
  uint32_t push_constant_bytes = 0;
  uint32_t temps_words = 0;
  // Kernel return values: after a launch, temps word `return_word` is 1 when a `return` ran, and
  // the values of the last one follow in two-word slots from return_word + 2 (a 32-bit value in
  // its slot's first word), stored as fields store their element types. `returns`: the IR types
  // of the returned values (empty: the kernel returns nothing).
  std::vector<ir::ScalarKind> returns;
  uint32_t return_word = 0;
  std::vector<AssertInfo> asserts;
  std::vector<ProblemInfo> problems;
  std::vector<SparseRange> activity;  // the declared sparse spaces (empty: a dense kernel)
  std::vector<std::string> notes;     // what was dropped or approximated, one line each
};

// The metadata as JSON (modules as word counts, not words).
nlohmann::json to_json(const CompiledKernel& k);

}  // namespace pb::codegen::spirv
