// Structured control flow: if, serial range fors, while loops, continue, while control; and
// print/assert, which SPIR-V has no direct form for (docs/codegen-spirv.md).
#include <fmt/format.h>

#include "codegen/spirv/task_emitter.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"

namespace pb::codegen::spirv::detail {

using ir::ScalarKind;

void TaskEmitter::operator()(const ir::IfStmt& s) {
  Id cond = to_bool(value(s.cond()), s.cond()->type.scalar);
  Id then_label = b_.new_label(), merge = b_.new_label();
  Id else_label = s.false_block ? b_.new_label() : merge;
  b_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
  b_.op_void(spv::OpBranchConditional, {cond, then_label, else_label});
  b_.begin_block(then_label);
  emit_block(*s.true_block);
  if (b_.block_open()) b_.op_void(spv::OpBranch, {merge});
  if (s.false_block) {
    b_.begin_block(else_label);
    emit_block(*s.false_block);
    if (b_.block_open()) b_.op_void(spv::OpBranch, {merge});
  }
  b_.begin_block(merge);
}

// A serial loop: a u32 trip counter from 0 to max(end - begin, 0); the index is begin + t, or
// end - 1 - t when reversed.
void TaskEmitter::operator()(const ir::RangeForStmt& s) {
  ScalarKind k = s.begin()->type.scalar;
  Id begin = value(s.begin()), end = value(s.end()), count_type = 0;
  Id count = range_count(begin, end, k, &count_type);
  ScalarKind ck = ir::bit_width(k) == 64 ? ScalarKind::u64 : ScalarKind::u32;
  Id t_var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, count_type));
  b_.set_name(t_var, fmt::format("trip{}", s.id));
  b_.op_void(spv::OpStore, {t_var, constant(ck, 0)});
  auto [header, check, body, cont, merge] = b_.begin_loop(true);
  Id t = b_.op(spv::OpLoad, count_type, {t_var});
  b_.op_void(spv::OpBranchConditional, {b_.op(spv::OpULessThan, t_bool(), {t, count}), body, merge});
  b_.begin_block(body);
  Id vt = value_type(k);
  Id tk = int_convert(t, ck, k);
  Id index = s.reversed ? b_.op(spv::OpISub, vt, {b_.op(spv::OpISub, vt, {end, constant(k, 1)}), tk})
                        : b_.op(spv::OpIAdd, vt, {begin, tk});
  b_.set_name(index, fmt::format("i{}", s.id));
  loop_indices_[&s] = {{index, k}};
  loops_.push_back({cont, merge, false});
  emit_block(*s.body);
  loops_.pop_back();
  if (b_.block_open()) b_.op_void(spv::OpBranch, {cont});
  b_.begin_block(cont);
  Id next = b_.op(spv::OpIAdd, count_type, {b_.op(spv::OpLoad, count_type, {t_var}), constant(ck, 1)});
  b_.op_void(spv::OpStore, {t_var, next});
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
  if (o_.check_loop_exits)
    flag_cut_loop(b_.op(spv::OpULessThan, t_bool(), {b_.op(spv::OpLoad, count_type, {t_var}), count}), s);
}

void TaskEmitter::flag_cut_loop(Id cut, const ir::Stmt& loop) {
  emit_if(cut, [&] {
    Place flag = buffer_element(*res_.flags, c_u32(kFlagLoopCut), ScalarKind::u32);
    b_.op(spv::OpAtomicUMax, t_u32(),
          {flag.pointer, c_u32(spv::ScopeDevice), c_u32(0), c_u32(static_cast<uint32_t>(loop.id) + 1)});
  });
}

void TaskEmitter::operator()(const ir::StructForStmt& s) {
  unsupported(s, "a struct for below the kernel root", "struct fors must be top-level loops (the verifier says so)");
}

// With while_budget, each iteration first counts itself; an invocation past the budget raises
// the step-budget flag to the loop's id + 1 and leaves the loop.
void TaskEmitter::operator()(const ir::WhileStmt& s) {
  Id left = 0;
  if (o_.check_loop_exits) {
    left = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_bool()));
    b_.op_void(spv::OpStore, {left, b_.const_bool(false)});
  }
  auto [header, check, body, cont, merge] = b_.begin_loop(false);
  loops_.push_back({cont, merge, true, left});
  if (o_.while_budget) {
    if (!while_steps_) {
      while_steps_ = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, t_u32()), c_u32(0));
      b_.set_name(while_steps_, "while_steps");
    }
    Id steps = b_.op(spv::OpLoad, t_u32(), {while_steps_});
    Id over = b_.op(spv::OpUGreaterThanEqual, t_bool(), {steps, c_u32(o_.while_budget)});
    emit_if(over, [&] {
      Place flag = buffer_element(*res_.flags, c_u32(kFlagStepBudget), ScalarKind::u32);
      b_.op(spv::OpAtomicUMax, t_u32(),
            {flag.pointer, c_u32(spv::ScopeDevice), c_u32(0), c_u32(static_cast<uint32_t>(s.id) + 1)});
    });
    Id next = b_.op(spv::OpSelect, t_u32(), {over, steps, b_.op(spv::OpIAdd, t_u32(), {steps, c_u32(1)})});
    b_.op_void(spv::OpStore, {while_steps_, next});
    if (left) b_.op_void(spv::OpStore, {left, over});
    Id go_on = b_.new_label();
    b_.op_void(spv::OpSelectionMerge, {go_on, spv::SelectionControlMaskNone});
    b_.op_void(spv::OpBranchConditional, {over, merge, go_on});
    b_.begin_block(go_on);
  }
  emit_block(*s.body);
  loops_.pop_back();
  if (b_.block_open()) b_.op_void(spv::OpBranch, {cont});
  b_.begin_block(cont);
  b_.op_void(spv::OpBranch, {header});
  b_.begin_block(merge);
  if (left) flag_cut_loop(b_.op(spv::OpLogicalNot, t_bool(), {b_.op(spv::OpLoad, t_bool(), {left})}), s);
}

// mask &= cond; leave the innermost loop (which must be the while) when the mask is 0.
void TaskEmitter::operator()(const ir::WhileControlStmt& s) {
  if (loops_.empty() || !loops_.back().is_while)
    unsupported(s, "a while control inside a range for nested in the while leaves two loops at once",
                "structured SPIR-V can only break out of the innermost loop; move the while control out of the for");
  Id stop = 0;
  if (!s.has_mask()) {  // `while control nullptr, $c`: leave when c is 0
    stop = b_.op(spv::OpLogicalNot, t_bool(), {to_bool(value(s.cond()), s.cond()->type.scalar)});
  } else {
    Place mask = place_of(s.mask());
    ScalarKind mk = mask.kind;
    Id cond = int_convert(value(s.cond()), s.cond()->type.scalar, mk);
    Id m = mk == ScalarKind::u1 ? b_.op(spv::OpLogicalAnd, t_bool(), {load(mask), cond})
                                : b_.op(spv::OpBitwiseAnd, value_type(mk), {load(mask), cond});
    store(mask, m);
    stop = b_.op(spv::OpLogicalNot, t_bool(), {to_bool(m, mk)});
  }
  if (loops_.back().left) b_.op_void(spv::OpStore, {loops_.back().left, stop});
  Id go_on = b_.new_label();
  b_.op_void(spv::OpSelectionMerge, {go_on, spv::SelectionControlMaskNone});
  b_.op_void(spv::OpBranchConditional, {stop, loops_.back().merge_label, go_on});
  b_.begin_block(go_on);
}

void TaskEmitter::operator()(const ir::ContinueStmt& s) {
  PB_ASSERT(!loops_.empty(), fmt::format("continue ${} outside a loop", s.id));
  b_.op_void(spv::OpBranch, {loops_.back().continue_label});
}

void TaskEmitter::operator()(const ir::PrintStmt& s) {
  if (o_.print == PrintLowering::error)
    unsupported(s, "SPIR-V has no print", "remove the print, or compile with print=drop");
  note(fmt::format("print ${} dropped: SPIR-V has no print", s.id));
}

// A failed assert raises the assert flag word to its code (atomic max), and execution goes on.
void TaskEmitter::operator()(const ir::AssertStmt& s) {
  uint32_t code = 0;
  for (const AssertInfo& a : out_.asserts)
    if (a.stmt_id == s.id) code = a.code;
  if (!code) {
    code = static_cast<uint32_t>(out_.asserts.size()) + 1;
    out_.asserts.push_back({code, s.id, s.message});
  }
  Id failed = b_.op(spv::OpLogicalNot, t_bool(), {to_bool(value(s.cond()), s.cond()->type.scalar)});
  emit_if(failed, [&] {
    Place flag = buffer_element(*res_.flags, c_u32(kFlagAssert), ScalarKind::u32);
    b_.op(spv::OpAtomicUMax, t_u32(), {flag.pointer, c_u32(spv::ScopeDevice), c_u32(0), c_u32(code)});
  });
  if (!s.args().empty()) note(fmt::format("assert ${} reports its code only; its arguments are not captured", s.id));
}

}  // namespace pb::codegen::spirv::detail
