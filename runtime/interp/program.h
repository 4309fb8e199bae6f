// Internal to runtime/interp: a kernel resolved once per run into dense slots, so execution
// indexes vectors instead of hashing statement pointers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime::detail {

// The kind a value of declared kind `k` is computed in: f32 and f16 become f64 in f64 mode.
inline ir::ScalarKind work_kind(ir::ScalarKind k, bool f64) {
  return f64 && (k == ir::ScalarKind::f32 || k == ir::ScalarKind::f16) ? ir::ScalarKind::f64 : k;
}

// Throws UserError listing the first verifier errors when `k` (named `label`) does not verify.
void check_runnable(const ir::Kernel& k, const std::string& label);
// Brings a buffer to the working kind of its declared element type (f32 <-> f64 in f64 mode);
// throws UserError naming `what` when its type or size does not fit the declaration.
void convert_buffer(Buffer& b, ir::ScalarKind declared, bool f64, const std::string& what);
// convert_buffer for every ndarray argument the kernel declares or loads (and its gradient and dual).
void convert_ndarrays(const ir::Kernel& k, State& st, bool f64);

struct Op {
  const ir::Stmt* stmt = nullptr;
  uint32_t slot = 0;                              // this statement's value slot (pre-order index)
  ir::ScalarKind kind = ir::ScalarKind::unknown;  // working kind of the value (pointee for pointers)
  std::vector<uint32_t> operands;                 // operand slots, in operand order
  int32_t body = -1;                              // compiled block: loop body / if true branch / while body
  int32_t else_body = -1;                         // if false branch
  int32_t prologue = -1, epilogue = -1;           // offloaded task: thread-local prologue / epilogue
  int64_t aux = -1;  // loops: first coordinate; loop index: its coordinate; stack ops: stack number;
                     // external ptr: argument index; global ptr, get child of a place: field id (-1: a
                     // container cell); global temporary: byte offset; SNode lookup and op: the
                     // space's index in the kernel's spaces (-1: not a space)
  ir::Value imm;     // const: the value in its working kind
  ir::Shape shape;   // struct for, struct_for task: the index space's shape; lookup: the SNode's cells
  // Global store / atomic through a pointer to a quant integer: its width, negative when signed
  // (the stored value keeps that many low bits); 0 otherwise.
  int quant_bits = 0;
  // Tensors: a tensor value fills `lanes` consecutive slots from `slot`; `tensor` marks a statement
  // with a tensor value, operand or pointee (run by runtime/interp/exec_tensor.cpp); `cell_rank`
  // is the rank of the tensor cell a global or external ptr addresses (its buffer's last dims).
  uint32_t lanes = 1;
  bool tensor = false;
  uint8_t cell_rank = 0;
};

struct Program {
  std::vector<std::vector<Op>> blocks;  // blocks[0] is the kernel root
  size_t num_slots = 0;
  size_t num_coords = 0;  // loop coordinates (one per range for, one per struct-for axis)
  size_t num_stacks = 0;
};

// Resolves `k` against `state` (index-space shapes). Throws UserError for what the verifier
// cannot know (a loop index axis beyond its space's rank, an unknown space shape).
Program compile(const ir::Kernel& k, const State& state, bool f64);

}  // namespace pb::runtime::detail
