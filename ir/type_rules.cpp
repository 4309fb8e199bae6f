#include "ir/type_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/tensor_type.h"
#include "ir/visitor.h"

namespace pb::ir {
namespace {

std::string ref(const Stmt* s) { return s ? fmt::format("${}", s->id) : std::string("<erased>"); }

// A pointer into global memory: a field or ndarray element, a place reached through the SNode
// access chain, or a global temporary.
bool is_global_pointer(const Stmt* p) {
  if (const auto* m = dyn_cast<MatrixPtrStmt>(p)) return m->origin() && is_global_pointer(m->origin());
  return isa<GlobalPtrStmt>(p) || isa<ExternalPtrStmt>(p) || isa<GlobalTemporaryStmt>(p) ||
         isa<ThreadLocalPtrStmt>(p) || (isa<GetChStmt>(p) && !p->type.gen) || isa<MatrixOfGlobalPtrStmt>(p);
}

// A local variable: an alloca, or an element of a tensor alloca.
bool is_local_pointer(const Stmt* p) {
  if (const auto* m = dyn_cast<MatrixPtrStmt>(p)) return m->origin() && is_local_pointer(m->origin());
  return isa<AllocaStmt>(p);
}

// `t` with its element kind replaced by `k` (a tensor stays a tensor of the same shape).
DataType with_kind(DataType t, ScalarKind k) { return DataType::tensor_of(k, t.tensor); }

struct Rules {
  const Kernel& k;
  TypeRuleResult ok(DataType t) const { return {t, ""}; }
  TypeRuleResult fail(DataType t, std::string msg) const { return {t, std::move(msg)}; }

  // Checks that operand `s` is a value (a scalar or a tensor); returns an error message or "".
  static std::string need_value(const Stmt* s, const char* what) {
    if (!s) return fmt::format("{} refers to an erased statement", what);
    if (!s->type.is_value()) return fmt::format("{} {} is not a value (type '{}')", what, ref(s), to_string(s->type));
    return "";
  }
  static std::string need_scalar(const Stmt* s, const char* what) {
    if (!s) return fmt::format("{} refers to an erased statement", what);
    if (!s->type.is_scalar_value())
      return fmt::format("{} {} is not a scalar value (type '{}')", what, ref(s), to_string(s->type));
    return "";
  }
  static std::string need_integral(const Stmt* s, const char* what) {
    if (auto e = need_scalar(s, what); !e.empty()) return e;
    if (!is_integral(s->type.scalar))
      return fmt::format("{} {} must be an integer, not {}", what, ref(s), to_string(s->type));
    return "";
  }
  static std::string need_pointer(const Stmt* s, const char* what) {
    if (!s) return fmt::format("{} refers to an erased statement", what);
    if (!s->type.pointer) return fmt::format("{} {} is not a pointer (type '{}')", what, ref(s), to_string(s->type));
    return "";
  }
  static std::string need_same(const Stmt* a, const Stmt* b, const char* what) {
    if (a->type.scalar != b->type.scalar || a->type.tensor != b->type.tensor)
      return fmt::format("{} types differ: {} is {}, {} is {}", what, ref(a), to_string(a->type), ref(b),
                         to_string(b->type));
    return "";
  }

  TypeRuleResult operator()(const ConstStmt& s) const { return ok(DataType::of(s.value.kind())); }
  TypeRuleResult operator()(const ArgLoadStmt& s) const {
    if (const ArgDecl* a = k.find_arg(s.arg_index)) {
      // The reference types the base of an ndarray of tensors as the element type itself.
      if (a->ndarray && a->tensor != 0 && s.type == a->element_type()) return ok(s.type);
      return ok(a->ndarray ? a->element_type().as_pointer() : a->element_type());
    }
    for (const ArgDecl& a : k.args)
      if (a.element_of == s.arg_index)
        return fail(s.type, fmt::format("argument {} is passed as its elements (argument {} is element {})",
                                        s.arg_index, a.index, a.element));
    if (!s.type.known())
      return fail(s.type, fmt::format("type of argument {} is unknown: add `arg {} : TYPE` to the header", s.arg_index,
                                      s.arg_index));
    return ok(s.type);
  }
  TypeRuleResult operator()(const AllocaStmt& s) const {
    if (!s.type.pointer || !s.type.known()) return fail(s.type, "alloca must have a pointer type such as *f32");
    return ok(s.type);
  }
  TypeRuleResult operator()(const LocalLoadStmt& s) const {
    if (auto e = need_pointer(s.src(), "local load source"); !e.empty()) return fail({}, e);
    if (!is_local_pointer(s.src()))
      return fail(s.src()->type.pointee(), fmt::format("local load source {} is not an alloca", ref(s.src())));
    return ok(s.src()->type.pointee());
  }
  TypeRuleResult operator()(const LocalStoreStmt& s) const {
    if (auto e = need_pointer(s.dest(), "local store destination"); !e.empty()) return fail({}, e);
    if (auto e = need_value(s.val(), "local store value"); !e.empty()) return fail({}, e);
    if (!is_local_pointer(s.dest()))
      return fail(s.val()->type, fmt::format("local store destination {} is not an alloca", ref(s.dest())));
    if (s.dest()->type.pointee() != s.val()->type)
      return fail(s.val()->type, fmt::format("local store of {} value {} into {} alloca {}", to_string(s.val()->type),
                                             ref(s.val()), to_string(s.dest()->type), ref(s.dest())));
    return ok(s.val()->type);
  }
  TypeRuleResult operator()(const GlobalPtrStmt& s) const {
    if (s.field < 0 || static_cast<size_t>(s.field) >= k.fields().size())
      return fail({}, "global ptr names an unknown field");
    const Field& f = k.field(s.field);
    DataType t = f.cell_type().as_pointer();
    // A field of quant cells: the pointer's hint carries the quant type, the field its compute type.
    if (s.type.quant != 0 && s.type == DataType{f.dtype, true, false, s.type.quant}) t = s.type;
    for (const Stmt* i : s.indices())
      if (auto e = need_integral(i, "global ptr index"); !e.empty()) return fail(t, e);
    if (f.shape && f.shape->size() != s.indices().size())
      return fail(t, fmt::format("field '{}' has {} dimension(s) but is indexed with {}", f.name, f.shape->size(),
                                 s.indices().size()));
    return ok(t);
  }
  TypeRuleResult operator()(const ExternalPtrStmt& s) const {
    if (!s.base()) return fail({}, "external_ptr base refers to an erased statement");
    if (!isa<ArgLoadStmt>(s.base()))
      return fail(s.base()->type, fmt::format("external_ptr base {} is not an argload", ref(s.base())));
    // An ndarray of tensors: the reference types the base as the element, not a pointer.
    if (!s.base()->type.pointer && !s.base()->type.is_tensor())
      return fail({}, fmt::format("external_ptr base {} is not a pointer (type '{}')", ref(s.base()),
                                  to_string(s.base()->type)));
    for (const Stmt* i : s.indices())
      if (auto e = need_integral(i, "external_ptr index"); !e.empty()) return fail(s.base()->type, e);
    const auto* arg = k.find_arg(dyn_cast<ArgLoadStmt>(s.base())->arg_index);
    if (arg && arg->by_value_tensor())
      return fail(
          s.base()->type,
          fmt::format("external_ptr base: argument {} is a tensor passed by value, not an ndarray", arg->index));
    if (arg && arg->ndarray && static_cast<size_t>(arg->ndim) != s.indices().size())
      return fail(s.base()->type, fmt::format("ndarray argument {} has {} dimension(s) but is indexed with {}",
                                              arg->index, arg->ndim, s.indices().size()));
    return ok(s.base()->type.as_pointer());
  }
  TypeRuleResult operator()(const GlobalLoadStmt& s) const {
    if (auto e = need_pointer(s.src(), "global load source"); !e.empty()) return fail({}, e);
    if (!is_global_pointer(s.src()))
      return fail(s.src()->type.pointee(),
                  fmt::format("global load source {} is not a global or external pointer", ref(s.src())));
    return ok(s.src()->type.pointee());
  }
  TypeRuleResult operator()(const GlobalStoreStmt& s) const {
    if (auto e = need_pointer(s.dest(), "global store destination"); !e.empty()) return fail({}, e);
    if (auto e = need_value(s.val(), "global store value"); !e.empty()) return fail({}, e);
    if (!is_global_pointer(s.dest()))
      return fail({}, fmt::format("global store destination {} is not a global or external pointer", ref(s.dest())));
    if (s.dest()->type.pointee() != s.val()->type.pointee())
      return fail({}, fmt::format("global store of {} value {} through {} pointer {}", to_string(s.val()->type),
                                  ref(s.val()), to_string(s.dest()->type), ref(s.dest())));
    return ok({});
  }
  TypeRuleResult operator()(const AtomicOpStmt& s) const {
    if (auto e = need_pointer(s.dest(), "atomic destination"); !e.empty()) return fail({}, e);
    if (auto e = need_value(s.val(), "atomic value"); !e.empty()) return fail(s.dest()->type.pointee(), e);
    DataType t = s.dest()->type.pointee();
    if (t.scalar != s.val()->type.scalar || t.tensor != s.val()->type.tensor)
      return fail(t, fmt::format("atomic {} of {} value {} into {} pointer {}", op_name(s.op), to_string(s.val()->type),
                                 ref(s.val()), to_string(s.dest()->type), ref(s.dest())));
    bool bitwise = s.op == AtomicOp::bit_and || s.op == AtomicOp::bit_or || s.op == AtomicOp::bit_xor;
    if (bitwise && !is_integral(t.scalar))
      return fail(t, fmt::format("atomic {} needs an integer type, not {}", op_name(s.op), to_string(t)));
    return ok(t);
  }
  TypeRuleResult operator()(const UnaryOpStmt& s) const {
    if (auto e = need_value(s.x(), "operand"); !e.empty()) return fail(s.type, e);
    ScalarKind x = s.x()->type.scalar;
    if (is_cast(s.op)) {
      if (!s.type.is_value()) return fail(s.type, fmt::format("{} needs a target type", op_name(s.op)));
      if (s.type.tensor != s.x()->type.tensor)
        return fail(s.type, fmt::format("{} to {} changes the tensor shape of {} ({})", op_name(s.op),
                                        to_string(s.type), ref(s.x()), to_string(s.x()->type)));
      if (s.op == UnaryOp::cast_bits && bit_width(x) != bit_width(s.type.scalar))
        return fail(s.type, fmt::format("reinterpret_cast_bits between {} and {} changes the width", scalar_name(x),
                                        to_string(s.type)));
      return ok(s.type);
    }
    if (requires_float(s.op) && !is_float(x))
      return fail(s.x()->type, fmt::format("{} needs a floating-point operand, {} is {}", op_name(s.op), ref(s.x()),
                                           scalar_name(x)));
    if (requires_integral(s.op) && !is_integral(x))
      return fail(s.x()->type,
                  fmt::format("{} needs an integer operand, {} is {}", op_name(s.op), ref(s.x()), scalar_name(x)));
    if (s.op == UnaryOp::logic_not) {
      if (s.type.is_value() && is_integral(s.type.scalar) && s.type.tensor == s.x()->type.tensor) return ok(s.type);
      return ok(with_kind(s.x()->type, is_integral(x) ? x : ScalarKind::i32));
    }
    return ok(s.x()->type);
  }
  TypeRuleResult operator()(const BinaryOpStmt& s) const {
    if (auto e = need_value(s.lhs(), "left operand"); !e.empty()) return fail(s.type, e);
    if (auto e = need_value(s.rhs(), "right operand"); !e.empty()) return fail(s.type, e);
    ScalarKind l = s.lhs()->type.scalar;
    bool shift = s.op == BinaryOp::bit_shl || s.op == BinaryOp::bit_shr || s.op == BinaryOp::bit_sar;
    if (requires_integral(s.op) && (!is_integral(l) || !is_integral(s.rhs()->type.scalar)))
      return fail(s.lhs()->type, fmt::format("{} needs integer operands, got {} and {}", op_name(s.op), scalar_name(l),
                                             scalar_name(s.rhs()->type.scalar)));
    // pow(float, integer): the reference's type checking keeps the base's type.
    bool int_power = s.op == BinaryOp::pow && is_float(l) && is_integral(s.rhs()->type.scalar);
    if (s.lhs()->type.tensor != s.rhs()->type.tensor)
      return fail(s.lhs()->type, need_same(s.lhs(), s.rhs(), fmt::format("{} operand", op_name(s.op)).c_str()));
    if (!shift && !int_power && l != s.rhs()->type.scalar)  // the message is made only when it is needed
      return fail(s.type, need_same(s.lhs(), s.rhs(), fmt::format("{} operand", op_name(s.op)).c_str()));
    if (is_comparison(s.op)) {
      // Quadrants types comparisons as u1; older Taichi dumps as i32.
      if (s.type.is_value() && is_integral(s.type.scalar) && s.type.tensor == s.lhs()->type.tensor) return ok(s.type);
      return ok(with_kind(s.lhs()->type, ScalarKind::u1));
    }
    if ((s.op == BinaryOp::logical_and || s.op == BinaryOp::logical_or) && !is_integral(l))
      return fail(s.lhs()->type, fmt::format("{} needs integer operands", op_name(s.op)));
    return ok(s.lhs()->type);
  }
  TypeRuleResult operator()(const TernaryOpStmt& s) const {
    if (auto e = need_value(s.cond(), "select condition"); !e.empty()) return fail(s.type, e);
    if (!is_integral(s.cond()->type.scalar))
      return fail(s.type, fmt::format("select condition {} must be an integer, not {}", ref(s.cond()),
                                      to_string(s.cond()->type)));
    if (auto e = need_value(s.a(), "select operand"); !e.empty()) return fail(s.type, e);
    if (auto e = need_value(s.b(), "select operand"); !e.empty()) return fail(s.type, e);
    if (auto e = need_same(s.a(), s.b(), "select operand"); !e.empty()) return fail(s.a()->type, e);
    if (s.cond()->type.is_tensor() && s.cond()->type.tensor != s.a()->type.tensor)
      return fail(s.a()->type, fmt::format("select condition {} ({}) and operands ({}) differ in shape", ref(s.cond()),
                                           to_string(s.cond()->type), to_string(s.a()->type)));
    return ok(s.a()->type);
  }
  TypeRuleResult operator()(const IfStmt& s) const {
    if (auto e = need_integral(s.cond(), "if condition"); !e.empty()) return fail({}, e);
    return ok({});
  }
  TypeRuleResult operator()(const RangeForStmt& s) const {
    if (auto e = need_integral(s.begin(), "range begin"); !e.empty()) return fail({}, e);
    if (auto e = need_integral(s.end(), "range end"); !e.empty()) return fail({}, e);
    if (auto e = need_same(s.begin(), s.end(), "range bound"); !e.empty()) return fail({}, e);
    return ok({});
  }
  TypeRuleResult operator()(const StructForStmt&) const { return ok({}); }
  TypeRuleResult operator()(const LoopIndexStmt& s) const {
    if (!s.loop()) return fail(DataType::of(ScalarKind::i32), "loop index refers to an erased loop");
    const auto* task = dyn_cast<OffloadedStmt>(s.loop());
    const bool mesh = isa<MeshForStmt>(s.loop()) || (task && task->task == TaskType::mesh_for);
    if (!isa<RangeForStmt>(s.loop()) && !isa<StructForStmt>(s.loop()) && !(task && task->is_loop_task()) && !mesh)
      return fail(DataType::of(ScalarKind::i32),
                  fmt::format("loop index refers to {}, which is not a for loop", ref(s.loop())));
    std::optional<Shape> space_shape;
    const std::string* space = nullptr;
    if (const auto* sf = dyn_cast<StructForStmt>(s.loop())) space = &sf->space;
    if (task && task->task == TaskType::struct_for) space = &task->snode;
    if (space) {
      if (const IndexSpace* sp = k.find_space(*space))
        space_shape = sp->shape;
      else if (auto f = k.find_field(*space))
        space_shape = k.field(*f).shape;
    }
    bool ranged = isa<RangeForStmt>(s.loop()) || (task && task->task == TaskType::range_for) || mesh;
    if (s.axis < 0 || (ranged && s.axis != 0) || (space_shape && static_cast<size_t>(s.axis) >= space_shape->size()))
      return fail(DataType::of(ScalarKind::i32),
                  fmt::format("loop index axis {} is out of range for loop {}", s.axis, ref(s.loop())));
    if (s.type.is_value() && is_integral(s.type.scalar)) return ok(s.type);
    return ok(DataType::of(ScalarKind::i32));
  }
  TypeRuleResult operator()(const WhileStmt&) const { return ok({}); }
  TypeRuleResult operator()(const WhileControlStmt& s) const {
    if (s.has_mask() && !s.mask()) return fail({}, "while control mask refers to an erased statement");
    if (s.has_mask() && (!isa<AllocaStmt>(s.mask()) || !is_integral(s.mask()->type.scalar)))
      return fail({}, fmt::format("while control mask {} must be an integer alloca", ref(s.mask())));
    if (auto e = need_integral(s.cond(), "while control condition"); !e.empty()) return fail({}, e);
    return ok({});
  }
  TypeRuleResult operator()(const ContinueStmt&) const { return ok({}); }
  TypeRuleResult operator()(const AdStackAllocaStmt& s) const {
    if (!s.type.is_scalar_value()) return fail(s.type, "stack alloc needs a scalar element type");
    if (s.max_size < 0) return fail(s.type, "stack alloc max_size is negative");
    return ok(s.type);
  }
  template <class T>
  TypeRuleResult stack_op(const T& s) const {
    if (!s.stack()) return fail(s.type, "stack operand refers to an erased statement");
    if (!isa<AdStackAllocaStmt>(s.stack())) return fail(s.type, fmt::format("{} is not a stack alloc", ref(s.stack())));
    return ok(s.stack()->type);
  }
  template <class T>
  TypeRuleResult stack_op_with_value(const T& s) const {
    auto r = stack_op(s);
    if (!r.error.empty()) return r;
    if (auto e = need_scalar(s.val(), "stack value"); !e.empty()) return fail(r.type, e);
    if (s.val()->type.scalar != s.stack()->type.scalar)
      return fail(r.type, fmt::format("{} value {} does not match {} stack {}", to_string(s.val()->type), ref(s.val()),
                                      to_string(s.stack()->type), ref(s.stack())));
    return r;
  }
  TypeRuleResult operator()(const AdStackPushStmt& s) const { return stack_op_with_value(s); }
  TypeRuleResult operator()(const AdStackPopStmt& s) const { return stack_op(s); }
  TypeRuleResult operator()(const AdStackLoadTopStmt& s) const { return stack_op(s); }
  TypeRuleResult operator()(const AdStackLoadTopAdjStmt& s) const {
    auto r = stack_op(s);
    if (r.error.empty() && !is_float(r.type.scalar)) r.error = "stack load top adj on a non-real stack";
    return r;
  }
  TypeRuleResult operator()(const AdStackAccAdjointStmt& s) const {
    auto r = stack_op_with_value(s);
    if (r.error.empty() && !is_float(r.type.scalar)) r.error = "stack acc adj on a non-real stack";
    return r;
  }
  TypeRuleResult operator()(const PrintStmt& s) const {
    for (const Stmt* op : s.operands())
      if (auto e = need_scalar(op, "print argument"); !e.empty()) return fail({}, e);
    return ok({});
  }
  TypeRuleResult operator()(const AssertStmt& s) const {
    if (auto e = need_integral(s.cond(), "assert condition"); !e.empty()) return fail({}, e);
    return ok({});
  }
  TypeRuleResult operator()(const OffloadedStmt& s) const {
    for (const Stmt* b : s.operands())
      if (auto e = need_integral(b, "range_for bound"); !e.empty()) return fail({}, e);
    return ok({});
  }
  TypeRuleResult operator()(const GlobalTemporaryStmt& s) const {
    if (!s.type.pointer || s.type.gen || !s.type.known())
      return fail(s.type, "a global temporary needs a pointer type hint such as <*i32>");
    if (s.offset < 0) return fail(s.type, "a global temporary's offset is negative");
    return ok(s.type);
  }
  TypeRuleResult operator()(const ThreadLocalPtrStmt& s) const {
    if (!s.type.pointer || s.type.gen || !s.type.known())
      return fail(s.type, "a thread local ptr needs a pointer type hint such as <*i32>");
    return ok(s.type);
  }
  TypeRuleResult operator()(const GetRootStmt&) const { return ok(DataType::gen_pointer()); }
  static std::string need_gen(const Stmt* p, const char* what) {
    if (!p) return fmt::format("{} refers to an erased statement", what);
    if (!p->type.gen) return fmt::format("{} {} is not an SNode cell pointer (<*gen>)", what, ref(p));
    return "";
  }
  TypeRuleResult operator()(const SNodeLookupStmt& s) const {
    if (auto e = need_gen(s.parent_ptr(), "lookup parent"); !e.empty()) return fail(DataType::gen_pointer(), e);
    if (auto e = need_integral(s.index(), "lookup index"); !e.empty()) return fail(DataType::gen_pointer(), e);
    return ok(DataType::gen_pointer());
  }
  TypeRuleResult operator()(const GetChStmt& s) const {
    if (auto e = need_gen(s.input(), "get child input"); !e.empty()) return fail(s.type, e);
    if (!s.type.pointer) return fail(s.type, "get child needs a pointer type hint (<*gen> or <*f32>)");
    return ok(s.type);
  }
  TypeRuleResult operator()(const LinearizeStmt& s) const {
    for (const Stmt* i : s.operands())
      if (auto e = need_integral(i, "linearized index"); !e.empty()) return fail(DataType::of(ScalarKind::i32), e);
    if (s.strides.size() != s.num_operands())
      return fail(DataType::of(ScalarKind::i32),
                  fmt::format("linearized has {} index(es) but {} stride(s)", s.num_operands(), s.strides.size()));
    for (int64_t st : s.strides)
      if (st <= 0) return fail(DataType::of(ScalarKind::i32), "linearized strides must be positive");
    return ok(DataType::of(ScalarKind::i32));
  }
  TypeRuleResult operator()(const IntegerOffsetStmt& s) const {
    if (auto e = need_integral(s.input(), "offset input"); !e.empty()) return fail(s.type, e);
    return ok(s.input()->type);
  }
  TypeRuleResult operator()(const BitExtractStmt& s) const {
    if (auto e = need_integral(s.input(), "bit_extract input"); !e.empty()) return fail(s.type, e);
    if (s.bit_begin < 0 || s.bit_end <= s.bit_begin || s.bit_end > bit_width(s.input()->type.scalar))
      return fail(s.type, fmt::format("bit range [{}, {}) does not fit {}", s.bit_begin, s.bit_end,
                                      to_string(s.input()->type)));
    if (s.type.is_value() && is_integral(s.type.scalar)) return ok(s.type);
    return ok(s.input()->type);
  }
  TypeRuleResult operator()(const LoopLinearIndexStmt& s) const {
    const auto* task = dyn_cast<OffloadedStmt>(s.loop());
    const bool mesh = isa<MeshForStmt>(s.loop()) || (task && task->task == TaskType::mesh_for);
    if (!isa<RangeForStmt>(s.loop()) && !isa<StructForStmt>(s.loop()) && !(task && task->is_loop_task()) && !mesh)
      return fail(DataType::of(ScalarKind::i32),
                  fmt::format("loop index refers to {}, which is not a for loop", ref(s.loop())));
    return ok(DataType::of(ScalarKind::i32));
  }
  TypeRuleResult operator()(const LoopUniqueStmt& s) const {
    if (auto e = need_value(s.input(), "loop_unique input"); !e.empty()) return fail(s.type, e);
    return ok(s.input()->type);
  }
  TypeRuleResult operator()(const RangeAssumptionStmt& s) const {
    if (auto e = need_integral(s.input(), "assume_in_range input"); !e.empty()) return fail(s.type, e);
    if (auto e = need_integral(s.base(), "assume_in_range base"); !e.empty()) return fail(s.type, e);
    if (s.low >= s.high)
      return fail(s.input()->type, fmt::format("assume_in_range's range [{}, {}) is empty", s.low, s.high));
    return ok(s.input()->type);
  }
  TypeRuleResult operator()(const DecorationStmt& s) const {
    if (!s.target()) return fail({}, "decorate refers to an erased statement");
    return ok({});
  }
  TypeRuleResult operator()(const ExternalTensorShapeAlongAxisStmt&) const { return ok(DataType::of(ScalarKind::i32)); }
  TypeRuleResult operator()(const ExternalTensorBasePtrStmt& s) const {
    if (!s.type.pointer || s.type.gen)
      return fail(s.type, "an external_tensor_base_ptr needs a pointer type such as <*f32>");
    const ArgDecl* a = s.arg_id.size() == 1 ? k.find_arg(s.arg_id[0]) : nullptr;
    if (a && !a->ndarray)
      return fail(s.type, fmt::format("external_tensor_base_ptr reads argument {}, which is not an ndarray", a->index));
    return ok(s.type);
  }
  TypeRuleResult operator()(const MeshForStmt&) const { return ok({}); }
  // Mesh indices are integers; the reference types a relation access u16 and the others i32, and
  // a dump's integer hint is kept.
  TypeRuleResult operator()(const MeshRelationAccessStmt& s) const {
    DataType t = s.type.is_scalar_value() && is_integral(s.type.scalar) ? s.type : DataType::of(ScalarKind::u16);
    if (auto e = need_integral(s.element(), "mesh relation element"); !e.empty()) return fail(t, e);
    if (!s.is_size())
      if (auto e = need_integral(s.neighbor(), "mesh relation neighbor index"); !e.empty()) return fail(t, e);
    return ok(t);
  }
  TypeRuleResult operator()(const MeshIndexConversionStmt& s) const {
    DataType t = s.type.is_scalar_value() && is_integral(s.type.scalar) ? s.type : DataType::of(ScalarKind::i32);
    if (auto e = need_integral(s.index(), "mesh index conversion input"); !e.empty()) return fail(t, e);
    return ok(t);
  }
  TypeRuleResult operator()(const MeshPatchIndexStmt& s) const {
    return ok(s.type.is_scalar_value() && is_integral(s.type.scalar) ? s.type : DataType::of(ScalarKind::i32));
  }
  TypeRuleResult operator()(const SNodeOpStmt& s) const {
    // The reference types is_active u1 and get_addr u64; older dumps print i32 for every op.
    DataType fallback = DataType::of(s.op == "is_active"  ? ScalarKind::u1
                                     : s.op == "get_addr" ? ScalarKind::u64
                                                          : ScalarKind::i32);
    if (s.op == "allocate") fallback = DataType::gen_pointer();
    DataType t = s.type.known() ? s.type : fallback;
    if (s.has_ptr && !s.ptr()) return fail(t, "SNode op pointer refers to an erased statement");
    if (s.ptr() && !s.ptr()->type.pointer)
      return fail(
          t, fmt::format("SNode op pointer {} is not a pointer (type '{}')", ref(s.ptr()), to_string(s.ptr()->type)));
    if (s.val())
      if (auto e = need_scalar(s.val(), "SNode op value"); !e.empty()) return fail(t, e);
    return ok(t);
  }
  TypeRuleResult operator()(const SNodePtrStmt& s) const {
    DataType t = DataType::gen_pointer();
    if (s.type.known() && s.type != t)
      return fail(
          t, fmt::format("a global ptr to the SNode '{}' has type '<*gen>', not '{}'", s.snode, to_string(s.type)));
    for (const Stmt* i : s.indices())
      if (auto e = need_integral(i, "global ptr index"); !e.empty()) return fail(t, e);
    return ok(t);
  }
  TypeRuleResult operator()(const RandStmt& s) const {
    if (!s.type.is_scalar_value()) return fail(s.type, "rand needs a scalar type such as <f32>");
    return ok(s.type);
  }
  TypeRuleResult operator()(const InternalFuncStmt& s) const {
    for (const Stmt* a : s.operands())
      if (auto e = need_scalar(a, "internal call argument"); !e.empty()) return fail(s.type, e);
    return ok(s.type.known() ? s.type : DataType::of(ScalarKind::i32));  // the reference's default: i32
  }
  TypeRuleResult operator()(const BlockCornerIndexStmt& s) const {
    const auto* task = dyn_cast<OffloadedStmt>(s.loop());
    if (!isa<StructForStmt>(s.loop()) && !(task && task->task == TaskType::struct_for))
      return fail(DataType::of(ScalarKind::i32),
                  fmt::format("block corner index refers to {}, which is not a struct for", ref(s.loop())));
    return ok(DataType::of(ScalarKind::i32));
  }
  TypeRuleResult operator()(const BlockLocalPtrStmt& s) const {
    if (auto e = need_integral(s.offset(), "block local ptr offset"); !e.empty()) return fail(s.type, e);
    if (!s.type.pointer || s.type.gen) return fail(s.type, "a block local ptr needs a pointer type such as <*f32>");
    return ok(s.type);
  }
  TypeRuleResult operator()(const ReferenceStmt& s) const {
    if (!s.var() || !s.var()->type.known()) return fail(s.type, "ref of a statement without a type");
    if (s.var()->type.gen) return fail(s.type, fmt::format("ref of the SNode cell pointer {}", ref(s.var())));
    return ok(s.var()->type.as_pointer());
  }
  TypeRuleResult operator()(const FuncCallStmt& s) const {
    for (const Stmt* a : s.operands())
      if (!a) return fail(s.type, "call argument refers to an erased statement");
    return ok(s.type);
  }
  TypeRuleResult operator()(const BitStructStoreStmt& s) const {
    if (auto e = need_pointer(s.ptr(), "bit_struct_store pointer"); !e.empty()) return fail({}, e);
    for (const Stmt* v : s.values())
      if (auto e = need_scalar(v, "bit_struct_store value"); !e.empty()) return fail({}, e);
    if (s.ch_ids.size() != s.values().size()) return fail({}, "bit_struct_store needs one value per channel id");
    return ok({});
  }
  TypeRuleResult operator()(const MatrixInitStmt& s) const {
    for (const Stmt* v : s.operands())
      if (auto e = need_scalar(v, "tensor element"); !e.empty()) return fail(s.type, e);
    if (!s.type.is_value() || !s.type.is_tensor())
      return fail(s.type, "a tensor value needs a tensor type such as <[Tensor (2) f32]>");
    if (tensor_elements(s.type) != static_cast<int64_t>(s.num_operands()))
      return fail(s.type, fmt::format("{} has {} elements but is given {}", to_string(s.type), tensor_elements(s.type),
                                      s.num_operands()));
    return ok(s.type);
  }
  TypeRuleResult operator()(const GetElementStmt& s) const {
    if (auto e = need_value(s.src(), "get_element source"); !e.empty()) return fail(s.type, e);
    DataType t = s.src()->type;
    if (!t.is_tensor()) return fail(t, fmt::format("get_element source {} is not a tensor", ref(s.src())));
    if (!element_index(t, s.index))
      return fail(t.element(),
                  fmt::format("get_element index ({}) is outside {}", fmt::join(s.index, ", "), to_string(t)));
    return ok(t.element());
  }
  TypeRuleResult operator()(const MatrixPtrStmt& s) const {
    if (auto e = need_pointer(s.origin(), "shift ptr origin"); !e.empty()) return fail(s.type, e);
    if (auto e = need_integral(s.offset(), "shift ptr offset"); !e.empty()) return fail(s.type, e);
    if (!s.origin()->type.is_tensor())
      return fail(s.type, fmt::format("shift ptr origin {} does not point to a tensor (type '{}')", ref(s.origin()),
                                      to_string(s.origin()->type)));
    return ok(DataType::pointer_to(s.origin()->type.scalar));
  }
  TypeRuleResult operator()(const MatrixOfGlobalPtrStmt& s) const {
    ScalarKind kind = ScalarKind::unknown;
    for (FieldId f : s.fields) {
      if (f < 0 || static_cast<size_t>(f) >= k.fields().size())
        return fail(s.type, "matrix of global ptr names an unknown field");
      const Field& fd = k.field(f);
      if (fd.tensor != 0 || (kind != ScalarKind::unknown && fd.dtype != kind))
        return fail(s.type,
                    fmt::format("matrix of global ptr mixes fields of different or tensor types ('{}')", fd.name));
      kind = fd.dtype;
      if (fd.shape && fd.shape->size() != s.num_operands())
        return fail(s.type, fmt::format("field '{}' has {} dimension(s) but is indexed with {}", fd.name,
                                        fd.shape->size(), s.num_operands()));
    }
    for (const Stmt* i : s.operands())
      if (auto e = need_integral(i, "matrix of global ptr index"); !e.empty()) return fail(s.type, e);
    return pointer_tensor(s, kind, s.fields.size());
  }
  TypeRuleResult operator()(const MatrixOfMatrixPtrStmt& s) const {
    ScalarKind kind = ScalarKind::unknown;
    for (const Stmt* p : s.operands()) {
      if (auto e = need_pointer(p, "matrix of matrix ptr element"); !e.empty()) return fail(s.type, e);
      if (p->type.is_tensor() || p->type.gen || (kind != ScalarKind::unknown && p->type.scalar != kind))
        return fail(s.type, fmt::format("matrix of matrix ptr element {} is not a pointer to {}", ref(p),
                                        kind == ScalarKind::unknown ? "a scalar" : scalar_name(kind)));
      kind = p->type.scalar;
    }
    return pointer_tensor(s, kind, s.num_operands());
  }
  // A pointer to a tensor of `n` elements of `kind`: the hint's shape, else (n).
  TypeRuleResult pointer_tensor(const Stmt& s, ScalarKind kind, size_t n) const {
    if (s.type.pointer && s.type.is_tensor()) {
      if (s.type.scalar != kind || tensor_elements(s.type) != static_cast<int64_t>(n))
        return fail(s.type,
                    fmt::format("<{}> does not describe {} pointer(s) to {}", to_string(s.type), n, scalar_name(kind)));
      return ok(s.type);
    }
    int extent = static_cast<int>(n);
    auto id = intern_tensor_shape(std::span<const int>(&extent, 1));
    if (!id) return fail(s.type, "too many elements for a tensor");
    return ok(DataType::tensor_of(kind, *id, true));
  }
  TypeRuleResult operator()(const ReturnStmt& s) const {
    for (const Stmt* v : s.operands())
      if (auto e = need_value(v, "return value"); !e.empty()) return fail({}, e);
    return ok({});
  }
};

}  // namespace

TypeRuleResult type_rule(const Stmt& s, const Kernel& k) { return visit(s, Rules{k}); }

}  // namespace pb::ir
