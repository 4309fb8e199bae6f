// Internal to codegen/llvm: emits one task function. The handlers are split by kind over
// emit_task.cpp (control flow), emit_memory.cpp (locals, global memory), emit_part.cpp (large
// blocks in functions of their own), emit_parallel.cpp (atomic rewrites), emit_arith.cpp
// (arithmetic, casts, atomics) and emit_stack.cpp (stacks, print, assert, return, offloaded stage).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/llvm/emit.h"
#include "codegen/llvm/task_split.h"
#include "ir/differentiable.h"
#include "ir/kernel.h"

namespace pb::codegen::llvmgen::detail {

// State shared by every task of one module.
struct ModuleState {
  const ir::Kernel& kernel;
  const EmitShapes& shapes;
  const EmitOptions& options;
  const KernelPlan& plan;
  KernelInfo& info;
  llvm::LLVMContext& ctx;
  llvm::Module& module;
  std::unordered_map<const ir::Stmt*, int> stack_ids;
};

// A statement with the statements of its blocks.
size_t nested_size(const ir::Stmt& s);

class TaskEmitter {
 public:
  TaskEmitter(ModuleState& m, const TaskPlan& task, size_t index);
  // Emits the task function (and a parallel task's count function).
  void run();

  // ---- per kind (visited through ir::visit) ----
  void emit(const ir::ConstStmt&);
  void emit(const ir::ArgLoadStmt&);
  void emit(const ir::ExternalTensorShapeAlongAxisStmt&);
  void emit(const ir::AllocaStmt&);
  void emit(const ir::LocalLoadStmt&);
  void emit(const ir::LocalStoreStmt&);
  void emit(const ir::GlobalPtrStmt&);
  void emit(const ir::ExternalPtrStmt&);
  void emit(const ir::GlobalLoadStmt&);
  void emit(const ir::GlobalStoreStmt&);
  void emit(const ir::AtomicOpStmt&);
  void emit(const ir::UnaryOpStmt&);
  void emit(const ir::BinaryOpStmt&);
  void emit(const ir::TernaryOpStmt&);
  void emit(const ir::IfStmt&);
  void emit(const ir::RangeForStmt&);
  void emit(const ir::StructForStmt&);
  void emit(const ir::LoopIndexStmt&);
  void emit(const ir::WhileStmt&);
  void emit(const ir::WhileControlStmt&);
  void emit(const ir::ContinueStmt&);
  void emit(const ir::AdStackAllocaStmt&);
  void emit(const ir::AdStackPushStmt&);
  void emit(const ir::AdStackPopStmt&);
  void emit(const ir::AdStackLoadTopStmt&);
  void emit(const ir::AdStackLoadTopAdjStmt&);
  void emit(const ir::AdStackAccAdjointStmt&);
  void emit(const ir::PrintStmt&);
  void emit(const ir::AssertStmt&);
  void emit(const ir::OffloadedStmt&);
  void emit(const ir::GlobalTemporaryStmt&);
  void emit(const ir::ThreadLocalPtrStmt&);
  void emit(const ir::GetRootStmt&);
  void emit(const ir::SNodeLookupStmt&);
  void emit(const ir::GetChStmt&);
  void emit(const ir::LinearizeStmt&);
  void emit(const ir::IntegerOffsetStmt&);
  void emit(const ir::BitExtractStmt&);
  void emit(const ir::LoopLinearIndexStmt&);
  void emit(const ir::ReturnStmt&);
  // Through the sparse-SNode host (emit_sparse.cpp).
  void emit(const ir::SNodeOpStmt&);
  void emit(const ir::SNodePtrStmt&);
  // The other kinds passbench reads and interprets but compiles nowhere yet.
  template <class T>
    requires(ir::has_no_backend(T::kKind))
  void emit(const T& s) {
    unsupported(s,
                "`" + std::string(ir::kind_name(T::kKind)) + "` statements are not compiled yet" +
                    (ir::is_mesh(T::kKind) ? " (passbench has no mesh model)" : " (the interpreter runs them)"),
                ir::is_mesh(T::kKind)
                    ? ir::kMeshKernelRemedy
                    : "run this kernel on the interpreter (--backend=interp), or rewrite the statement");
  }

 private:
  friend struct StackOps;
  // ---- types and values ----
  llvm::Type* value_type(ir::ScalarKind k);   // u1 -> i1
  llvm::Type* memory_type(ir::ScalarKind k);  // u1 -> i8
  llvm::Value* value(const ir::Stmt* s);      // the computed value of an operand
  void set(const ir::Stmt& s, llvm::Value* v);
  llvm::Value* to_memory(llvm::Value* v, ir::ScalarKind k);
  llvm::Value* from_memory(llvm::Value* v, ir::ScalarKind k);
  llvm::Value* truthy(const ir::Stmt* s);                    // operand != 0, as i1
  llvm::Value* from_bool(llvm::Value* b, ir::ScalarKind k);  // i1 -> 0/1 of kind k
  llvm::Value* to_i64(const ir::Stmt* s);                    // an index operand, sign-/zero-extended
  llvm::Value* cast(llvm::Value* v, ir::ScalarKind from, ir::ScalarKind to);
  llvm::Value* const_i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  llvm::Value* ctx_word(ContextWord w);  // loads ctx[w] as a pointer
  [[noreturn]] void unsupported(
      const ir::Stmt& s, const std::string& why,
      const std::string& remedy = "run this kernel on the interpreter (--backend=interp), or rewrite the statement");

  // ---- control ----
  void emit_block(const ir::Block& b);
  void emit_stmts(std::span<const ir::Stmt* const> stmts);
  void emit_stmt(const ir::Stmt& s);
  void emit_import(const ir::Stmt& s);
  llvm::BasicBlock* new_block(const char* name);
  llvm::MDNode* unlikely();  // branch weights of an error path
  llvm::AllocaInst* entry_alloca(llvm::Type* t, const char* name);
  // Emits `for (i = 0; i < count; ++i) body(i)`; `continue` in the body goes to the latch.
  void counted_loop(llvm::Value* count, const std::function<void(llvm::Value*)>& body);
  void emit_parallel_body(llvm::Value* t);  // the loop task's body for linear iteration t
  void emit_count_function();
  // Adds `n` loop iterations to the call's step count; returns whether the count is now past the
  // task's budget, after flagging kFlagStepBudget with `loop` when it is.
  llvm::Value* count_steps(llvm::Value* n, const ir::Stmt& loop);
  void report_steps();         // adds the call's step count to ctx steps[1]
  void report_stack_depths();  // raises ctx stack_deepest[id] to each stack's deepest in this call
  // Atomic adds/subs into a 0-d field that nothing else in the task touches, whose old value is
  // unused: accumulated per chunk and added once after the chunk's loop.
  void plan_reductions();
  // Fields whose every access in the task is at the cell of the task's own iteration (indices
  // are the loop's indices): no other iteration touches the cell, so atomics there need none.
  void plan_own_cells();
  void begin_reductions();
  void end_reductions();
  llvm::Value* task_bound(const ir::OffloadedStmt& o, const ir::TaskBound& b);
  llvm::Value* range_begin_end(llvm::Value** end);  // range task: begin (and end)

  // With the global-access check: reports the access `s` makes through `ptr` (at `address`).
  void check_access(const ir::Stmt& s, const ir::Stmt* ptr, llvm::Value* address, bool write);

  // ---- parts (emit_part.cpp) ----
  // Statements of a block of more than EmitOptions::part_statements, in functions of their own.
  void emit_in_parts(std::span<const ir::Stmt* const> stmts);
  // Emits `stmts` as one part function and calls it; false (nothing emitted) when a value made
  // inside a nested block of the part is read after it.
  bool emit_part(std::span<const ir::Stmt* const> stmts, const std::unordered_set<const ir::Stmt*>& scope);
  // A task in parts: every stack's count, depth and place made at the task function's entry.
  void prepare_stacks();
  llvm::Value* thread_locals();  // the call's thread-local area (made on first use)

  // ---- errors ----
  int error_site(const ir::Stmt& s, std::string message, std::string remedy);
  void set_flag(FlagWord w, llvm::Value* code);  // an atomic store of code into ctx flags[w]
  void flag_if(llvm::Value* bad, FlagWord w, int code);
  // Row-major offset of `indices` in `shape`, bounds-checked: out of bounds flags `code`, offset 0.
  llvm::Value* checked_offset(std::span<const ir::Stmt* const> indices, const ir::Shape& shape, int code);

  // ---- arithmetic helpers (emit_arith.cpp) ----
  llvm::Value* float_unary(const ir::UnaryOpStmt& s, llvm::Value* x, ir::ScalarKind k);
  llvm::Value* int_unary(const ir::UnaryOpStmt& s, llvm::Value* x, ir::ScalarKind k);
  llvm::Value* int_divide(const ir::BinaryOpStmt& s, llvm::Value* a, llvm::Value* b, ir::ScalarKind k);
  llvm::Value* int_pow(const ir::BinaryOpStmt& s, llvm::Value* a, llvm::Value* b, ir::ScalarKind k);
  llvm::Value* binary_value(ir::BinaryOp op, llvm::Value* a, llvm::Value* b, ir::ScalarKind k);
  llvm::Value* libm(const char* name, std::vector<llvm::Value*> args);
  void emit_atomic(const ir::AtomicOpStmt& s);

  // ---- sparse SNodes (emit_sparse.cpp) ----
  // Whether field `f` lies in a space with sparse SNodes in its tree (its elements can be unreachable).
  bool sparse_field(ir::FieldId f) const;
  // The pointer to element `offset` of sparse field `f` (at `element`): the element when the host
  // says its cells are live (activating them when `activate`), else the ambient slot. Marks `s`.
  llvm::Value* sparse_reach(const ir::Stmt& s, ir::FieldId f, llvm::Value* element, llvm::Value* offset, bool activate);
  // What a pointer through a cell that is not live reaches: an 8-byte slot of the call, read as 0
  // (loads and atomics through such a pointer give 0; stores land in the slot and are never read).
  llvm::Value* ambient();
  // Whether `s` points at the cell of the task's own iteration in a struct-for task over the
  // field's own sparse space: the host listed that cell as live at launch, and with no
  // `deactivate` in the kernel it stays live, so the pointer needs no call.
  bool listed_cell(const ir::GlobalPtrStmt& s) const;
  // After a load or atomic `s` through `ptr`: its value is 0 when `ptr` is the ambient slot.
  void zero_if_ambient(const ir::Stmt& s, const ir::Stmt* ptr);
  // A lookup the host does (a declared space that is sparse, under a sparse one, or nested):
  // emits it and returns true; false leaves the dense arithmetic to the caller.
  bool host_lookup(const ir::SNodeLookupStmt& s, llvm::Value* index);
  // A struct for over a space with sparse SNodes in its tree: iterates over its live cells as
  // the host lists them when the loop starts; false when the space has no sparse SNode.
  bool sparse_struct_for(const ir::StructForStmt& s, const ir::Shape& shape);
  llvm::Value* host_call(const char* name, llvm::Type* result, const std::vector<llvm::Value*>& args);
  int sparse_site(SparseSite site);
  // A struct for's iteration at `cell` (row-major over `shape`): its loop coordinates and linear index.
  void unravel_cell(const ir::Stmt& loop, llvm::Value* cell, const ir::Shape& shape);

  // ---- stacks (emit_stack.cpp) ----
  struct StackRef {
    llvm::Value* base = nullptr;   // the stack's first byte in the slice (the reserved count word)
    llvm::Value* count = nullptr;  // a local: the number of entries
    llvm::Value* capacity = nullptr;
    int id = 0;
    ir::ScalarKind kind = ir::ScalarKind::f32;
    llvm::Value* deepest = nullptr;  // a local: the most entries in this call
  };
  StackRef& stack_of(const ir::Stmt* alloc);
  llvm::Value* stack_slot(const StackRef& st, llvm::Value* index, bool adjoint);
  // The top index (count - 1) after checking the stack is not empty (else flags underflow, 0).
  llvm::Value* checked_top(const StackRef& st);

  ModuleState& m_;
  const TaskPlan& task_;
  size_t index_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::Value* ctx_ = nullptr;
  llvm::Value* slice_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value* tls_ = nullptr;
  llvm::Value* steps_ = nullptr;  // loop iterations this call ran (see count_steps): the task function's
  std::unordered_map<const ir::Stmt*, llvm::Value*> values_;
  // Values a part made, in the slot of its frame it left them in (emit_part): loaded where used,
  // so that none stays live across the calls that follow.
  struct Home {
    llvm::Value* slot;
    llvm::Type* type;
  };
  std::unordered_map<const ir::Stmt*, Home> homes_;
  std::unordered_map<const ir::Stmt*, std::vector<llvm::Value*>> loop_coords_;  // loop -> i64 coordinates
  std::unordered_map<const ir::Stmt*, llvm::Value*> loop_linear_;               // loop task -> linear index
  llvm::Value* iteration_ = nullptr;  // a parallel task's linear iteration (i64); null in serial tasks
  std::unordered_map<const ir::Stmt*, StackRef> stacks_;
  struct Reduction {
    ir::FieldId field = 0;
    ir::ScalarKind kind = ir::ScalarKind::f32;
    llvm::Value* acc = nullptr;  // the task function's accumulator
  };
  std::unordered_map<ir::FieldId, Reduction> reductions_;
  std::unordered_map<const ir::Stmt*, ir::FieldId> reduced_atomics_;
  std::unordered_map<ir::FieldId, bool> own_cell_fields_;
  std::vector<llvm::BasicBlock*> continue_targets_;
  std::vector<llvm::BasicBlock*> while_exits_;
  llvm::Value* ambient_ = nullptr;
  std::unordered_set<const ir::Stmt*> ambient_ptrs_;  // pointers that may be the ambient slot
  bool in_parts_ = false;                             // the task is larger than part_statements (see emit_in_parts)
  size_t parts_ = 0;                                  // part functions emitted so far
  mutable int deactivates_ = -1;                      // whether the kernel deactivates cells (-1: not yet known)
};

}  // namespace pb::codegen::llvmgen::detail
