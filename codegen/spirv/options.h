// Lowering options of the SPIR-V backend. The four adstack choices are independent; the
// defaults are heap, shared-array, select, bounds check on. docs/codegen-spirv.md shows the
// code each choice produces.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pb::codegen::spirv {

// Where adstack entries live: Function-scope arrays per invocation, or one StorageBuffer per
// dispatch sliced per invocation (invocation_id * stride + offset).
enum class StackStorage : uint8_t { function, heap };
// Where stack counts live: one Function u32 per stack, or one Function uint[num_stacks].
enum class StackCount : uint8_t { per_stack, shared_array };
// How a push guards its store: a structured if, or a clamped index and an unconditional store.
enum class StackPush : uint8_t { branch, select };
// What `print` becomes: dropped (listed in the compiled kernel's notes), or a user error.
enum class PrintLowering : uint8_t { drop, error };

inline constexpr uint32_t kRunUnroll = 4;  // measured on an H200: docs/performance.md
// Iterations of a vector step: one 4-vector load or store per buffer (emit_vector.cpp).
inline constexpr uint32_t kVectorLanes = 4;
// Whether an unrolled loop may take vector steps.
enum class VectorSteps : uint8_t { caller_default, on, off };

struct LoweringOptions {
  StackStorage storage = StackStorage::heap;
  StackCount count = StackCount::shared_array;
  StackPush push = StackPush::select;
  bool bounds_check = true;  // record push overflow in the flags buffer as stack id + 1

  bool float64 = false;           // Float64 capability: f64 values allowed
  bool int64 = false;             // Int64 (and Int64Atomics) capability: i64/u64 values allowed
  bool atomic_float_add = false;  // SPV_EXT_shader_atomic_float_add for f32 atomic add/sub
  // SignedZeroInfNanPreserve (SPV_KHR_float_controls) for 32-bit floats (f16 and f32 values), and
  // for 64-bit ones with float64: without it a driver may fold x / x to 1, x * 0 to 0 and
  // inf - inf to 0, where the interpreter keeps NaN and infinities. Set by the runtime where the
  // device supports it (shaderSignedZeroInfNanPreserveFloat32 / Float64).
  bool preserve_inf_nan = false;
  bool preserve_inf_nan_f64 = false;
  PrintLowering print = PrintLowering::drop;

  // Capacity compiled in for a stack whose size is a size expression (max_size=0, size=...): the
  // host must check that the expression evaluates to at most this (metadata lists both).
  int64_t symbolic_stack_capacity = 64;
  std::map<int, int64_t> stack_capacity_by_stmt;  // per stack alloc statement id, overrides the above

  // Iterations of `while` loops one invocation may run before the loop is left with the step
  // budget flag (kFlagStepBudget) set; 0: unchecked. Set by the runtime from --max-steps.
  uint32_t while_budget = 0;
  // Check at each serial loop's exit that the loop ran to its end (kFlagLoopCut): lavapipe leaves
  // every loop after 65,535 iterations without a word. Set by the runtime.
  bool check_loop_exits = false;
  // Check at run time each field and ndarray index against its axis, and each pop or top access of
  // an adstack against an empty stack; the first failure is the flags buffer's problem word
  // (kFlagProblem). Set by the runtime; off when compiling for inspection.
  bool run_time_checks = false;

  // Local size x of parallel tasks whose loop has block_dim=adaptive. 256 measured best on an
  // H200 for streaming and atomic kernels alike (docs/performance.md).
  uint32_t workgroup_size = 256;
  // Iterations one step of a streaming range for's grid-stride loop runs, their loads before their
  // stores (codegen/spirv/emit_unroll.cpp says which loops qualify); 1: no unrolling. 0: the
  // caller's default: none when compiling for inspection (stable ID and size metrics),
  // kRunUnroll when the Vulkan runtime compiles a kernel to run it.
  uint32_t unroll = 0;
  // Vector steps: an unrolled loop whose body reaches 32-bit buffers at its own index runs
  // kVectorLanes consecutive iterations per step, each such buffer as one 4-vector load or store
  // (codegen/spirv/emit_vector.cpp). caller_default: off when compiling for inspection, as the
  // Vulkan runtime decides when it runs a kernel (runtime/vulkan/run.cpp).
  VectorSteps vector = VectorSteps::caller_default;
  bool validate = true;  // run spirv-val on every module (a failure is an InternalError)
};

// "storage=heap,count=shared-array,push=select,bounds=on": the four adstack choices.
std::string lowering_name(const LoweringOptions& o);
// Applies "key=value" pairs separated by ',' (keys: storage count push bounds float64 int64
// atomic-float-add inf-nan print capacity workgroup) to `base`. Throws UserError naming the bad pair.
LoweringOptions parse_lowering(std::string_view text, LoweringOptions base = {});
// The 16 combinations of storage x count x push x bounds, other fields from `base`.
std::vector<LoweringOptions> all_stack_lowerings(const LoweringOptions& base = {});

}  // namespace pb::codegen::spirv
