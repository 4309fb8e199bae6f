// The LLVM backend's entry point: passbench IR in, one LLVM module out with one function per task
// of the kernel, plus the metadata a host needs to launch them (plain data, no LLVM types here).
//
// Tasks: each top-level range for / struct for (and each offloaded range_for / struct_for) is a
// parallel task; each maximal run of other root statements (and each offloaded serial task) is a
// serial task. A task function is `void NAME(ptr ctx, i64 begin, i64 end, ptr heap_slice)` and runs
// the iterations [begin, end) of its linear range (serial tasks: [0, 1)); a parallel task also has
// `i64 NAME_count(ptr ctx)`, its iteration count at launch. `ctx` is a TaskContext (below).
// Values crossing tasks are recomputed at the task's entry when pure, else stored to ctx.temps.
//
// Run-time problems never write out of bounds: they set a flag word and the host reports them
// after the launch (see FlagWord). Loop iterations count against a step budget (kCtxSteps): a
// call counts its own range, each nested counted loop adds its trip count at entry and each
// `while` iteration adds one; past the budget the loop is left (a counted loop is skipped) with
// kFlagStepBudget set, so an endless loop ends. Each call adds its count to kCtxSteps[1]. Shapes are compiled in
// (EmitShapes), so a launch must use buffers of those shapes.
//
// Errors: a construct that cannot be lowered is a UserError naming the statement; an LLVM module
// that fails LLVM's verifier is an InternalError.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace pb::codegen::llvmgen {

// What a task function reads through its `ctx` argument: an array of 8-byte words.
enum ContextWord : int {
  kCtxFields = 0,         // void*[field id]: field buffers (u1 stored as one byte)
  kCtxNdarrays = 1,       // void*[arg index]
  kCtxNdarrayGrads = 2,   // void*[arg index]
  kCtxArgs = 3,           // uint64_t[arg index]: scalar arguments, stored in their IR type at the word
  kCtxTemps = 4,          // uint64_t[]: values and locals shared between tasks (KernelInfo::temps_words)
  kCtxGlobalTmps = 5,     // bytes: the offloaded stage's global temporaries
  kCtxStackOffsets = 6,   // int64_t[stack id]: byte offset of the stack in a heap slice
  kCtxStackCaps = 7,      // int64_t[stack id]: the stack's capacity (entries)
  kCtxFlags = 8,          // int32_t[kNumFlags]
  kCtxReturned = 9,       // uint64_t[]: values of the last `return`
  kCtxHost = 10,          // opaque, passed to host callbacks (print)
  kCtxNdarrayDuals = 11,  // void*[arg index]: tangent arrays (`external_ptr ... is_dual=true`)
  kCtxSteps = 12,         // uint64_t[2]: the task's loop-iteration budget, and the iterations its calls ran
  kCtxStackDeepest = 13,  // int64_t[stack id]: the most entries the stack held (atomic max per call)
  kCtxSparse = 14,        // opaque, passed to the sparse-SNode callbacks (KernelInfo::sparse)
  kCtxTaskCells = 15,     // int64_t[]: a struct-for task over a sparse space: its live cells, listed at launch
  kNumContextWords = 16,
};

// Flag words: zero before a launch; non-zero afterwards names what went wrong.
enum FlagWord : int {
  kFlagStackOverflow = 0,   // stack id + 1 of an overflowing push
  kFlagStackUnderflow = 1,  // stack id + 1 of a pop / load top / acc adj on an empty stack
  kFlagError = 2,           // ErrorSite index + 1 (division by zero, index out of bounds, ...)
  kFlagReturn = 3,          // ReturnSite index + 1 of the last return executed
  kFlagStepBudget = 4,      // KernelInfo::loop_sites index + 1 of a loop that took the steps past the budget
  kNumFlags = 5,
};

// Shapes the module compiles in: every field buffer, ndarray (and its gradient) and index space.
struct EmitShapes {
  std::map<ir::FieldId, ir::Shape> fields;  // fields without a buffer are absent
  std::map<int, ir::Shape> ndarrays;        // by argument index
  std::map<int, ir::Shape> ndarray_grads;
  std::map<int, ir::Shape> ndarray_duals;
  std::map<std::string, ir::Shape> spaces;  // struct-for domains and SNode cell counts, by name
  std::map<int, ir::ScalarKind> ndarray_dtypes;
};

struct EmitOptions {
  // The dynamic global-access check (runtime/core/access_check.h): every load, store and atomic
  // of an element of a differentiable field or float ndarray calls kAccessCallback (reads after
  // the load, writes before the store or atomic), and no atomic is folded into a per-chunk sum.
  bool check_global_access = false;
  // Blocks of more statements than this (nested ones counted) are emitted as a sequence of
  // functions of at most about this many statements each (codegen/llvm/emit_part.cpp), which
  // keeps LLVM's compile time linear in the kernel's size; 0 never splits.
  size_t part_statements = kDefaultPartStatements;
  static constexpr size_t kDefaultPartStatements = 500;
};

enum class TaskKind : uint8_t { serial, range_for, struct_for };

struct StackInfo {
  int stack_id = 0;  // kernel-wide, pre-order
  const ir::AdStackAllocaStmt* alloc = nullptr;
  ir::ScalarKind element = ir::ScalarKind::f32;
  int64_t element_bytes = 4;  // as stored (u1: 1)
};

struct TaskInfo {
  std::string name;  // the function's name
  TaskKind kind = TaskKind::serial;
  const ir::Stmt* loop = nullptr;  // parallel tasks: the loop or offloaded statement
  // A struct-for task over a space with sparse SNodes in its tree: the host lists the live cells
  // of this space at launch (kCtxTaskCells) and the task runs one iteration per cell; its count
  // function is not called.
  std::string cell_space;
  std::vector<StackInfo> stacks;  // stacks allocated in the task, pre-order
};

struct ErrorSite {
  const ir::Stmt* stmt = nullptr;
  std::string message;
  std::string remedy;
};

struct PrintSite {
  const ir::PrintStmt* stmt = nullptr;
  std::vector<ir::ScalarKind> value_kinds;  // per value item, in order
};

struct AccessSite {
  const ir::Stmt* stmt = nullptr;  // the load, store or atomic
  bool write = false;
};

// A call of the sparse-SNode host: an access-chain lookup, an SNode op, or the cell list of a
// nested struct for.
struct SparseSite {
  const ir::Stmt* stmt = nullptr;                   // SNodeLookup, SNodeOp or StructFor
  std::string snode;                                // the SNode (space) it works on
  bool activate = false;                            // lookups: activate the cell
  std::vector<ir::ScalarKind> operand_kinds;        // SNode ops: how each operand word is stored
  ir::ScalarKind result = ir::ScalarKind::unknown;  // SNode ops with a value
};

struct ReturnSite {
  std::vector<ir::ScalarKind> kinds;
};

struct KernelInfo {
  std::vector<TaskInfo> tasks;    // launch order
  std::vector<StackInfo> stacks;  // by stack id
  std::vector<ErrorSite> errors;
  std::vector<PrintSite> prints;
  std::vector<ReturnSite> returns;
  std::vector<AccessSite> accesses;         // with EmitOptions::check_global_access
  std::vector<const ir::Stmt*> loop_sites;  // nested loops that check the step budget (kFlagStepBudget)
  std::vector<SparseSite> sparse_sites;
  // The kernel has sparse SNodes, SNode ops or nested spaces: the host keeps their cells'
  // activity (kCtxSparse) and the task functions call it (kSparse* below).
  bool sparse = false;
  std::map<int, ir::ScalarKind> scalar_args;  // argument index -> the type its argloads read
  uint32_t temps_words = 0;
  int64_t global_tmp_bytes = 0;
};

// An LLVM module with its context (opaque here; codegen/llvm/module_impl.h has the LLVM types).
struct ModuleHandle;
struct EmittedModule {
  EmittedModule();
  EmittedModule(EmittedModule&&) noexcept;
  EmittedModule& operator=(EmittedModule&&) noexcept;
  ~EmittedModule();
  std::unique_ptr<ModuleHandle> module;
  KernelInfo info;
};

// Emits the module (unoptimized). `kernel` must outlive the result (KernelInfo points into it).
EmittedModule emit(const ir::Kernel& kernel, const EmitShapes& shapes, const EmitOptions& options = {});

// The types emit() takes: every primitive type, no quant type. A kernel using another is refused
// up front, naming the first use.
bool compiles_type(ir::DataType t);
// Runs LLVM's default pipeline at `opt_level` (0..3) on the module, for the host CPU (sets the
// module's target triple and data layout).
void optimize(EmittedModule& m, int opt_level);

// Registers the host target with LLVM, once per process, safe from any thread.
void initialize_native_target();
// The module as LLVM IR text.
std::string module_text(const EmittedModule& m);

// The name of the host callback print statements call: void(ptr host, i32 print site, ptr values).
inline constexpr const char* kPrintCallback = "pb_cpu_print";
// The host callback of the global-access check: void(ptr host, i32 access site, ptr element,
// i64 iteration of the top-level loop, -1 in a serial task).
inline constexpr const char* kAccessCallback = "pb_cpu_access";
// The sparse-SNode host (KernelInfo::sparse); `host` is ctx[kCtxSparse]. A problem (an SNode op
// with no meaning, a full dynamic cell) is kept by the host and fails the launch after the task.
// i32(ptr host, i32 field id, i64 element, i32 activate): whether the element's cells are live
// (activating them first when `activate`).
inline constexpr const char* kSparseReach = "pb_cpu_sparse_reach";
// i64(ptr host, i32 site, i64 parent cell, i64 index): the cell the lookup reaches, -1 when it is
// not live (or the parent is -1).
inline constexpr const char* kSparseLookup = "pb_cpu_sparse_lookup";
// void(ptr host, i32 site, ptr words): runs the op on its operand words; its value into words[0].
inline constexpr const char* kSparseOp = "pb_cpu_snode_op";
// ptr(ptr host, i32 site, ptr count): the live cells of the struct for's space, listed now (i64
// each), and their number into *count; kSparseFreeCells releases the list.
inline constexpr const char* kSparseCells = "pb_cpu_cell_list";
inline constexpr const char* kSparseFreeCells = "pb_cpu_free_cell_list";

}  // namespace pb::codegen::llvmgen
