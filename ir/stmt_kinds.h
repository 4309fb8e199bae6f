// The one list of statement kinds. Everything that must cover every kind (the StmtKind enum,
// names, the visitor dispatch) is generated from it, so a new kind is a compile error
// everywhere it is not yet handled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pb::ir {

// Traits a kind has, declared with it in the list below and read through the predicates after it.
enum StmtTraits : uint16_t {
  kNoTraits = 0,
  // The result is a function of the attributes and operand values alone: no memory read, no side
  // effect. simplify merges equal ones; backup_ssa recomputes them where reverse code needs them.
  kComputedFromOperands = 1,
  kLoop = 2,             // runs its body any number of times (range for, struct for, while)
  kCountedLoop = 4,      // a loop over an index space, with loop indices (range for, struct for)
  kNoValue = 8,          // gives no value another statement may read (stores, containers, push, print, ...)
  kContainer = 16,       // holds blocks of statements
  kOffloadedStage = 32,  // appears only after offloading (tasks, the SNode access chain); not differentiated
  // Read from reference dumps and run by the interpreter; autodiff does not differentiate it and
  // the backends refuse it, each by this trait with a located error. The exceptions: both backends
  // run SNode ops and cell pointers (codegen/llvm/emit_sparse.cpp, codegen/spirv/emit_sparse.cpp).
  kNoBackend = 64,
  // A mesh statement: read, printed and verified, never run (passbench has no mesh model). The
  // verifier keeps the non-container ones inside a mesh for or a mesh_for task.
  kMesh = 128,
  // Operand 0 is a stack alloc: the one slot where a stack alloc may appear (it names the stack
  // and gives no value; the verifier holds every other operand to that).
  kStackOp = 256,
};

// X(ClassPrefix, json/display name, traits)
#define PB_STMT_KINDS(X)                                                                      \
  X(Const, "const", kComputedFromOperands)                                                    \
  X(ArgLoad, "argload", kComputedFromOperands)                                                \
  X(Alloca, "alloca", kNoTraits)                                                              \
  X(LocalLoad, "local_load", kNoTraits)                                                       \
  X(LocalStore, "local_store", kNoValue)                                                      \
  X(GlobalPtr, "global_ptr", kComputedFromOperands)                                           \
  X(ExternalPtr, "external_ptr", kComputedFromOperands)                                       \
  X(GlobalLoad, "global_load", kNoTraits)                                                     \
  X(GlobalStore, "global_store", kNoValue)                                                    \
  X(AtomicOp, "atomic", kNoTraits)                                                            \
  X(UnaryOp, "unary", kComputedFromOperands)                                                  \
  X(BinaryOp, "binary", kComputedFromOperands)                                                \
  X(TernaryOp, "select", kComputedFromOperands)                                               \
  X(If, "if", kNoValue | kContainer)                                                          \
  X(RangeFor, "range_for", kLoop | kCountedLoop | kNoValue | kContainer)                      \
  X(StructFor, "struct_for", kLoop | kCountedLoop | kNoValue | kContainer)                    \
  X(LoopIndex, "loop_index", kComputedFromOperands)                                           \
  X(While, "while", kLoop | kNoValue | kContainer)                                            \
  X(WhileControl, "while_control", kNoValue)                                                  \
  X(Continue, "continue", kNoValue)                                                           \
  X(AdStackAlloca, "stack_alloc", kNoTraits)                                                  \
  X(AdStackPush, "stack_push", kNoValue | kStackOp)                                           \
  X(AdStackPop, "stack_pop", kNoValue | kStackOp)                                             \
  X(AdStackLoadTop, "stack_load_top", kStackOp)                                               \
  X(AdStackLoadTopAdj, "stack_load_top_adj", kStackOp)                                        \
  X(AdStackAccAdjoint, "stack_acc_adj", kNoValue | kStackOp)                                  \
  X(Print, "print", kNoValue)                                                                 \
  X(Assert, "assert", kNoValue)                                                               \
  X(Offloaded, "offloaded", kNoValue | kContainer | kOffloadedStage)                          \
  X(GlobalTemporary, "global_tmp", kComputedFromOperands | kOffloadedStage)                   \
  X(ThreadLocalPtr, "thread_local_ptr", kComputedFromOperands | kOffloadedStage)              \
  X(GetRoot, "get_root", kComputedFromOperands | kOffloadedStage)                             \
  X(SNodeLookup, "snode_lookup", kOffloadedStage)                                             \
  X(GetCh, "get_ch", kComputedFromOperands | kOffloadedStage)                                 \
  X(Linearize, "linearize", kComputedFromOperands | kOffloadedStage)                          \
  X(IntegerOffset, "integer_offset", kComputedFromOperands | kOffloadedStage)                 \
  X(BitExtract, "bit_extract", kComputedFromOperands | kOffloadedStage)                       \
  X(LoopLinearIndex, "loop_linear_index", kComputedFromOperands | kOffloadedStage)            \
  X(Return, "return", kNoValue | kOffloadedStage)                                             \
  X(LoopUnique, "loop_unique", kNoBackend)                                                    \
  X(RangeAssumption, "assume_in_range", kNoBackend)                                           \
  X(Decoration, "decorate", kNoValue | kNoBackend)                                            \
  X(ExternalTensorShapeAlongAxis, "external_tensor_shape_along_axis", kComputedFromOperands)  \
  X(SNodeOp, "snode_op", kNoBackend)                                                          \
  X(SNodePtr, "snode_ptr", kComputedFromOperands | kNoBackend)                                \
  X(Rand, "rand", kNoBackend)                                                                 \
  X(InternalFunc, "internal_call", kNoBackend)                                                \
  X(BlockCornerIndex, "block_corner_index", kNoBackend)                                       \
  X(BlockLocalPtr, "block_local_ptr", kNoBackend)                                             \
  X(Reference, "ref", kNoBackend)                                                             \
  X(FuncCall, "call", kNoBackend)                                                             \
  X(BitStructStore, "bit_struct_store", kNoValue | kNoBackend)                                \
  X(MatrixInit, "matrix_init", kComputedFromOperands | kNoBackend)                            \
  X(GetElement, "get_element", kComputedFromOperands | kNoBackend)                            \
  X(MatrixPtr, "matrix_ptr", kComputedFromOperands | kNoBackend)                              \
  X(MatrixOfGlobalPtr, "matrix_of_global_ptr", kComputedFromOperands | kNoBackend)            \
  X(MatrixOfMatrixPtr, "matrix_of_matrix_ptr", kComputedFromOperands | kNoBackend)            \
  X(ExternalTensorBasePtr, "external_tensor_base_ptr", kComputedFromOperands | kNoBackend)    \
  X(MeshFor, "mesh_for", kLoop | kNoValue | kContainer | kNoBackend | kMesh)                  \
  X(MeshRelationAccess, "mesh_relation_access", kComputedFromOperands | kNoBackend | kMesh)   \
  X(MeshIndexConversion, "mesh_index_conversion", kComputedFromOperands | kNoBackend | kMesh) \
  X(MeshPatchIndex, "mesh_patch_index", kNoBackend | kMesh)

enum class StmtKind : uint8_t {
#define PB_X(Name, text, traits) Name,
  PB_STMT_KINDS(PB_X)
#undef PB_X
};

std::string_view kind_name(StmtKind k);

// Indexed by StmtKind: a table rather than a switch, whose cases would be identical branches.
inline constexpr uint16_t kKindTraits[] = {
#define PB_X(Name, text, traits) static_cast<uint16_t>(traits),
    PB_STMT_KINDS(PB_X)
#undef PB_X
};

constexpr uint16_t traits_of(StmtKind k) { return kKindTraits[static_cast<size_t>(k)]; }

constexpr bool computed_from_operands(StmtKind k) { return traits_of(k) & kComputedFromOperands; }
constexpr bool is_loop(StmtKind k) { return traits_of(k) & kLoop; }
constexpr bool is_counted_loop(StmtKind k) { return traits_of(k) & kCountedLoop; }
constexpr bool has_value(StmtKind k) { return !(traits_of(k) & kNoValue); }
constexpr bool is_container(StmtKind k) { return traits_of(k) & kContainer; }
constexpr bool is_offloaded_stage(StmtKind k) { return traits_of(k) & kOffloadedStage; }
constexpr bool has_no_backend(StmtKind k) { return traits_of(k) & kNoBackend; }
constexpr bool is_stack_op(StmtKind k) { return traits_of(k) & kStackOp; }
constexpr bool is_mesh(StmtKind k) { return traits_of(k) & kMesh; }
// The remedy every layer gives for running a mesh kernel: no backend, the interpreter included,
// runs one (passbench has no mesh model).
inline constexpr const char* kMeshKernelRemedy =
    "run passes on the mesh kernel and compare its IR; run kernels without a mesh";

}  // namespace pb::ir
