// The one list of statement kinds. Everything that must cover every kind (the StmtKind enum,
// names, the visitor dispatch) is generated from it, so a new kind is a compile error
// everywhere it is not yet handled.
#pragma once

#include <cstdint>
#include <string_view>

namespace pb::ir {

// X(ClassPrefix, json/display name)
#define PB_STMT_KINDS(X)                     \
  X(Const, "const")                          \
  X(ArgLoad, "argload")                      \
  X(Alloca, "alloca")                        \
  X(LocalLoad, "local_load")                 \
  X(LocalStore, "local_store")               \
  X(GlobalPtr, "global_ptr")                 \
  X(ExternalPtr, "external_ptr")             \
  X(GlobalLoad, "global_load")               \
  X(GlobalStore, "global_store")             \
  X(AtomicOp, "atomic")                      \
  X(UnaryOp, "unary")                        \
  X(BinaryOp, "binary")                      \
  X(TernaryOp, "select")                     \
  X(If, "if")                                \
  X(RangeFor, "range_for")                   \
  X(StructFor, "struct_for")                 \
  X(LoopIndex, "loop_index")                 \
  X(While, "while")                          \
  X(WhileControl, "while_control")           \
  X(Continue, "continue")                    \
  X(AdStackAlloca, "stack_alloc")            \
  X(AdStackPush, "stack_push")               \
  X(AdStackPop, "stack_pop")                 \
  X(AdStackLoadTop, "stack_load_top")        \
  X(AdStackLoadTopAdj, "stack_load_top_adj") \
  X(AdStackAccAdjoint, "stack_acc_adj")      \
  X(Print, "print")                          \
  X(Assert, "assert")

enum class StmtKind : uint8_t {
#define PB_X(Name, text) Name,
  PB_STMT_KINDS(PB_X)
#undef PB_X
};

std::string_view kind_name(StmtKind k);

// Kinds whose result is a function of their attributes and operand values alone: no memory
// read, no side effect (constants, arguments, arithmetic, select, pointers, loop indices).
// simplify merges equal ones; backup_ssa recomputes them where the reverse code needs them.
bool computed_from_operands(StmtKind k);

}  // namespace pb::ir
