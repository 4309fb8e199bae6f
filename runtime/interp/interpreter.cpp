#include "runtime/interp/interpreter.h"

#include <fmt/format.h>

#include <concepts>
#include <map>
#include <numeric>
#include <random>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/differentiable.h"
#include "ir/eval.h"
#include "ir/printer.h"
#include "ir/type_uses.h"
#include "ir/visitor.h"
#include "runtime/core/prepare.h"
#include "runtime/core/sparse.h"
#include "runtime/core/stack_capacity.h"
#include "runtime/interp/access_guard.h"
#include "runtime/interp/ad_stacks.h"
#include "runtime/interp/decision_trace.h"
#include "runtime/interp/exec_tensor.h"
#include "runtime/interp/exec_values.h"
#include "runtime/interp/interp_ops.h"
#include "runtime/interp/program.h"

namespace pb::runtime {
namespace {

using detail::Op;
using ir::ScalarKind;
using ir::Value;

// How a block was left: run to its end, by `continue`, or by a while control whose mask became 0.
enum class Flow : uint8_t { next, continue_loop, exit_while };

class Interpreter {
 public:
  Interpreter(const ir::Kernel& k, State& st, const RunOptions& o)
      : k_(k),
        st_(st),
        opt_(o),
        label_(k.name.empty() ? "kernel" : fmt::format("kernel \"{}\"", k.name)),
        trace_(o.trace_decisions) {}

  RunResult run() {
    detail::check_runnable(k_, label_);
    if (opt_.check_global_access)
      if (auto use = ir::first_type_use_outside(k_, [](ir::DataType t) { return !t.is_tensor(); }))
        throw UserError(
            fmt::format("the global-access check tracks scalar elements, and {} uses a tensor type: {}", label_, *use),
            "run the scalarize pass first (`passbench run --check-global-access` does)");
    bind_memory();
    sparse_.bind(k_, st_, field_bufs_);  // first: it names an undeclared sparse SNode
    prog_ = detail::compile(k_, st_, opt_.f64);
    capacities_.bind(k_, st_, field_bufs_);
    values_.assign(prog_.num_slots, Value{});
    defined_.assign(prog_.num_slots, 0);
    ptrs_.assign(prog_.num_slots, nullptr);
    coords_.assign(prog_.num_coords, 0);
    stacks_.reset(prog_.num_stacks);
    access_.reset(opt_.check_global_access, prog_.num_slots);
    rng_.seed(opt_.seed);
    Flow f = exec_block(0);
    PB_ASSERT(f == Flow::next, "continue or while control escaped to the kernel root");
    stacks_.report_depths(result_.max_stack_depth);
    result_.decision_hash = trace_.hash();
    result_.decisions = trace_.count();
    return std::move(result_);
  }

 private:
  // ---- setup ----

  void bind_memory() {
    field_bufs_.assign(k_.fields().size(), nullptr);
    for (size_t i = 0; i < k_.fields().size(); ++i) {
      const ir::Field& f = k_.fields()[i];
      auto it = st_.fields.find(f.name);
      if (it == st_.fields.end()) continue;
      detail::convert_buffer(it->second, f.dtype, opt_.f64, fmt::format("field '{}'", f.name));
      field_bufs_[i] = &it->second;
    }
    detail::convert_ndarrays(k_, st_, opt_.f64);
  }

  // ---- errors ----

  [[noreturn]] void fail(const Op& op, const std::string& what, const std::string& remedy) const {
    throw UserError(fmt::format("{} at `{}` in {}", what, ir::print_stmt(*op.stmt, k_), label_), remedy);
  }

  // ---- slots ----

  const Value& in(const Op& op, size_t i) const {
    uint32_t slot = op.operands[i];
    PB_ASSERT(defined_[slot],
              fmt::format("`{}` reads operand {} before it was computed", ir::print_stmt(*op.stmt, k_), i));
    return values_[slot];
  }
  Value* ptr(const Op& op, size_t i) const {
    Value* p = ptrs_[op.operands[i]];
    PB_ASSERT(p, fmt::format("`{}` uses pointer operand {} before it was computed", ir::print_stmt(*op.stmt, k_), i));
    return p;
  }
  void set(const Op& op, const Value& v) {
    values_[op.slot] = v;
    defined_[op.slot] = 1;
  }

  // ---- execution ----

  Flow exec_block(int32_t b) {
    for (const Op& op : prog_.blocks[static_cast<size_t>(b)]) {
      tick(op);
      if (op.tensor) {
        detail::TensorContext ctx{k_, values_, defined_, ptrs_, temps_, label_, st_.args};
        detail::exec_tensor(op, ctx);
        continue;
      }
      Flow f = ir::visit(*op.stmt, [&](const auto& s) { return exec(s, op); });
      if (f != Flow::next) return f;
    }
    return Flow::next;
  }

  // Counts one step (a statement, or an iteration of a loop) against max_steps.
  void tick(const Op& op) {
    if (opt_.max_steps && ++steps_ > opt_.max_steps)
      fail(op,
           fmt::format("the run exceeded its step budget, max_steps={} executed statements and loop iterations",
                       opt_.max_steps),
           "look for a `while true` that never ends or a huge trip count; or raise the budget (--max-steps N, 0 for "
           "none)");
  }

  // Runs `body` for every iteration of `order`; a parallel loop permutes it when shuffling.
  template <class SetIndex>
  Flow loop(const Op& op, int64_t count, bool parallel, SetIndex set_index) {
    std::vector<int64_t> order;
    if (parallel && opt_.shuffle && count > 1) {
      order.resize(static_cast<size_t>(count));
      std::iota(order.begin(), order.end(), int64_t{0});
      for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng_() % (i + 1)]);
    }
    for (int64_t t = 0; t < count; ++t) {
      tick(op);
      int64_t at = order.empty() ? t : order[static_cast<size_t>(t)];
      if (parallel) iteration_ = at;
      set_index(at);
      Flow f = exec_block(op.body);
      if (f == Flow::exit_while) {
        PB_ASSERT(!parallel, "while control escaped a top-level loop");
        return f;
      }
    }
    if (parallel) {
      iteration_ = -1;
      access_.end_loop();
    }
    return Flow::next;
  }

  Flow exec(const ir::ConstStmt&, const Op& op) {
    set(op, op.imm);
    return Flow::next;
  }
  Flow exec(const ir::AllocaStmt&, const Op& op) {
    set(op, Value::zero(op.kind));
    ptrs_[op.slot] = &values_[op.slot];
    return Flow::next;
  }
  Flow exec(const ir::LocalLoadStmt&, const Op& op) {
    set(op, *ptr(op, 0));
    return Flow::next;
  }
  Flow exec(const ir::LocalStoreStmt&, const Op& op) {
    *ptr(op, 0) = in(op, 1);
    return Flow::next;
  }

  // Row-major offset of the indices (operands from `first`) in `shape`. `what()` names the
  // array in errors; it is only called on the error path.
  // A tensor cell's dimensions (op.cell_rank) come last in the buffer and are not indexed.
  template <class What>
  size_t offset(const Op& op, size_t first, const ir::Shape& shape, What what) const {
    size_t rank = op.operands.size() - first;
    if (rank + op.cell_rank != shape.size())
      fail(op,
           fmt::format("{} has shape {} but is indexed with {} index(es)", what(), ir::shape_to_string(shape), rank),
           "give it one extent per index");
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = in(op, first + d).as_i64();
      if (i < 0 || i >= shape[d]) {
        std::string idx;
        for (size_t e = 0; e < rank; ++e) idx += (e ? ", " : "") + in(op, first + e).to_string();
        fail(op, fmt::format("index [{}] is out of bounds for {} of shape {}", idx, what(), ir::shape_to_string(shape)),
             "check the loop bounds and index arithmetic against the shape (header or inputs)");
      }
      off = off * shape[d] + i;
    }
    for (size_t d = rank; d < shape.size(); ++d) off *= shape[d];
    return static_cast<size_t>(off);
  }

  Flow exec(const ir::GlobalPtrStmt& s, const Op& op) {
    const std::string& name = k_.field(s.field).name;
    Buffer* b = field_bufs_[static_cast<size_t>(s.field)];
    if (!b)
      fail(op, fmt::format("field '{}' has no data in the state", name),
           "build the state with make_state, which gives every field with a known shape a buffer");
    size_t at = offset(op, 0, b->shape, [&] { return fmt::format("field '{}'", name); });
    bool live = !sparse_.sparse_field(s.field) || sparse_.reach(s.field, static_cast<int64_t>(at), s.activate);
    ptrs_[op.slot] = live ? &b->data[at] : ambient(op);
    defined_[op.slot] = 1;
    access_.pointer(op.slot, s);
    return Flow::next;
  }
  Flow exec(const ir::ExternalPtrStmt& s, const Op& op) {
    auto index = static_cast<size_t>(op.aux);
    if (index >= st_.args.size() || !st_.args[index].is_ndarray)
      fail(op, fmt::format("argument {} is not an ndarray", index),
           "give an ndarray object for it in the inputs' \"args\"");
    ArgValue& a = st_.args[index];
    if (s.is_grad && !a.grad)
      fail(op, fmt::format("ndarray argument {} has no gradient array", index), "give \"grad\" for it in the inputs");
    if (s.is_dual && !a.dual)
      fail(op, fmt::format("ndarray argument {} has no dual array", index), "give \"dual\" for it in the inputs");
    Buffer& b = s.is_grad ? *a.grad : s.is_dual ? *a.dual : a.array;
    auto what = [&] {
      return fmt::format("{}ndarray argument {}",
                         s.is_grad   ? "the gradient of "
                         : s.is_dual ? "the dual of "
                                     : "",
                         index);
    };
    ptrs_[op.slot] = &b.data[offset(op, 1, b.shape, what)];
    defined_[op.slot] = 1;
    access_.pointer(op.slot, s);
    return Flow::next;
  }
  Flow exec(const ir::GlobalLoadStmt&, const Op& op) {
    set(op, *ptr(op, 0));
    access_.load(op.operands[0], ptr(op, 0), op.stmt, iteration_);
    return Flow::next;
  }
  Flow exec(const ir::GlobalStoreStmt&, const Op& op) {
    access_.write(op.operands[0], ptr(op, 0), op.stmt, iteration_);
    if (ptr(op, 0) == &ambient_) return Flow::next;  // through an inactive sparse cell: dropped
    capacities_.note_write(ptr(op, 0));
    *ptr(op, 0) = op.quant_bits != 0 ? ir::quant_wrap(in(op, 1), op.quant_bits) : in(op, 1);
    return Flow::next;
  }

  Flow exec(const ir::AtomicOpStmt& s, const Op& op) {
    access_.write(op.operands[0], ptr(op, 0), op.stmt, iteration_);
    Value* cell = ptr(op, 0);
    capacities_.note_write(cell);
    Value old = *cell;
    Value updated = evaluate(op, [&] { return ir::eval_atomic(s.op, old, in(op, 1)); });
    if (cell != &ambient_)  // else through an inactive sparse cell: dropped
      *cell = op.quant_bits != 0 ? ir::quant_wrap(updated, op.quant_bits) : updated;
    trace_.atomic(op.slot, s.op, old, in(op, 1));
    set(op, old);
    return Flow::next;
  }

  template <class F>
  Value evaluate(const Op& op, F f) const {
    try {
      return f();
    } catch (const ir::EvalError& e) {
      fail(op, e.message, e.remedy);
    }
  }

  Flow exec(const ir::UnaryOpStmt& s, const Op& op) {
    const Value& x = in(op, 0);
    if (s.op == ir::UnaryOp::cast_value) {
      set(op, x.cast_to(op.kind));
      trace_.unary(op.slot, s.op, x, values_[op.slot]);
    } else if (s.op == ir::UnaryOp::cast_bits) {
      // Bit casts see the declared widths, also when f32 is computed as f64.
      // Narrow only a widened (f64-mode) value: a float conversion would quiet a signalling NaN.
      ScalarKind declared = s.x()->type.scalar;
      bool widened = declared != x.kind();
      Value bits = !widened                      ? x
                   : declared == ScalarKind::f16 ? Value::make_f16(x.as_f64())
                                                 : Value::make_f32(static_cast<float>(x.as_f64()));
      Value r = bits.bitcast_to(s.type.scalar);
      set(op, r.cast_to(op.kind));
    } else {
      set(op, evaluate(op, [&] { return ir::eval_unary(s.op, x, op.kind); }));
      trace_.unary(op.slot, s.op, x, values_[op.slot]);
    }
    return Flow::next;
  }
  Flow exec(const ir::BinaryOpStmt& s, const Op& op) {
    set(op, evaluate(op, [&] { return ir::eval_binary(s.op, in(op, 0), in(op, 1), op.kind); }));
    trace_.binary(op.slot, s.op, in(op, 0), in(op, 1), values_[op.slot]);
    return Flow::next;
  }
  Flow exec(const ir::TernaryOpStmt&, const Op& op) {
    trace_.condition(op.slot, in(op, 0));
    set(op, in(op, 0).is_zero() ? in(op, 2) : in(op, 1));
    return Flow::next;
  }
  Flow exec(const ir::IfStmt&, const Op& op) {
    trace_.condition(op.slot, in(op, 0));
    if (!in(op, 0).is_zero()) return exec_block(op.body);
    return op.else_body >= 0 ? exec_block(op.else_body) : Flow::next;
  }
  Flow exec(const ir::RangeForStmt& s, const Op& op) {
    int64_t begin = in(op, 0).as_i64(), end = in(op, 1).as_i64();
    int64_t count = end > begin ? end - begin : 0;
    trace_.record(op.slot, static_cast<uint64_t>(count));
    int64_t& index = coords_[static_cast<size_t>(op.aux)];
    return loop(op, count, s.parent() == &k_.root(), [&](int64_t t) { index = s.reversed ? end - 1 - t : begin + t; });
  }
  Flow exec(const ir::StructForStmt&, const Op& op) { return exec_struct_for(op); }
  // Over the live cells of a sparse space (listed when the loop starts), else over every cell.
  Flow exec_struct_for(const Op& op) {
    const ir::Shape& shape = op.shape;
    const auto* f = ir::dyn_cast<ir::StructForStmt>(op.stmt);
    auto cells = sparse_.visited_cells(f ? f->space : ir::dyn_cast<ir::OffloadedStmt>(op.stmt)->snode);
    int64_t count = cells ? static_cast<int64_t>(cells->size()) : num_elements(shape);
    return loop(op, count, true, [&](int64_t t) {
      int64_t cell = cells ? (*cells)[static_cast<size_t>(t)] : t;
      for (size_t d = shape.size(); d-- > 0;) {
        coords_[static_cast<size_t>(op.aux) + d] = cell % shape[d];
        cell /= shape[d];
      }
    });
  }
  Flow exec(const ir::LoopIndexStmt&, const Op& op) {
    set(op, Value::from_int(op.kind, coords_[static_cast<size_t>(op.aux)]));
    return Flow::next;
  }
  Flow exec(const ir::WhileStmt&, const Op& op) {
    uint64_t trips = 0;
    do {
      tick(op);
      ++trips;
    } while (exec_block(op.body) != Flow::exit_while);
    trace_.record(op.slot, trips);
    return Flow::next;
  }
  Flow exec(const ir::WhileControlStmt& s, const Op& op) {
    if (!s.has_mask()) return in(op, 0).is_zero() ? Flow::exit_while : Flow::next;
    Value* mask = ptr(op, 0);
    *mask = Value::from_uint(mask->kind(), mask->as_u64() & in(op, 1).as_u64());
    return mask->is_zero() ? Flow::exit_while : Flow::next;
  }
  Flow exec(const ir::ContinueStmt&, const Op&) { return Flow::continue_loop; }

  // ---- autodiff stacks (runtime/interp/ad_stacks.h) ----

  const ir::AdStackAllocaStmt& alloc_of(const Op& op) const {
    const auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(op.stmt->operand(0));
    PB_ASSERT(a && defined_[op.operands[0]],
              fmt::format("`{}` runs before its stack alloc", ir::print_stmt(*op.stmt, k_)));
    return *a;
  }
  detail::AdStacks::Entry& top(const Op& op, const char* what) {
    return stacks_.top(static_cast<size_t>(op.aux), alloc_of(op), *op.stmt, what);
  }
  Flow exec(const ir::AdStackAllocaStmt& s, const Op& op) {
    int64_t capacity = capacities_.capacity(s, k_, st_, field_bufs_, [&] {
      return fmt::format("stack ${} (`{}`) in {}", s.id, ir::print_stmt(s, k_), label_);
    });
    stacks_.alloc(static_cast<size_t>(op.aux), s, capacity, opt_.unsized_stacks_unlimited);
    int64_t& cap = result_.stack_capacity[s.id];
    cap = std::max(cap, capacity);
    set(op, Value::zero(op.kind));
    return Flow::next;
  }
  Flow exec(const ir::AdStackPushStmt&, const Op& op) {
    stacks_.push(static_cast<size_t>(op.aux), alloc_of(op), *op.stmt, in(op, 1), op.kind);
    return Flow::next;
  }
  Flow exec(const ir::AdStackPopStmt&, const Op& op) {
    stacks_.pop(static_cast<size_t>(op.aux), alloc_of(op), *op.stmt);
    return Flow::next;
  }
  Flow exec(const ir::AdStackLoadTopStmt&, const Op& op) {
    set(op, top(op, "load top").first);
    return Flow::next;
  }
  Flow exec(const ir::AdStackLoadTopAdjStmt&, const Op& op) {
    set(op, top(op, "load top adj").second);
    return Flow::next;
  }
  Flow exec(const ir::AdStackAccAdjointStmt&, const Op& op) {
    Value& adj = top(op, "acc adj").second;
    adj = evaluate(op, [&] { return ir::eval_binary(ir::BinaryOp::add, adj, in(op, 1), op.kind); });
    return Flow::next;
  }

  // ---- the offloaded stage ----

  Flow exec(const ir::OffloadedStmt& s, const Op& op) {
    if (op.prologue >= 0) exec_block(op.prologue);
    Flow f = Flow::next;
    switch (s.task) {
      case ir::TaskType::serial:
        f = exec_block(op.body);
        break;
      case ir::TaskType::range_for: {
        int64_t begin = task_bound(s.begin, op), end = task_bound(s.end, op);
        int64_t count = end > begin ? end - begin : 0;
        trace_.record(op.slot, static_cast<uint64_t>(count));
        int64_t& index = coords_[static_cast<size_t>(op.aux)];
        f = loop(op, count, true, [&](int64_t t) { index = begin + t; });
        break;
      }
      case ir::TaskType::struct_for:
        f = exec_struct_for(op);
        break;
      case ir::TaskType::mesh_for:  // refused when the program is compiled (program.cpp)
        PB_ASSERT(false, "a mesh_for task reached the interpreter");
        break;
      case ir::TaskType::listgen:  // dense SNodes: every cell is active, nothing to list or collect
      case ir::TaskType::gc:
      case ir::TaskType::clear_list:
        break;
    }
    if (op.epilogue >= 0) exec_block(op.epilogue);
    return f;
  }
  int64_t task_bound(const ir::TaskBound& b, const Op& op) {
    switch (b.kind) {
      case ir::TaskBound::Kind::constant:
        return b.value;
      case ir::TaskBound::Kind::temporary:
        return temporary(op, b.value, ScalarKind::i32).as_i64();
      case ir::TaskBound::Kind::operand:
        return in(op, static_cast<size_t>(b.value)).as_i64();
    }
    return 0;
  }
  Value& temporary(const Op& op, int64_t offset, ScalarKind kind) {
    Value* v = temps_.scalar(offset, kind);
    if (!v)
      fail(op, fmt::format("byte {} of the global temporaries lies in a tensor temporary", offset),
           "give each global temporary its own bytes (the reference's offload does), or scalarize the kernel");
    return *v;
  }
  Flow exec(const ir::GlobalTemporaryStmt&, const Op& op) {
    ptrs_[op.slot] = &temporary(op, op.aux, op.kind);
    defined_[op.slot] = 1;
    return Flow::next;
  }
  // Threads run one after another, so one thread-local buffer serves them all in turn; a task's
  // tls prologue initialises it and its tls epilogue reduces it, as on a single thread.
  Flow exec(const ir::ThreadLocalPtrStmt&, const Op& op) {
    auto [it, fresh] = tls_.try_emplace(op.aux, Value::zero(op.kind));
    ptrs_[op.slot] = &it->second;
    defined_[op.slot] = 1;
    return Flow::next;
  }
  Flow exec(const ir::GetRootStmt&, const Op& op) {
    set(op, Value::from_int(ScalarKind::i64, 0));
    return Flow::next;
  }
  Flow exec(const ir::SNodeLookupStmt& s, const Op& op) {
    int64_t cells = num_elements(op.shape), i = in(op, 1).as_i64();
    if (i < 0 || i >= cells)
      fail(op,
           fmt::format("cell {} is out of bounds for SNode '{}' of {} cell(s) {}", i, s.snode, cells,
                       ir::shape_to_string(op.shape)),
           "check the linearized index against the SNode's shape (header or inputs)");
    // -1: a cell under an inactive one (reached without activating it).
    int64_t parent = in(op, 0).as_i64();
    auto lookup = [&] { return Value::from_int(ScalarKind::i64, sparse_.lookup(op.aux, parent, i, s.activate)); };
    Value cell = parent < 0   ? Value::from_int(ScalarKind::i64, -1)
                 : op.aux < 0 ? Value::from_int(ScalarKind::i64, parent * cells + i)
                              : evaluate(op, lookup);
    set(op, cell);
    return Flow::next;
  }
  Flow exec(const ir::SNodeOpStmt& s, const Op& op) {
    std::vector<Value> inputs(op.operands.size());
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = in(op, i);
    if (auto v = detail::snode_op(sparse_, s, static_cast<int>(op.aux), op.kind, inputs, k_, label_)) set(op, *v);
    return Flow::next;
  }
  // What a pointer to no element reaches: reads give 0, writes are dropped.
  Value* ambient(const Op& op) {
    ambient_ = Value::zero(op.kind);
    return &ambient_;
  }
  Flow exec(const ir::GetChStmt& s, const Op& op) {
    int64_t cell = in(op, 0).as_i64();
    if (op.aux < 0) {  // a container child: the same cell number
      set(op, Value::from_int(ScalarKind::i64, cell));
      return Flow::next;
    }
    Buffer* b = field_bufs_[static_cast<size_t>(op.aux)];
    if (!b)
      fail(op, fmt::format("field '{}' has no data in the state", s.to), "give its shape in the header or the inputs");
    if (cell < 0) {
      ptrs_[op.slot] = ambient(op);
      defined_[op.slot] = 1;
      return Flow::next;
    }
    if (cell < 0 || cell >= static_cast<int64_t>(b->data.size()))
      fail(op, fmt::format("cell {} is out of bounds for field '{}' of {} element(s)", cell, s.to, b->data.size()),
           "give the field the shape of the SNodes above it (header or inputs)");
    ptrs_[op.slot] = &b->data[static_cast<size_t>(cell)];
    defined_[op.slot] = 1;
    return Flow::next;
  }
  Flow exec(const ir::LoopLinearIndexStmt&, const Op& op) {
    int64_t v = 0;
    if (op.shape.empty()) {
      v = coords_[static_cast<size_t>(op.aux)];
    } else {
      for (size_t d = 0; d < op.shape.size(); ++d) v = v * op.shape[d] + coords_[static_cast<size_t>(op.aux) + d];
    }
    set(op, Value::from_int(op.kind, v));
    return Flow::next;
  }
  Flow exec(const ir::ReturnStmt&, const Op& op) {
    result_.returned.clear();
    for (size_t i = 0; i < op.operands.size(); ++i) result_.returned.push_back(in(op, i));
    return Flow::next;
  }

  // Kinds no backend compiles, argument loads and the access chain's index arithmetic:
  // runtime/interp/exec_values.cpp (pointer operands pass as empty values).
  template <class T>
    requires(ir::has_no_backend(T::kKind) || std::same_as<T, ir::ArgLoadStmt> ||
             std::same_as<T, ir::ExternalTensorShapeAlongAxisStmt> || std::same_as<T, ir::LinearizeStmt> ||
             std::same_as<T, ir::IntegerOffsetStmt> || std::same_as<T, ir::BitExtractStmt>)
  Flow exec(const T& s, const Op& op) {
    std::vector<Value> inputs(op.operands.size());
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = values_[op.operands[i]];
    detail::ValuesContext ctx{k_, st_, rng_, label_, iteration_};
    if (auto v = detail::exec_values(s, op.kind, inputs, ctx)) set(op, *v);
    return Flow::next;
  }

  // ---- print and assert ----

  Flow exec(const ir::PrintStmt& s, const Op& op) {
    for (const auto& item : s.items) {
      if (const auto* text = std::get_if<std::string>(&item))
        result_.printed += *text;
      else
        result_.printed += in(op, std::get<size_t>(item)).to_string();
    }
    return Flow::next;
  }
  Flow exec(const ir::AssertStmt& s, const Op& op) {
    if (!in(op, 0).is_zero()) return Flow::next;
    std::vector<Value> args;
    for (size_t i = 1; i < op.operands.size(); ++i) args.push_back(in(op, i));
    fail(op, fmt::format("assertion failed: {}", detail::format_printf(s.message, args)),
         "the kernel's own assert: the inputs break a condition the kernel requires");
  }

  const ir::Kernel& k_;
  State& st_;
  RunOptions opt_;
  const std::string label_;  // `kernel "name"`, for errors
  detail::DecisionTrace trace_;
  detail::Program prog_;
  std::vector<Buffer*> field_bufs_;  // by field id; null when the state has no buffer
  detail::StackCapacities capacities_;
  detail::SparseCells sparse_;
  Value ambient_;                                // the element a pointer through an inactive sparse cell reaches
  detail::AccessGuard access_{k_, st_, label_};  // with check_global_access
  int64_t iteration_ = -1;                       // of the running top-level loop; -1 outside
  std::vector<Value> values_;                    // by slot; an alloca's slot holds its variable
  std::vector<char> defined_;                    // by slot: computed in this run
  std::vector<Value*> ptrs_;                     // by slot: the cell a pointer statement addresses
  std::vector<int64_t> coords_;                  // loop coordinates
  detail::AdStacks stacks_{k_, label_};
  detail::Temporaries temps_;     // global temporaries
  std::map<int64_t, Value> tls_;  // thread-local storage by byte offset
  std::mt19937_64 rng_;
  uint64_t steps_ = 0;
  RunResult result_;
};

}  // namespace

RunResult run_kernel(const ir::Kernel& k, State& state, const RunOptions& options) {
  ElementArgsBound elements(k, state);  // a scalarized kernel reads its caller's tensor arguments by element
  return Interpreter(k, state, options).run();
}

}  // namespace pb::runtime
