#include "passes/autodiff/make_adjoint.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/assert.h"
#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/numbering.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/autodiff/ad_support.h"
#include "passes/autodiff/independent_blocks.h"

namespace pb::passes {

using namespace ir;

namespace {

using ad::is_real;

[[noreturn]] void reject(const Kernel& k, const Stmt& s, const std::string& why, const std::string& remedy) {
  throw UserError(fmt::format("cannot differentiate `{}`: {}", print_stmt(s, k), why), remedy);
}

// The name of what a differentiable pointer addresses, for messages: a field or an ndarray.
std::string target_name(const Kernel& k, const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return fmt::format("field '{}'", k.field(g->field).name);
  auto* e = static_cast<const ExternalPtrStmt*>(ptr);
  if (auto* a = dyn_cast<ArgLoadStmt>(e->base())) return fmt::format("ndarray argument {}", a->arg_index);
  return "ndarray";
}

class Adjointer {
 public:
  Adjointer(Kernel& k, Block& ib, MakeAdjointResult& r) : k_(k), b_(k), ib_(ib), r_(r) { reverse_of_[&ib] = &ib; }

  void run() {
    index_forward_code();
    if (snapshot_clobbered_stack_reads() > 0) index_forward_code();
    mark_value_mode();
    b_.set_insertion_point_end(ib_);
    size_t before = k_.count_statements();
    reverse_block(top_level_);
    for (Stmt* s : erase_) s->parent()->erase(s);
    r_.forward_writes_removed += static_cast<int64_t>(erase_.size());
    r_.adjoint_statements += static_cast<int64_t>(k_.count_statements() + erase_.size()) - static_cast<int64_t>(before);
  }

 private:
  // The block that holds a primal's adjoint: the reverse counterpart of the nearest enclosing
  // loop body (or the IB), never an if branch, so the adjoint is visible to the reverse if too.
  Block* adjoint_home(const Stmt* primal) {
    for (Block* blk = primal->parent(); blk; blk = blk->owner() ? blk->owner()->parent() : nullptr)
      if (auto it = reverse_of_.find(blk); it != reverse_of_.end()) return it->second;
    return &ib_;
  }

  // Forward statements get dense numbers; a primal whose users all sit in its own block gets
  // its adjoint as an SSA value: reverse code is emitted last-to-first, so every accumulation
  // into it lands in that block's reverse before the read, in order, and no alloca is needed.
  void index_forward_code() {
    forward_.clear();
    forward_.reserve(ib_.total_size());  // no copies while growing (see backup_ssa's KernelFacts)
    top_level_.clear();
    top_level_.reserve(ib_.size());
    walk(ib_, [&](Stmt& s) {
      forward_.add(s);
      if (s.parent() == &ib_) top_level_.push_back(&s);  // the same cache line: no second walk
    });
  }

  void mark_value_mode() {
    value_mode_.assign(forward_.size(), 0);
    adj_value_.assign(forward_.size(), nullptr);
    for (Stmt* s : forward_.order()) {
      bool local = true;
      for (const Stmt::Use& u : s->uses()) local = local && u.user()->parent() == s->parent();
      value_mode_[forward_[*s]] = local && !isa<AllocaStmt>(s);
    }
  }

  // Position of a forward statement of this IB, or -1 (values from outside the IB, new code).
  int64_t forward_index(const Stmt* s) const { return forward_.find(*s); }

  Stmt* adjoint_alloca(const Stmt* primal) {
    if (auto it = adj_.find(primal); it != adj_.end()) return it->second;
    Block* home = adjoint_home(primal);
    InsertionGuard guard(b_);
    if (home->empty())
      b_.set_insertion_point_end(*home);
    else
      b_.set_insertion_point_before(*home->front());
    Stmt* a = b_.alloca(primal->type.scalar);
    // Start from -0.0 rather than the alloca's +0.0: -0.0 + v == v exactly, so simplify can drop
    // the first accumulation's add.
    b_.local_store(a, constant(primal, -0.0));
    adj_[primal] = a;
    return a;
  }

  // The adjoint alloca of local variable `var` at a write to it, or nullptr when nothing can
  // have flowed into it yet. Reverse code is emitted last-to-first, so reads after the write in
  // the same iteration already created it; but when the write is in a loop the variable
  // outlives, the next iteration's reads (the back edge) feed it at run time, so it is created
  // here regardless.
  Stmt* local_adjoint(const Stmt& write, const Stmt* var) {
    if (auto it = adj_.find(var); it != adj_.end()) return it->second;
    const Stmt* loop = ad::enclosing_loop_in(write, ib_);
    if (!loop || block_encloses(loop->blocks()[0], var->parent())) return nullptr;
    return adjoint_alloca(var);
  }

  // The current adjoint of `s`, or nullptr when nothing flowed into it (zero).
  Stmt* adjoint_value(const Stmt* s) {
    if (int64_t i = forward_index(s); i >= 0 && value_mode_[i]) return adj_value_[i];
    auto it = adj_.find(s);
    return it == adj_.end() ? nullptr : b_.local_load(it->second);
  }

  void accumulate(const Stmt* primal, Stmt* v) {
    if (!v || !is_real(primal) || isa<ConstStmt>(primal)) return;
    if (int64_t i = forward_index(primal); i >= 0 && value_mode_[i]) {
      Stmt*& cur = adj_value_[i];
      cur = cur ? b_.binary(BinaryOp::add, cur, v) : v;
      return;
    }
    Stmt* a = adjoint_alloca(primal);
    Stmt* cur = b_.local_load(a);
    b_.local_store(a, b_.binary(BinaryOp::add, cur, v));
  }

  // Constants of the reverse code, one per type and value, at the top of the IB (they dominate
  // all of it).
  Stmt* constant(const Stmt* like, double v) {
    Value value = Value::from_double(like->type.scalar, v);
    for (auto& [c, stmt] : constants_)
      if (c.identical(value)) return stmt;
    InsertionGuard guard(b_);
    b_.set_insertion_point_before(*ib_.front());
    Stmt* stmt = b_.constant(value);
    constants_.emplace_back(value, stmt);
    return stmt;
  }
  // The address of the gradient of the element that differentiable pointer `ptr` addresses
  // (is_differentiable_ptr): the gradient field's element, or the ndarray's gradient array.
  Stmt* gradient_ptr(const Stmt* ptr) {
    if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) {
      const auto& grad = k_.field(g->field).grad;
      PB_ASSERT(grad.has_value(), "a differentiable field pointer whose field has no gradient field");
      return b_.global_ptr(*grad, {g->indices().begin(), g->indices().end()});
    }
    auto* e = static_cast<const ExternalPtrStmt*>(ptr);
    auto g = k_.make<ExternalPtrStmt>(e->base(), std::vector<Stmt*>(e->indices().begin(), e->indices().end()));
    g->element_shape = e->element_shape;
    g->layout = e->layout;
    g->is_grad = true;
    return b_.insert(std::move(g));
  }
  Stmt* mul(Stmt* a, Stmt* c) { return b_.binary(BinaryOp::mul, a, c); }
  Stmt* div(Stmt* a, Stmt* c) { return b_.binary(BinaryOp::div, a, c); }
  Stmt* neg(Stmt* a) { return b_.unary(UnaryOp::neg, a); }
  Stmt* un(UnaryOp op, Stmt* a) { return b_.unary(op, a); }

  void reverse_block(const std::vector<Stmt*>& forward) {
    for (auto it = forward.rbegin(); it != forward.rend(); ++it) reverse(*it);
  }

  // Whether `x` can receive an adjoint. Formulas for one that cannot are not built at all, so
  // they never read forward values nothing needs (x in x * c).
  static bool wants_adjoint(const Stmt* x) { return is_real(x) && !isa<ConstStmt>(x); }

  // One formula per op declared to pass a gradient (ir/ops.h); the switches list every op, so a
  // new op without a formula here or a `none` declaration there does not compile.
  void reverse_unary(UnaryOpStmt& s, Stmt* a) {
    Stmt* x = s.x();
    if (!wants_adjoint(x) || gradient_of(s.op) == Gradient::none) return;
    switch (s.op) {
      case UnaryOp::neg:
        return accumulate(x, neg(a));
      case UnaryOp::abs:
        return accumulate(x, mul(a, un(UnaryOp::sgn, x)));
      case UnaryOp::sin:
        return accumulate(x, mul(a, un(UnaryOp::cos, x)));
      case UnaryOp::cos:
        return accumulate(x, neg(mul(a, un(UnaryOp::sin, x))));
      case UnaryOp::tan: {
        Stmt* t = un(UnaryOp::tan, x);
        return accumulate(x, mul(a, b_.binary(BinaryOp::add, constant(x, 1), mul(t, t))));
      }
      case UnaryOp::tanh: {
        Stmt* t = un(UnaryOp::tanh, x);
        return accumulate(x, mul(a, b_.binary(BinaryOp::sub, constant(x, 1), mul(t, t))));
      }
      case UnaryOp::asin:
      case UnaryOp::acos: {
        Stmt* d = div(a, un(UnaryOp::sqrt, b_.binary(BinaryOp::sub, constant(x, 1), mul(x, x))));
        return accumulate(x, s.op == UnaryOp::asin ? d : neg(d));
      }
      case UnaryOp::exp:
        return accumulate(x, mul(a, un(UnaryOp::exp, x)));
      case UnaryOp::log:
        return accumulate(x, div(a, x));
      case UnaryOp::sqrt:
        return accumulate(x, div(mul(a, constant(x, 0.5)), un(UnaryOp::sqrt, x)));
      case UnaryOp::rsqrt: {
        Stmt* r = un(UnaryOp::rsqrt, x);
        return accumulate(x, mul(mul(a, constant(x, -0.5)), mul(r, mul(r, r))));
      }
      case UnaryOp::cast_value:
        if (is_real(x)) accumulate(x, b_.cast(a, x->type.scalar));
        return;
      case UnaryOp::sgn:
      case UnaryOp::floor:
      case UnaryOp::ceil:
      case UnaryOp::round:
      case UnaryOp::logic_not:
      case UnaryOp::bit_not:
      case UnaryOp::cast_bits:
        PB_ASSERT(false, "an op declared without gradient has no formula");
    }
  }

  void reverse_binary(BinaryOpStmt& s, Stmt* a) {
    Stmt* l = s.lhs();
    Stmt* r = s.rhs();
    bool dl = wants_adjoint(l), dr = wants_adjoint(r);
    if ((!dl && !dr) || gradient_of(s.op) == Gradient::none) return;
    switch (s.op) {
      case BinaryOp::add:
        if (dl) accumulate(l, a);
        if (dr) accumulate(r, a);
        return;
      case BinaryOp::sub:
        if (dl) accumulate(l, a);
        if (dr) accumulate(r, neg(a));
        return;
      case BinaryOp::mul:
        if (dl) accumulate(l, mul(a, r));
        if (dr) accumulate(r, mul(a, l));
        return;
      case BinaryOp::div:
        if (dl) accumulate(l, div(a, r));
        if (dr) accumulate(r, neg(div(mul(a, l), mul(r, r))));
        return;
      case BinaryOp::pow: {
        // d/dx x^y = y x^(y-1); d/dy x^y = log(x) x^y. An integer exponent has no adjoint and
        // enters the formula converted to the base's type.
        if (dl) {
          Stmt* y = is_real(r) ? r : b_.cast(r, l->type.scalar);
          accumulate(l, mul(a, mul(y, b_.binary(BinaryOp::pow, l, b_.binary(BinaryOp::sub, y, constant(y, 1))))));
        }
        if (dr) accumulate(r, mul(a, mul(un(UnaryOp::log, l), b_.binary(BinaryOp::pow, l, r))));
        return;
      }
      case BinaryOp::atan2: {
        // atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
        Stmt* n = b_.binary(BinaryOp::add, mul(l, l), mul(r, r));
        if (dl) accumulate(l, div(mul(a, r), n));
        if (dr) accumulate(r, neg(div(mul(a, l), n)));
        return;
      }
      case BinaryOp::mod: {
        // Float mod is the C remainder x - y * trunc(x / y): d/dx = 1, d/dy = -trunc(x / y)
        // (between its jumps, where the finite difference agrees).
        if (dl) accumulate(l, a);
        if (dr) {
          Stmt* q = div(l, r);
          Stmt* t =
              b_.select(b_.binary(BinaryOp::cmp_lt, q, constant(q, 0)), un(UnaryOp::ceil, q), un(UnaryOp::floor, q));
          accumulate(r, neg(mul(a, t)));
        }
        return;
      }
      case BinaryOp::min:
      case BinaryOp::max: {
        // The gradient goes to the operand the forward op chose (lhs on ties).
        Stmt* other_wins = b_.binary(s.op == BinaryOp::min ? BinaryOp::cmp_lt : BinaryOp::cmp_gt, r, l);
        Stmt* zero = constant(&s, 0);
        if (dl) accumulate(l, b_.select(other_wins, zero, a));
        if (dr) accumulate(r, b_.select(other_wins, a, zero));
        return;
      }
      case BinaryOp::floordiv:
      case BinaryOp::cmp_lt:
      case BinaryOp::cmp_le:
      case BinaryOp::cmp_gt:
      case BinaryOp::cmp_ge:
      case BinaryOp::cmp_eq:
      case BinaryOp::cmp_ne:
      case BinaryOp::bit_and:
      case BinaryOp::bit_or:
      case BinaryOp::bit_xor:
      case BinaryOp::bit_shl:
      case BinaryOp::bit_shr:
      case BinaryOp::bit_sar:
      case BinaryOp::logical_and:
      case BinaryOp::logical_or:
        PB_ASSERT(false, "an op declared without gradient has no formula");
    }
  }

  // The reverse of one forward statement, by kind: every kind has an overload below, so a new
  // kind without one does not compile.
  void reverse(Stmt* s) {
    visit(*s, [&](auto& t) { reverse_stmt(t); });
  }

  void reverse_stmt(UnaryOpStmt& s) {
    if (Stmt* a = is_real(&s) ? adjoint_value(&s) : nullptr) reverse_unary(s, a);
  }
  void reverse_stmt(BinaryOpStmt& s) {
    if (Stmt* a = is_real(&s) ? adjoint_value(&s) : nullptr) reverse_binary(s, a);
  }
  void reverse_stmt(TernaryOpStmt& s) {
    if (Stmt* a = is_real(&s) ? adjoint_value(&s) : nullptr) {
      Stmt* zero = constant(&s, 0);
      accumulate(s.a(), b_.select(s.cond(), a, zero));
      accumulate(s.b(), b_.select(s.cond(), zero, a));
    }
  }
  void reverse_stmt(LocalLoadStmt& s) {
    if (Stmt* a = is_real(&s) ? adjoint_value(&s) : nullptr) accumulate(s.src(), a);
  }
  void reverse_stmt(LocalStoreStmt& s) {
    if (Stmt* adj = is_real(s.val()) ? local_adjoint(s, s.dest()) : nullptr) {
      accumulate(s.val(), b_.local_load(adj));
      b_.local_store(adj, constant(s.val(), 0));
    }
  }
  void reverse_stmt(GlobalLoadStmt& s) { reverse_global_load(s); }
  void reverse_stmt(GlobalStoreStmt& s) {
    if (!is_differentiable_ptr(k_, s.dest())) return;
    Stmt* gp = gradient_ptr(s.dest());
    accumulate(s.val(), b_.global_load(gp));
    b_.global_store(gp, constant(s.val(), 0));
    erase_.push_back(&s);
  }
  void reverse_stmt(AtomicOpStmt& s) { reverse_atomic(s); }
  void reverse_stmt(IfStmt& s) { reverse_if(s); }
  void reverse_stmt(RangeForStmt& s) { reverse_loop(s); }
  void reverse_stmt(StructForStmt& s) {
    reject(k_, s, "a struct for inside an independent block",
           "struct fors are the kernel's parallel dimension: keep them at the top level");
  }
  void reverse_stmt(WhileStmt& s) { reject_while(s); }
  void reverse_stmt(WhileControlStmt& s) { reject_while(s); }
  void reverse_stmt(ContinueStmt& s) { reject_while(s); }
  void reject_while(const Stmt& s) {
    reject(k_, s, "while loops and continue have no reverse (their trip count is data-dependent)",
           "rewrite the loop as a range-for with a bound, and continue as an if around the rest of the body");
  }
  void reverse_stmt(AdStackLoadTopStmt& s) {
    if (Stmt* a = is_real(&s) ? adjoint_value(&s) : nullptr) b_.stack_acc_adj(s.stack(), a);
  }
  void reverse_stmt(AdStackPushStmt& s) {
    // The pushed value's adjoint is what accumulated at the top; then the top goes away, so the
    // reverse code before this point sees the stack as the forward code did.
    if (is_real(s.val()) && !isa<ConstStmt>(s.val())) accumulate(s.val(), b_.stack_load_top_adj(s.stack()));
    b_.stack_pop(s.stack());
  }
  void reverse_stmt(AdStackPopStmt& s) { reject_reverse_stack_op(s); }
  void reverse_stmt(AdStackLoadTopAdjStmt& s) { reject_reverse_stack_op(s); }
  void reverse_stmt(AdStackAccAdjointStmt& s) { reject_reverse_stack_op(s); }
  void reject_reverse_stack_op(const Stmt& s) {
    reject(k_, s, "the forward kernel already contains reverse-mode stack statements (pop, adjoint access)",
           "give make_adjoint the forward kernel, not one it already differentiated");
  }
  // No reverse code: values with no adjoint of their own, addresses, scopes and side effects the
  // reverse pass does not repeat.
  void reverse_stmt(ConstStmt&) {}
  void reverse_stmt(ArgLoadStmt&) {}
  void reverse_stmt(ExternalTensorShapeAlongAxisStmt&) {}
  void reverse_stmt(AllocaStmt&) {}
  void reverse_stmt(GlobalPtrStmt&) {}
  void reverse_stmt(ExternalPtrStmt&) {}
  void reverse_stmt(LoopIndexStmt&) {}
  void reverse_stmt(AdStackAllocaStmt&) {}
  void reverse_stmt(PrintStmt&) {}
  void reverse_stmt(AssertStmt&) {}
  // The offloaded stage: check_global_access refuses it before any pass of reverse_ad runs.
  void reverse_stmt(OffloadedStmt& s) { reject_offloaded(s); }
  void reverse_stmt(GlobalTemporaryStmt& s) { reject_offloaded(s); }
  void reverse_stmt(GetRootStmt& s) { reject_offloaded(s); }
  void reverse_stmt(ThreadLocalPtrStmt& s) { reject_offloaded(s); }
  void reverse_stmt(SNodeLookupStmt& s) { reject_offloaded(s); }
  void reverse_stmt(GetChStmt& s) { reject_offloaded(s); }
  void reverse_stmt(LinearizeStmt& s) { reject_offloaded(s); }
  void reverse_stmt(IntegerOffsetStmt& s) { reject_offloaded(s); }
  void reverse_stmt(BitExtractStmt& s) { reject_offloaded(s); }
  void reverse_stmt(LoopLinearIndexStmt& s) { reject_offloaded(s); }
  void reverse_stmt(ReturnStmt& s) { reject_offloaded(s); }
  void reject_offloaded(const Stmt& s) { reject(k_, s, ad::kOffloadedStageMessage, ad::kOffloadedStageRemedy); }
  // Kinds no backend compiles: check_global_access refuses them first too.
  template <class T>
    requires(has_no_backend(T::kKind))
  void reverse_stmt(T& s) {
    reject(k_, s, ad::kNoBackendMessage, ad::kNoBackendRemedy);
  }

  void reverse_global_load(GlobalLoadStmt& s) {
    Stmt* a = is_real(&s) ? adjoint_value(&s) : nullptr;
    if (!a) return;
    if (is_differentiable_ptr(k_, s.src())) b_.atomic(AtomicOp::add, gradient_ptr(s.src()), a);
  }

  void reverse_atomic(AtomicOpStmt& s) {
    if (!is_differentiable_ptr(k_, s.dest())) {
      if (isa<AllocaStmt>(s.dest()) && is_real(s.val())) {
        // A local accumulation x op= v (reverse_ad demotes atomics on locals of the iteration first,
        // so these are locals the iterations share): only add and sub are linear in v, and the old
        // value has no reverse.
        if (s.op != AtomicOp::add && s.op != AtomicOp::sub)
          reject(k_, s, fmt::format("atomic {} on a local is not differentiable", op_name(s.op)),
                 "declare the local inside the loop (reverse_ad then demotes the atomic to load, op, store), "
                 "use add or sub, or a plain store");
        if (s.has_users())
          reject(k_, s, "the old value an atomic on a local returns is used",
                 "declare the local inside the loop (reverse_ad then demotes the atomic to load, op, store), "
                 "or read it with a local load");
        if (Stmt* adj = local_adjoint(s, s.dest())) {
          Stmt* g = b_.local_load(adj);
          accumulate(s.val(), s.op == AtomicOp::add ? g : neg(g));
        }
      }
      return;
    }
    if (s.op != AtomicOp::add && s.op != AtomicOp::sub)
      reject(
          k_, s,
          fmt::format("atomic {} on the differentiable {} (the reference compiler silently differentiates it as add)",
                      op_name(s.op), target_name(k_, s.dest())),
          "use atomic add/sub, or compute the value with min/max/mul on locals and store it");
    if (s.has_users())
      reject(k_, s, "the old value an atomic on a differentiable field or ndarray returns is used",
             "read the element with a global load instead");
    Stmt* gp = gradient_ptr(s.dest());
    Stmt* g = b_.global_load(gp);
    accumulate(s.val(), s.op == AtomicOp::add ? g : neg(g));
    erase_.push_back(&s);
  }

  void reverse_if(IfStmt& s) {
    IfStmt* rev = b_.if_(s.cond());
    {
      InsertionGuard guard(b_);
      b_.set_insertion_point_end(*rev->true_block);
      reverse_block(s.true_block->statements());
    }
    if (s.false_block) {
      InsertionGuard guard(b_);
      b_.set_insertion_point_end(rev->ensure_false_block());
      reverse_block(s.false_block->statements());
    }
  }

  void reverse_loop(RangeForStmt& s) {
    RangeForStmt* rev = b_.range_for(s.begin(), s.end(), !s.reversed);
    rev->block_dim = s.block_dim;
    reverse_of_[s.body.get()] = rev->body.get();
    InsertionGuard guard(b_);
    b_.set_insertion_point_end(*rev->body);
    reverse_block(s.body->statements());
  }

  // The reverse of a statement re-reads the `stack load top` operands it needs at the point that
  // mirrors the statement. When the stack changes between the forward read and that statement
  // (an if whose branch pushes to its condition's stack, a push between a load and its use),
  // the value is first copied onto a snapshot stack of its own, pushed once right after the read.
  // Returns how many operands now read a snapshot. Needs index_forward_code's positions.
  int64_t snapshot_clobbered_stack_reads() {
    std::unordered_map<const Stmt*, std::vector<const Stmt*>> writes;
    for (Stmt* s : forward_.order())
      if (isa<AdStackPushStmt>(s) || isa<AdStackPopStmt>(s)) writes[s->operand(0)].push_back(s);
    int64_t made = 0;
    std::unordered_map<Stmt*, Stmt*> snapshot_of;
    for (Stmt* s : std::vector<Stmt*>(forward_.order())) {
      for (size_t slot : ad::required_operand_slots(*s)) {
        auto* top = dyn_cast<AdStackLoadTopStmt>(s->operand(slot));
        if (!top || ad::loop_depth_in(*top, ib_) == 0) continue;
        const auto& w = writes[top->stack()];
        bool clobbered = false;
        if (isa<GlobalPtrStmt>(s) || isa<ExternalPtrStmt>(s)) {
          for (const Stmt::Use& u : s->uses())
            clobbered = clobbered || ad::stack_clobbered_between(forward_, *top, *u.user(), w);
        } else {
          clobbered = ad::stack_clobbered_between(forward_, *top, *s, w);
        }
        if (!clobbered) continue;
        auto [it, fresh] = snapshot_of.emplace(top, nullptr);
        if (fresh) it->second = make_snapshot(*top);
        s->set_operand(slot, it->second);
        ++r_.snapshots;
        ++made;
      }
    }
    return made;
  }

  Stmt* make_snapshot(AdStackLoadTopStmt& top) {
    auto* source = static_cast<AdStackAllocaStmt*>(top.stack());
    InsertionGuard guard(b_);
    b_.set_insertion_point_before(*ib_.front());
    AdStackAllocaStmt* z = b_.stack_alloc(source->type.scalar, source->max_size);
    z->size = source->size;
    b_.set_insertion_point_after(top);
    b_.stack_push(z, &top);
    return b_.stack_load_top(z);
  }

  Kernel& k_;
  Builder b_;
  Block& ib_;
  MakeAdjointResult& r_;
  Numbering forward_;                                    // the IB's forward code, in pre-order
  std::vector<Stmt*> top_level_;                         // the statements directly in the IB
  std::vector<uint8_t> value_mode_;                      // by position: adjoint is an SSA value
  std::vector<Stmt*> adj_value_;                         // by position: its current value
  std::vector<std::pair<Value, Stmt*>> constants_;       // constants of the reverse code
  std::unordered_map<const Stmt*, Stmt*> adj_;           // primal -> adjoint alloca
  std::unordered_map<const Block*, Block*> reverse_of_;  // forward loop body -> reverse body
  std::vector<Stmt*> erase_;                             // forward writes to differentiable fields
};

// Differentiable writes must be inside an IB, where their reverse code goes: looks at every
// statement outside the IBs (and only those: the IBs hold nearly all of a kernel).
void check_writes_outside(const Kernel& k, const Block& b, const std::unordered_set<const Block*>& is_ib) {
  if (is_ib.count(&b)) return;
  for (const Stmt* s : b) {
    const Stmt* ptr = nullptr;
    if (auto* gs = dyn_cast<GlobalStoreStmt>(s)) ptr = gs->dest();
    if (auto* at = dyn_cast<AtomicOpStmt>(s)) ptr = at->dest();
    if (ptr && is_differentiable_ptr(k, ptr))
      reject(k, *s, "it writes a differentiable field or ndarray outside every loop body that holds reverse code",
             "move it into the loop that computes its value, or into a `for _ in range(1)` loop");
    if (s->is_container())
      for (const Block* child : s->blocks())
        if (child) check_writes_outside(k, *child, is_ib);
  }
}

void check_writes_inside(const Kernel& k, const std::vector<Block*>& ibs) {
  check_writes_outside(k, k.root(), std::unordered_set<const Block*>(ibs.begin(), ibs.end()));
}

}  // namespace

MakeAdjointResult make_adjoint(Kernel& k) {
  MakeAdjointResult r;
  auto ibs = find_independent_blocks(k);
  check_writes_inside(k, ibs);
  for (Block* ib : ibs) {
    Adjointer(k, *ib, r).run();
    ++r.blocks;
  }
  return r;
}

PassInfo MakeAdjointPass::info() {
  return declare_pass<MakeAdjointPass>(
      {.name = "make_adjoint",
       .summary = "Appends the reverse code of each independent block after its forward code",
       .options = {},
       .statistics = {"blocks", "adjoint_statements", "forward_writes_removed", "snapshots"},
       .create = {},
       .may_break_dominance = true});
}

PassResult MakeAdjointPass::run(Kernel& k, const PassOptions&) {
  MakeAdjointResult r = make_adjoint(k);
  return {r.blocks > 0,
          {{"blocks", r.blocks},
           {"adjoint_statements", r.adjoint_statements},
           {"forward_writes_removed", r.forward_writes_removed},
           {"snapshots", r.snapshots}}};
}

}  // namespace pb::passes
