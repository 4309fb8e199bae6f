// Internal to codegen/spirv: emits the module of one task. One visitor method per statement
// kind (ir::visit makes a missing one a compile error); the methods live by concern in
// task_emitter.cpp (entry, dispatch loop, imports), emit_arith.cpp, emit_memory.cpp,
// emit_control.cpp, emit_adstack.cpp and emit_offloaded.cpp (the offloaded stage).
#pragma once

#include <spirv/unified1/GLSL.std.450.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/spirv/compiled_kernel.h"
#include "codegen/spirv/f64_math.h"
#include "codegen/spirv/module_builder.h"
#include "codegen/spirv/resources.h"
#include "codegen/spirv/task_plan.h"
#include "ir/kernel.h"

namespace pb::codegen::spirv::detail {

// Where a pointer statement points: a variable or buffer element holding `kind` values stored
// as `storage_type` (u1 as uint 0/1; 32-bit values in uint word buffers as their bits).
struct Place {
  Id pointer = 0;
  ir::ScalarKind kind = ir::ScalarKind::unknown;
  Id storage_type = 0;
  spv::StorageClass storage = spv::StorageClassFunction;
  // A sparse field's element: whether its cells are live (0: always). When not, the pointer is
  // the buffer's ambient slot, and loads and atomics give 0 (emit_sparse.cpp).
  Id live = 0;
};

// Per stack of the task: its layout and the variables that hold it.
struct StackSlot {
  const ir::AdStackAllocaStmt* alloc = nullptr;
  StackLayout layout;
  uint32_t heap_array = 0, heap_index = 0;  // heap storage: the slice's member (a capacity) and the stack in it
  Id count_var = 0;                         // per-stack counts: the variable
  Id primal_var = 0, adjoint_var = 0;       // function storage: the arrays
  // Shared-array counts (stack_counts.h): the count group, its element of the count array, and
  // the bias: count = stored count + bias at segment ends.
  uint32_t group = 0;
  int64_t bias = 0;
};

// Heap storage: the stacks of one element type and capacity, a member of an invocation's slice.
struct HeapArray {
  ir::ScalarKind element;
  uint32_t capacity = 0;
  uint32_t stacks = 0;
};

// Shared-array counts: a count group used in the current segment.
struct PendingCount {
  Id start = 0;             // the group's stored count, loaded on first use in the segment
  bool allocated = false;   // a member was allocated in this segment: member counts are constants
  bool dead_after = false;  // the count is not read after this segment: it is not stored
};

// Shared-array counts: what one segment (the statements between two segment boundaries,
// stack_counts.h) knows of its stacks. Made at the segment's first stack access and dropped by
// end_segment once it has stored the counts and checked the pushes, so none of it can outlive its
// segment.
struct Segment {
  struct StackUse {
    int64_t offset = 0;                     // count - stored count - bias (the count itself, once allocated)
    std::vector<int64_t> unchecked_pushes;  // select pushes with bounds checks: count - stored count at each
  };
  std::map<size_t, StackUse> stacks;         // by slot index: the stacks used
  std::map<uint32_t, PendingCount> pending;  // by count group
  uint32_t overflow = 0;                     // the signal of pushes known to overflow
};

// Whether a module holds an atomic instruction.
bool has_atomic(const std::vector<uint32_t>& words);

class TaskEmitter {
 public:
  TaskEmitter(const ir::Kernel& k, const KernelPlan& plan, const KernelResources& res, const LoweringOptions& o,
              const Task& task, CompiledKernel& out);
  TaskInfo emit();
  // The listing task of sparse space `space` (sparse_layout.h): its cell list, over every cell.
  TaskInfo emit_listing(int space);

  void operator()(const ir::ConstStmt& s);
  void operator()(const ir::ArgLoadStmt& s);
  void operator()(const ir::ExternalTensorShapeAlongAxisStmt& s);
  void operator()(const ir::AllocaStmt& s);
  void operator()(const ir::LocalLoadStmt& s);
  void operator()(const ir::LocalStoreStmt& s);
  void operator()(const ir::GlobalPtrStmt& s);
  void operator()(const ir::ExternalPtrStmt& s);
  void operator()(const ir::GlobalLoadStmt& s);
  void operator()(const ir::GlobalStoreStmt& s);
  void operator()(const ir::AtomicOpStmt& s);
  void operator()(const ir::UnaryOpStmt& s);
  void operator()(const ir::BinaryOpStmt& s);
  void operator()(const ir::TernaryOpStmt& s);
  void operator()(const ir::IfStmt& s);
  void operator()(const ir::RangeForStmt& s);
  void operator()(const ir::StructForStmt& s);
  void operator()(const ir::LoopIndexStmt& s);
  void operator()(const ir::WhileStmt& s);
  void operator()(const ir::WhileControlStmt& s);
  void operator()(const ir::ContinueStmt& s);
  void operator()(const ir::AdStackAllocaStmt& s);
  void operator()(const ir::AdStackPushStmt& s);
  void operator()(const ir::AdStackPopStmt& s);
  void operator()(const ir::AdStackLoadTopStmt& s);
  void operator()(const ir::AdStackLoadTopAdjStmt& s);
  void operator()(const ir::AdStackAccAdjointStmt& s);
  void operator()(const ir::PrintStmt& s);
  void operator()(const ir::AssertStmt& s);
  // The offloaded stage (emit_offloaded.cpp).
  void operator()(const ir::OffloadedStmt& s);
  void operator()(const ir::GlobalTemporaryStmt& s);
  void operator()(const ir::ThreadLocalPtrStmt& s);
  void operator()(const ir::GetRootStmt& s);
  void operator()(const ir::SNodeLookupStmt& s);
  void operator()(const ir::GetChStmt& s);
  void operator()(const ir::LinearizeStmt& s);
  void operator()(const ir::IntegerOffsetStmt& s);
  void operator()(const ir::BitExtractStmt& s);
  void operator()(const ir::LoopLinearIndexStmt& s);
  void operator()(const ir::ReturnStmt& s);
  // Sparse SNodes (emit_sparse.cpp).
  void operator()(const ir::SNodeOpStmt& s);
  void operator()(const ir::SNodePtrStmt& s);
  // Kinds passbench reads and interprets but compiles nowhere yet.
  template <class T>
    requires(ir::has_no_backend(T::kKind))
  void operator()(const T& s) {
    unsupported(s,
                "`" + std::string(ir::kind_name(T::kKind)) + "` statements are not compiled yet" +
                    (ir::is_mesh(T::kKind) ? " (passbench has no mesh model)" : " (the interpreter runs them)"),
                ir::is_mesh(T::kKind) ? ir::kMeshKernelRemedy
                                      : "run the kernel on the interpreter, or dump it before the pass that adds the "
                                        "statement");
  }

  // ---- used by the emit_*.cpp files ----

  // Types. value_type: u1 is bool. storage_type: u1 is uint. 64-bit kinds need their option,
  // else a UserError naming the statement being emitted.
  Id value_type(ir::ScalarKind k);
  Id storage_type(ir::ScalarKind k);
  Id t_bool() { return b_.type_bool(); }
  Id t_u32() { return b_.type_int(32, false); }
  Id c_u32(uint32_t v) { return b_.const_u32(v); }
  // A constant of kind `k` from raw bits (u1: 0/1).
  Id constant(ir::ScalarKind k, uint64_t bits);
  Id glsl(uint32_t instruction, ir::ScalarKind k, const Operands& args);

  // Conversions with the interpreter's semantics (ir::Value::cast_to).
  Id to_bool(Id v, ir::ScalarKind k);    // v != 0
  Id from_bool(Id b, ir::ScalarKind k);  // 1 or 0 of kind k
  Id convert(Id v, ir::ScalarKind from, ir::ScalarKind to);
  Id int_convert(Id v, ir::ScalarKind from, ir::ScalarKind to);  // integer kinds (and u1)

  Id binary(ir::BinaryOp op, Id a, Id b, ir::ScalarKind kind, ir::ScalarKind rhs_kind, ir::ScalarKind result);
  Id unary(ir::UnaryOp op, Id x, ir::ScalarKind kind, ir::ScalarKind result);
  Id float_pow(Id x, Id y, ir::ScalarKind k);
  Id int_pow(Id base, Id exponent, ir::ScalarKind k);

  Id load(const Place& p);
  void store(const Place& p, Id value);
  Id stored_form(const Place& p, Id value);  // the value as `p` stores it (u1 as 0/1, bits of floats)
  Id value_form(const Place& p, Id stored);  // and back
  Id atomic(const Place& p, ir::AtomicOp op, Id value);

  // Resources (declared in this module on first use).
  Id buffer_variable(uint32_t binding);
  Place buffer_element(uint32_t binding, Id index, ir::ScalarKind kind);
  ir::ScalarKind stored_kind(uint32_t binding) const;  // the element type a binding is declared with
  Id push_constant(uint32_t member);                   // the loaded member value, as stored
  Id invocation_id();                                  // GlobalInvocationID.x (0 in serial tasks)

  // Structured control flow helpers. `body` emits into the open block and may close it.
  template <class F>
  void emit_if(Id cond, F&& then_body);

  Id value(const ir::Stmt* s) const;
  // f16 results are rounded to half precision here (round_half), once per statement.
  void define(const ir::Stmt& s, Id v) {
    values_[&s] = s.type.scalar == ir::ScalarKind::f16 && !s.type.pointer ? round_half(v) : v;
  }
  // f16 lives in f32 registers and words: `x` (f32) rounded to the nearest half, ties to even,
  // beyond 65504 to infinity, subnormal halves kept; in f32 arithmetic, so no Float16 capability
  // is needed and every driver rounds alike.
  Id float_atan2(Id y, Id x, ir::ScalarKind k);  // f32/f16: GLSL's Atan2 with libm's value at (0, 0)
  Id round_half(Id x);
  [[noreturn]] void unsupported(const ir::Stmt& s, const std::string& why, const std::string& remedy) const;
  void note(const std::string& text);

  ModuleBuilder b_;
  F64Math f64_math_{b_};  // f64 transcendentals GLSL.std.450 lacks, defined in the module on first use

 private:
  void emit_block(const ir::Block& b);
  void emit_stmt(const ir::Stmt& s);
  void declare_invocation_ids();
  TaskInfo finish(Id function);
  void emit_imports();
  void emit_parallel_loop(const ir::Stmt& loop);
  // Unrolled grid-stride steps (emit_unroll.cpp).
  struct UnrolledRange {
    Id t = 0, count = 0, stride = 0;  // the step's first iteration, the trip count, the grid stride
    Id begin = 0, end = 0;
    ir::ScalarKind kind = ir::ScalarKind::i32;
    bool reversed = false;
  };
  struct Lane {  // one iteration of a step: its values and places, and whether it runs
    std::unordered_map<const ir::Stmt*, Id> values;
    std::unordered_map<const ir::Stmt*, Place> places;
    Id valid = 0;  // 0: always (the step's first iteration, or a full vector step)
    Id index = 0;
    ir::ScalarKind kind = ir::ScalarKind::i32;  // the index's
  };
  std::optional<uint32_t> pointer_binding(const ir::Stmt* ptr) const;  // a field or ndarray pointer's binding
  bool unrollable() const;         // whether the parallel loop's iterations may run as steps
  uint32_t unroll_factor() const;  // the iterations one step runs (1: the loop does not qualify)
  void emit_unrolled_step(const ir::Stmt& loop, const UnrolledRange& r, uint32_t unroll);
  std::vector<Lane> step_lanes(const UnrolledRange& r, uint32_t n, bool checked);
  void emit_in_lane(const ir::Stmt& loop, Lane& lane, const ir::Stmt& s);
  // Vector steps (emit_vector.cpp): the pointers of an unrolled loop's body that a vector step
  // reaches as one vector per step (empty: the loop takes no vector steps), and the step.
  // Each pointer with its binding.
  std::map<const ir::Stmt*, uint32_t> vector_pointers(const ir::Stmt& loop) const;
  void emit_vector_step(const ir::Stmt& loop, const UnrolledRange& r, const std::map<const ir::Stmt*, uint32_t>& vec);
  Id vector_view(uint32_t binding, ir::ScalarKind element);
  void emit_struct_for_indices(const ir::Stmt& loop, Id linear);
  Id space_extent(const ir::Stmt& loop, const std::optional<ir::Shape>& shape, int axis);
  // The offloaded stage (emit_offloaded.cpp).
  Id task_bound(const ir::OffloadedStmt& o, const ir::TaskBound& b);  // an i32 range_for bound
  void check_no_block_local_storage(const ir::OffloadedStmt& o);
  uint32_t cells_of(const ir::SNodeLookupStmt& s);
  // A loop task's index read in its tls prologue or epilogue, where no iteration runs.
  [[noreturn]] void refuse_index_outside_iterations(const ir::Stmt& s) const;
  Id range_count(Id begin, Id end, ir::ScalarKind k, Id* count_type);
  void declare_entry_point(Id function);
  void plan_word_views();

  // Sparse SNodes (emit_sparse.cpp). Cells are u32 values, kDeadCell for a cell under one that is
  // not live; `act` arguments are bool ids saying whether to activate (0: never).
  static constexpr uint32_t kDeadCell = 0xffffffffu;
  const SparseSpace& sparse_space(int s) const { return res_.sparse.spaces[static_cast<size_t>(s)]; }
  std::vector<Id> unravel(Id cell, const ir::Shape& shape);
  Id ravel(const std::vector<Id>& coords, const ir::Shape& shape);
  Place activity_word(Id index);
  Id level_live(const SparseSpace& sp, const std::vector<Id>& coords, Id act);
  Id reach_coords(int s, std::vector<Id> coords, Id act);
  Id child_cell(int s, Id parent, Id index);
  void zero_under(int s, Id cell);
  template <class F>
  void counted_loop(uint64_t n, F&& body);  // body(Id i), i in [0, n) as u32
  uint32_t problem_site(const ir::Stmt& s, const std::string& message, const std::string& remedy);
  void raise_problem(Id cond, uint32_t code);  // cond 0: always
  Id outside_space(const ir::Stmt& st, int s, Id cell, bool parent_cells);
  Place sparse_element(ir::FieldId f, Id element, Id live);
  std::vector<Id> checked_coords(const ir::Stmt& s, std::span<const ir::Stmt* const> indices, const ir::Shape& shape,
                                 const std::string& what, Id* bad);
  bool sparse_global_ptr(const ir::GlobalPtrStmt& s);
  bool sparse_lookup(const ir::SNodeLookupStmt& s);
  bool sparse_place(const ir::GetChStmt& s, ir::FieldId f);
  Id listed(const ir::Stmt& loop, Id cell);  // the struct for's cell is in its list (0: no list)

  // Adstacks (emit_adstack.cpp).
  void setup_stacks();
  void publish_overflow();
  StackSlot& slot_of(const ir::Stmt* stack_operand);
  Place group_count_place(uint32_t group);
  Segment& segment();                    // the current segment (begun if none)
  Segment::StackUse& use(StackSlot& s);  // the stack's state in the current segment
  PendingCount& pending(StackSlot& s);
  std::optional<int64_t> known_count(StackSlot& s, int64_t plus);
  Id count_value(StackSlot& s, int64_t plus);
  void end_segment();
  void check_pushes(Segment& seg);
  Id clamped_index(StackSlot& s, int64_t plus);
  Id entry_type(ir::ScalarKind k) { return b_.type_vector(storage_type(k), 2); }            // heap: (primal, adjoint)
  static uint32_t entry_words(ir::ScalarKind k) { return ir::bit_width(k) == 64 ? 4 : 2; }  // heap: per entry
  void declare_heap_slice(const std::vector<HeapArray>& arrays);
  Id heap_entry(const StackSlot& s, Id index);
  Id load_entry(const StackSlot& s, bool adjoint, Id index);
  void push_entry(const StackSlot& s, Id index, Id value);
  void accumulate_adjoint(const StackSlot& s, Id index, Id value);

  Place place_of(const ir::Stmt* pointer) const;
  Id linear_index(const ir::Stmt& s, std::span<const ir::Stmt* const> indices, const std::vector<Id>& extents);
  Id checked_linear_index(const ir::Stmt& s, std::span<const ir::Stmt* const> indices, const std::vector<Id>& extents,
                          const std::string& what);
  void check_not_empty(const ir::Stmt& s, StackSlot& slot, const char* what);
  Place temps_place(const ir::Stmt* s, ir::ScalarKind kind);
  Place function_place(const ir::Stmt& alloca);  // a Function variable for a local, named local<id>
  Place temps_wide_element(uint32_t word, ir::ScalarKind kind);

  struct LoopTargets {
    Id continue_label;
    Id merge_label;
    bool is_while;
    Id left = 0;  // with check_loop_exits: a Function bool, true once the while's own exit is taken
  };
  // With check_loop_exits: raises the loop-cut flag to `loop`'s id + 1 when `cut` holds.
  void flag_cut_loop(Id cut, const ir::Stmt& loop);

  const ir::Kernel& k_;
  const KernelPlan& plan_;
  const KernelResources& res_;
  const LoweringOptions& o_;
  Id while_steps_ = 0;  // Function u32: `while` iterations this invocation ran (with while_budget)
  const Task& task_;
  CompiledKernel& out_;

  // The statement being emitted (for error messages and count liveness); set only through a
  // CurrentStmt scope, which restores the enclosing statement when it ends, however it ends.
  const ir::Stmt* current_ = nullptr;
  class CurrentStmt {
   public:
    CurrentStmt(TaskEmitter& e, const ir::Stmt* s) : slot_(e.current_), saved_(std::exchange(e.current_, s)) {}
    ~CurrentStmt() { slot_ = saved_; }
    CurrentStmt(const CurrentStmt&) = delete;
    CurrentStmt& operator=(const CurrentStmt&) = delete;

   private:
    const ir::Stmt*& slot_;
    const ir::Stmt* saved_;
  };
  std::unordered_map<const ir::Stmt*, Id> values_;
  std::unordered_map<const ir::Stmt*, Place> places_;
  // loop -> per axis: the index value and its kind
  std::unordered_map<const ir::Stmt*, std::vector<std::pair<Id, ir::ScalarKind>>> loop_indices_;
  // loop -> its linear iteration index (loop linear index) and its kind
  std::unordered_map<const ir::Stmt*, std::pair<Id, ir::ScalarKind>> loop_linear_;
  std::map<int64_t, Place> thread_locals_;  // thread-local storage: byte offset -> Function variable
  std::vector<LoopTargets> loops_;
  std::map<uint32_t, Id> buffer_vars_;
  std::map<ir::ScalarKind, Id> temps_views_;  // 64-bit views of the temps binding, by element kind
  std::map<uint32_t, Id> vector_views_;       // vector steps: 4-vector views of field and ndarray bindings
  std::set<uint32_t> word_views_;             // bindings declared as uint words (float compare-exchange atomics)
  Id push_var_ = 0, push_struct_ = 0;
  Id gid_var_ = 0, num_groups_var_ = 0, gid_ = 0;
  uint32_t workgroup_size_ = 1;
  uint32_t unroll_ = 1;  // iterations per grid-stride step of the parallel loop
  uint32_t vector_ = 1;  // consecutive iterations per invocation step (vector steps: kVectorLanes)
  std::vector<StackSlot> stacks_;
  std::unordered_map<const ir::Stmt*, size_t> stack_index_;
  Id counts_var_ = 0;  // shared-array counts: one element per count group
  Id heap_slice_ = 0;  // heap storage: the type of one invocation's slice
  uint32_t heap_slice_words_ = 0;
  Id overflow_any_ = 0;                          // select push with bounds check: max signal of this invocation
  std::optional<Segment> segment_;               // shared-array counts: the current segment, if it used a stack
  std::vector<const ir::Stmt*> group_last_use_;  // shared-array counts: CountGroups::last_use
  bool emitting_import_ = false;                 // set by emit_imports for its duration only
};

template <class F>
void TaskEmitter::emit_if(Id cond, F&& then_body) {
  Id then_label = b_.new_label(), merge = b_.new_label();
  b_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
  b_.op_void(spv::OpBranchConditional, {cond, then_label, merge});
  b_.begin_block(then_label);
  then_body();
  if (b_.block_open()) b_.op_void(spv::OpBranch, {merge});
  b_.begin_block(merge);
}

}  // namespace pb::codegen::spirv::detail
