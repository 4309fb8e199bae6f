#include "runtime/interp/program.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/quant.h"
#include "ir/tensor_type.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

namespace pb::runtime::detail {
namespace {

class Compiler {
 public:
  Compiler(const ir::Kernel& k, const State& st, bool f64) : k_(k), st_(st), f64_(f64) {}

  Program run() {
    uint32_t next = 0;
    ir::walk(k_.root(), [&](ir::Stmt& s) {
      slots_[&s] = next;
      next += s.type.is_value() ? static_cast<uint32_t>(ir::tensor_elements(s.type)) : 1;
    });
    p_.num_slots = next;
    compile_block(k_.root());
    return std::move(p_);
  }

 private:
  int32_t compile_block(const ir::Block& b) {
    auto index = static_cast<int32_t>(p_.blocks.size());
    p_.blocks.emplace_back();
    std::vector<Op> ops;
    ops.reserve(b.size());
    for (const ir::Stmt* s : b) ops.push_back(compile_stmt(*s));
    p_.blocks[static_cast<size_t>(index)] = std::move(ops);
    return index;
  }

  Op compile_stmt(const ir::Stmt& s) {
    check_not_mesh(s);
    Op op;
    op.stmt = &s;
    op.slot = slots_.at(&s);
    op.kind = work_kind(s.type.scalar, f64_);
    if (s.type.is_value()) op.lanes = static_cast<uint32_t>(ir::tensor_elements(s.type));
    op.tensor = s.type.is_tensor();
    if (ir::isa<ir::GlobalPtrStmt>(&s) || ir::isa<ir::ExternalPtrStmt>(&s))
      op.cell_rank = static_cast<uint8_t>(s.type.is_tensor() ? ir::tensor_shape(s.type.tensor).size() : 0);
    for (const ir::Stmt* o : s.operands()) {
      op.tensor = op.tensor || (o && o->type.is_tensor());
      auto it = slots_.find(o);
      PB_ASSERT(it != slots_.end(), fmt::format("an operand of `{}` is not in the kernel", ir::print_stmt(s, k_)));
      op.operands.push_back(it->second);
    }
    if (op.cell_rank > 0 || ir::isa<ir::ExternalPtrStmt>(&s)) op.tensor = false;  // addresses: interpreter.cpp
    ir::visit(s, [&](const auto& x) { resolve(x, op); });
    check_quant(s, s.type);
    if (ir::dyn_cast<ir::GlobalStoreStmt>(&s) || ir::dyn_cast<ir::AtomicOpStmt>(&s)) {
      ir::DataType dest = s.operand(0)->type;
      if (dest.quant != 0) {
        const ir::QuantType& q = ir::quant_type(dest.quant);
        op.quant_bits = q.is_signed ? -q.bits : q.bits;
      }
    }
    if (const auto* t = ir::dyn_cast<ir::OffloadedStmt>(&s)) {
      if (t->bls_prologue || t->bls_epilogue)
        throw UserError(fmt::format("`{}` has block-local storage blocks, which the interpreter does not run",
                                    ir::print_stmt(s, k_)),
                        "dump the kernel with block-local storage off (no bls prologue/epilogue)");
      if (t->tls_prologue) op.prologue = compile_block(*t->tls_prologue);
      if (t->body) op.body = compile_block(*t->body);
      if (t->tls_epilogue) op.epilogue = compile_block(*t->tls_epilogue);
      return op;
    }
    auto blocks = s.blocks();
    if (!blocks.empty() && blocks[0]) op.body = compile_block(*blocks[0]);
    if (blocks.size() > 1 && blocks[1]) op.else_body = compile_block(*blocks[1]);
    return op;
  }

  // A mesh kernel is refused as a whole, at its mesh for or mesh_for task (mesh statements sit
  // inside one): there is no mesh to run it on.
  void check_not_mesh(const ir::Stmt& s) const {
    const auto* t = ir::dyn_cast<ir::OffloadedStmt>(&s);
    if (!ir::is_mesh(s.kind()) && !(t && t->task == ir::TaskType::mesh_for)) return;
    throw UserError(fmt::format("`{}` is a mesh statement: passbench reads, prints and verifies mesh kernels but does "
                                "not run them (it has no mesh model)",
                                ir::print_stmt(s, k_)),
                    ir::kMeshKernelRemedy);
  }
  // Quant integers run (a store keeps the low bits); the other quant types are refused.
  void check_quant(const ir::Stmt& s, ir::DataType t) const {
    if (t.quant == 0 || ir::quant_type(t.quant).form == ir::QuantType::Form::integer) return;
    throw UserError(fmt::format("`{}` uses the quant type {}, which passbench reads, prints and verifies but does "
                                "not run (only quant integers such as qi4 run)",
                                ir::print_stmt(s, k_), ir::quant_type(t.quant).spelling),
                    "dump the kernel with ordinary field types (f32, i32, ...) to run it");
  }
  void resolve(const ir::ConstStmt& s, Op& op) {
    op.imm = s.value;
    // Widened exactly: the constant's own f32 (or f16) value, as ir::widen_f32_to_f64 keeps it.
    if (f64_ && (s.value.kind() == ir::ScalarKind::f32 || s.value.kind() == ir::ScalarKind::f16))
      op.imm = s.value.cast_to(ir::ScalarKind::f64);
  }
  void resolve(const ir::RangeForStmt& s, Op& op) {
    op.aux = static_cast<int64_t>(p_.num_coords++);
    loops_[&s] = {op.aux, 1};
  }
  void resolve(const ir::StructForStmt& s, Op& op) {
    op.shape = space_shape(k_, st_, s.space);
    op.aux = static_cast<int64_t>(p_.num_coords);
    p_.num_coords += op.shape.size();
    loops_[&s] = {op.aux, op.shape.size()};
  }
  void resolve(const ir::LoopIndexStmt& s, Op& op) {
    auto it = loops_.find(s.loop());
    PB_ASSERT(it != loops_.end(), fmt::format("`{}` refers to a loop that does not enclose it", ir::print_stmt(s, k_)));
    auto [first, rank] = it->second;
    if (s.axis < 0 || static_cast<size_t>(s.axis) >= rank) {
      const auto* sf = ir::dyn_cast<ir::StructForStmt>(s.loop());
      throw UserError(fmt::format("`{}` reads axis {} of a loop over {} dimension(s){}", ir::print_stmt(s, k_), s.axis,
                                  rank, sf ? fmt::format(" (index space '{}')", sf->space) : ""),
                      "give the index space as many dimensions as the loop indices read");
    }
    op.aux = first + s.axis;
  }
  void resolve(const ir::AdStackAllocaStmt& s, Op& op) {
    op.aux = static_cast<int64_t>(p_.num_stacks++);
    stacks_[&s] = op.aux;
  }
  void resolve(const ir::AdStackPushStmt& s, Op& op) { op.aux = stack_of(s); }
  void resolve(const ir::AdStackPopStmt& s, Op& op) { op.aux = stack_of(s); }
  void resolve(const ir::AdStackLoadTopStmt& s, Op& op) { op.aux = stack_of(s); }
  void resolve(const ir::AdStackLoadTopAdjStmt& s, Op& op) { op.aux = stack_of(s); }
  void resolve(const ir::AdStackAccAdjointStmt& s, Op& op) { op.aux = stack_of(s); }
  void resolve(const ir::ExternalPtrStmt& s, Op& op) {
    const auto* base = ir::dyn_cast<ir::ArgLoadStmt>(s.base());
    PB_ASSERT(base, "external_ptr base is not an argload");
    op.aux = base->arg_index;
  }
  void resolve(const ir::GlobalPtrStmt& s, Op& op) { op.aux = s.field; }
  void resolve(const ir::OffloadedStmt& s, Op& op) {
    op.aux = static_cast<int64_t>(p_.num_coords);
    if (s.task == ir::TaskType::range_for) {
      p_.num_coords += 1;
      loops_[&s] = {op.aux, 1};
    } else if (s.task == ir::TaskType::struct_for) {
      op.shape = space_shape(k_, st_, s.snode);
      p_.num_coords += op.shape.size();
      loops_[&s] = {op.aux, op.shape.size()};
    }
  }
  void resolve(const ir::LoopLinearIndexStmt& s, Op& op) {
    auto it = loops_.find(s.loop());
    PB_ASSERT(it != loops_.end(), fmt::format("`{}` refers to a loop that does not enclose it", ir::print_stmt(s, k_)));
    op.aux = it->second.first;
    if (const auto* t = ir::dyn_cast<ir::OffloadedStmt>(s.loop()); t && t->task == ir::TaskType::struct_for)
      op.shape = space_shape(k_, st_, t->snode);
    if (const auto* f = ir::dyn_cast<ir::StructForStmt>(s.loop())) op.shape = space_shape(k_, st_, f->space);
  }
  void resolve(const ir::GlobalTemporaryStmt& s, Op& op) { op.aux = s.offset; }
  void resolve(const ir::ThreadLocalPtrStmt& s, Op& op) { op.aux = s.offset; }
  void resolve(const ir::SNodeOpStmt& s, Op& op) { op.aux = space_index(s.snode); }
  void resolve(const ir::SNodeLookupStmt& s, Op& op) {
    // The SNode's cells per parent cell: its declared or given index space (less its parent's
    // cells when nested), else the strides of the linearized index that feeds the lookup.
    op.aux = space_index(s.snode);
    if (const ir::IndexSpace* sp = k_.find_space(s.snode); sp && sp->declared && sp->shape && !sp->parent.empty()) {
      const ir::IndexSpace* parent = k_.find_space(sp->parent);
      ir::Shape up =
          ir::padded_parent_shape(parent ? parent->shape.value_or(ir::Shape{}) : ir::Shape{}, sp->shape->size());
      op.shape = *sp->shape;
      for (size_t d = 0; d < up.size(); ++d) op.shape[d] /= up[d];
    } else if (k_.find_space(s.snode) || st_.spaces.count(s.snode) || k_.find_field(s.snode)) {
      op.shape = space_shape(k_, st_, s.snode);
    } else if (const auto* lin = ir::dyn_cast<ir::LinearizeStmt>(s.index())) {
      op.shape = lin->strides;
    } else {
      throw UserError(
          fmt::format("the number of cells of SNode '{}' is unknown at `{}`", s.snode, ir::print_stmt(s, k_)),
          fmt::format("declare it in the header (`dense {} : [N]`) or give it in the inputs' \"spaces\"", s.snode));
    }
  }
  void resolve(const ir::GetChStmt& s, Op& op) {
    op.aux = -1;
    if (s.type.gen) return;
    auto f = k_.find_field(s.to);
    PB_ASSERT(f, fmt::format("`{}` names a place with no field (the verifier checks this)", ir::print_stmt(s, k_)));
    op.aux = *f;
  }
  void resolve(const ir::Stmt&, Op&) {}

  // Index of the declared space `name` in the kernel's spaces (the SparseCells numbering), or -1.
  int64_t space_index(const std::string& name) const {
    const ir::IndexSpace* sp = k_.find_space(name);
    return sp && sp->declared && sp->shape ? sp - k_.spaces.data() : -1;
  }

  template <class T>
  int64_t stack_of(const T& s) {
    auto it = stacks_.find(s.stack());
    PB_ASSERT(it != stacks_.end(),
              fmt::format("`{}` uses a stack alloc that does not dominate it", ir::print_stmt(s, k_)));
    return it->second;
  }

  const ir::Kernel& k_;
  const State& st_;
  bool f64_;
  Program p_;
  std::unordered_map<const ir::Stmt*, uint32_t> slots_;
  std::unordered_map<const ir::Stmt*, std::pair<int64_t, size_t>> loops_;  // loop -> (first coordinate, rank)
  std::unordered_map<const ir::Stmt*, int64_t> stacks_;                    // stack alloc -> stack number
};

}  // namespace

Program compile(const ir::Kernel& k, const State& state, bool f64) { return Compiler(k, state, f64).run(); }

void check_runnable(const ir::Kernel& k, const std::string& label) {
  auto errors = ir::verify(k);
  if (errors.empty()) return;
  std::string msg = fmt::format("{} does not verify, so it cannot run:", label);
  for (size_t i = 0; i < errors.size() && i < 5; ++i) msg += "\n  " + errors[i].format();
  if (errors.size() > 5) msg += fmt::format("\n  ... and {} more", errors.size() - 5);
  throw UserError(msg, "fix the IR (run the verifier on it) before running it");
}

void convert_buffer(Buffer& b, ir::ScalarKind declared, bool f64, const std::string& what) {
  ir::ScalarKind want = work_kind(declared, f64);
  bool float_pair = ir::is_float(b.dtype) && (declared == ir::ScalarKind::f32 || declared == ir::ScalarKind::f16);
  if (b.dtype != want && b.dtype != declared && !float_pair)
    throw UserError(fmt::format("{} holds {} data but the kernel declares it {}", what, ir::scalar_name(b.dtype),
                                ir::scalar_name(declared)),
                    "build the state with make_state, or give the buffer the declared element type");
  if (b.data.size() != static_cast<size_t>(num_elements(b.shape)))
    throw UserError(fmt::format("{} has {} element(s) but its shape {} needs {}", what, b.data.size(),
                                ir::shape_to_string(b.shape), num_elements(b.shape)),
                    "build the state with make_state");
  if (b.dtype == want) return;
  for (ir::Value& v : b.data) v = v.cast_to(want);
  b.dtype = want;
}

void convert_ndarrays(const ir::Kernel& k, State& st, bool f64) {
  std::map<int, ir::ScalarKind> loaded;  // undeclared ndarray arguments: the argload's element type
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (auto* a = ir::dyn_cast<ir::ArgLoadStmt>(&s); a && a->type.pointer) loaded[a->arg_index] = a->type.scalar;
  });
  for (size_t i = 0; i < st.args.size(); ++i) {
    ArgValue& a = st.args[i];
    const ir::ArgDecl* decl = k.find_arg(static_cast<int>(i));
    auto load = loaded.find(static_cast<int>(i));
    if (!a.is_ndarray || (!decl && load == loaded.end())) continue;
    ir::ScalarKind declared = decl ? decl->dtype : load->second;
    convert_buffer(a.array, declared, f64, fmt::format("ndarray argument {}", i));
    if (a.grad) convert_buffer(*a.grad, declared, f64, fmt::format("the gradient of ndarray argument {}", i));
    if (a.dual) convert_buffer(*a.dual, declared, f64, fmt::format("the dual of ndarray argument {}", i));
  }
}

}  // namespace pb::runtime::detail
