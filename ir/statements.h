// The concrete statements of CHI IR, one class per entry of PB_STMT_KINDS: here the lowered
// stage's; ir/statements_stages.h (included at the end) holds the offloaded stage's and the
// interpreter-only kinds read from reference dumps. Operands live in the base class's operand
// list (so use-lists and replace-all-uses work for every kind); the named accessors say which
// slot is which.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/ops.h"
#include "ir/size_expr.h"
#include "ir/stmt.h"
#include "ir/value.h"

namespace pb::ir {

using FieldId = int32_t;

template <class Derived, StmtKind K>
class StmtOf : public Stmt {
 public:
  static constexpr StmtKind kKind = K;
  std::unique_ptr<Stmt> clone_shallow() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }

 protected:
  // The pool aligns blocks to its granule only.
  StmtOf() : Stmt(K) { static_assert(alignof(Derived) <= stmt_pool::kGranule); }
  StmtOf(const StmtOf&) = default;
  StmtOf(StmtOf&&) = default;  // relocation (Stmt(Stmt&&))
};

class ConstStmt : public StmtOf<ConstStmt, StmtKind::Const> {
 public:
  explicit ConstStmt(Value v) : value(v) { type = DataType::of(v.kind()); }
  Value value;
};

// Loads scalar kernel argument `arg_index` (or the base of an ndarray argument).
class ArgLoadStmt : public StmtOf<ArgLoadStmt, StmtKind::ArgLoad> {
 public:
  ArgLoadStmt(int index, DataType t) : arg_index(index) { type = t; }
  int arg_index;
};

// A local variable, zero-initialised each time the statement executes. Type is `*T`.
class AllocaStmt : public StmtOf<AllocaStmt, StmtKind::Alloca> {
 public:
  explicit AllocaStmt(ScalarKind k) { type = DataType::pointer_to(k); }
  explicit AllocaStmt(DataType value) { type = value.as_pointer(); }  // a tensor alloca
};

class LocalLoadStmt : public StmtOf<LocalLoadStmt, StmtKind::LocalLoad> {
 public:
  explicit LocalLoadStmt(Stmt* src) { add_operand(src); }
  Stmt* src() const { return operand(0); }
};

class LocalStoreStmt : public StmtOf<LocalStoreStmt, StmtKind::LocalStore> {
 public:
  LocalStoreStmt(Stmt* dest, Stmt* val) {
    add_operand(dest);
    add_operand(val);
  }
  Stmt* dest() const { return operand(0); }
  Stmt* val() const { return operand(1); }
};

// Address of one cell of field `field`; operands are the indices (none for a 0-d field).
class GlobalPtrStmt : public StmtOf<GlobalPtrStmt, StmtKind::GlobalPtr> {
 public:
  GlobalPtrStmt(FieldId f, const std::vector<Stmt*>& indices, bool act = true) : field(f), activate(act) {
    for (Stmt* i : indices) add_operand(i);
  }
  std::span<Stmt* const> indices() const { return operands(); }
  FieldId field;
  bool activate;
};

// Address of one element of an ndarray argument: operand 0 is the argload, then indices.
class ExternalPtrStmt : public StmtOf<ExternalPtrStmt, StmtKind::ExternalPtr> {
 public:
  ExternalPtrStmt(Stmt* base, const std::vector<Stmt*>& indices) {
    add_operand(base);
    for (Stmt* i : indices) add_operand(i);
  }
  Stmt* base() const { return operand(0); }
  std::span<Stmt* const> indices() const { return operands().subspan(1); }
  std::vector<int> element_shape;  // printed as ", (3)" when present
  std::string layout = "AOS";
  bool is_grad = false;
  bool is_dual = false;  // the tangent array of a forward-mode kernel (make_dual); printed only when set
};

class GlobalLoadStmt : public StmtOf<GlobalLoadStmt, StmtKind::GlobalLoad> {
 public:
  explicit GlobalLoadStmt(Stmt* ptr) { add_operand(ptr); }
  Stmt* src() const { return operand(0); }
  bool is_volatile = false;
};

class GlobalStoreStmt : public StmtOf<GlobalStoreStmt, StmtKind::GlobalStore> {
 public:
  GlobalStoreStmt(Stmt* dest, Stmt* val) {
    add_operand(dest);
    add_operand(val);
  }
  Stmt* dest() const { return operand(0); }
  Stmt* val() const { return operand(1); }
};

// Read-modify-write of a global (or local) cell; returns the old value.
class AtomicOpStmt : public StmtOf<AtomicOpStmt, StmtKind::AtomicOp> {
 public:
  AtomicOpStmt(AtomicOp o, Stmt* dest, Stmt* val) : op(o) {
    add_operand(dest);
    add_operand(val);
  }
  Stmt* dest() const { return operand(0); }
  Stmt* val() const { return operand(1); }
  AtomicOp op;
};

// For casts the target type is the statement's own type.
class UnaryOpStmt : public StmtOf<UnaryOpStmt, StmtKind::UnaryOp> {
 public:
  UnaryOpStmt(UnaryOp o, Stmt* x) : op(o) { add_operand(x); }
  Stmt* x() const { return operand(0); }
  UnaryOp op;
};

class BinaryOpStmt : public StmtOf<BinaryOpStmt, StmtKind::BinaryOp> {
 public:
  BinaryOpStmt(BinaryOp o, Stmt* l, Stmt* r) : op(o) {
    add_operand(l);
    add_operand(r);
  }
  Stmt* lhs() const { return operand(0); }
  Stmt* rhs() const { return operand(1); }
  BinaryOp op;
};

// select(cond, a, b)
class TernaryOpStmt : public StmtOf<TernaryOpStmt, StmtKind::TernaryOp> {
 public:
  TernaryOpStmt(Stmt* c, Stmt* a, Stmt* b) {
    add_operand(c);
    add_operand(a);
    add_operand(b);
  }
  Stmt* cond() const { return operand(0); }
  Stmt* a() const { return operand(1); }
  Stmt* b() const { return operand(2); }
};

class IfStmt : public StmtOf<IfStmt, StmtKind::If> {
 public:
  explicit IfStmt(Stmt* c) : true_block(std::make_unique<Block>(this)) { add_operand(c); }
  IfStmt(const IfStmt& o) : StmtOf(o), true_block(std::make_unique<Block>(this)) {
    if (o.false_block) false_block = std::make_unique<Block>(this);
  }
  IfStmt(IfStmt&&) = default;
  Stmt* cond() const { return operand(0); }
  BlockList blocks() const override { return BlockList(true_block.get(), false_block.get()); }
  Block& ensure_false_block() {
    if (!false_block) false_block = std::make_unique<Block>(this);
    return *false_block;
  }
  std::unique_ptr<Block> true_block;
  std::unique_ptr<Block> false_block;  // null when the dump had no `else`
};

// Serial loop over [begin, end), or parallel when it is a direct child of the kernel root.
class RangeForStmt : public StmtOf<RangeForStmt, StmtKind::RangeFor> {
 public:
  RangeForStmt(Stmt* b, Stmt* e) : body(std::make_unique<Block>(this)) {
    add_operand(b);
    add_operand(e);
  }
  RangeForStmt(const RangeForStmt& o)
      : StmtOf(o),
        reversed(o.reversed),
        block_dim(o.block_dim),
        loop_name(o.loop_name),
        body(std::make_unique<Block>(this)) {}
  RangeForStmt(RangeForStmt&&) = default;
  Stmt* begin() const { return operand(0); }
  Stmt* end() const { return operand(1); }
  BlockList blocks() const override { return BlockList(body.get()); }
  bool reversed = false;  // iterate end-1 down to begin
  int block_dim = 0;      // 0 prints as "adaptive"
  std::string loop_name;  // optional
  std::unique_ptr<Block> body;
};

// Parallel loop over every cell of an index space: a dense space from the header, or the
// index space of a field named directly.
class StructForStmt : public StmtOf<StructForStmt, StmtKind::StructFor> {
 public:
  explicit StructForStmt(std::string s) : space(std::move(s)), body(std::make_unique<Block>(this)) {}
  StructForStmt(const StructForStmt& o)
      : StmtOf(o),
        space(o.space),
        none_marker(o.none_marker),
        block_dim(o.block_dim),
        body(std::make_unique<Block>(this)) {}
  StructForStmt(StructForStmt&&) = default;
  BlockList blocks() const override { return BlockList(body.get()); }
  std::string space;
  bool none_marker = false;  // the reference printer's glued "none" scratch-pad marker
  int block_dim = 0;
  std::unique_ptr<Block> body;
};

// Operand 0 is the enclosing loop statement.
class LoopIndexStmt : public StmtOf<LoopIndexStmt, StmtKind::LoopIndex> {
 public:
  LoopIndexStmt(Stmt* loop, int ax) : axis(ax) {
    add_operand(loop);
    type = DataType::of(ScalarKind::i32);
  }
  Stmt* loop() const { return operand(0); }
  int axis;
};

// `while true { ... }`: left through a while control whose condition is false.
class WhileStmt : public StmtOf<WhileStmt, StmtKind::While> {
 public:
  WhileStmt() : body(std::make_unique<Block>(this)) {}
  WhileStmt(const WhileStmt& o) : StmtOf(o), body(std::make_unique<Block>(this)) {}
  WhileStmt(WhileStmt&&) = default;
  BlockList blocks() const override { return BlockList(body.get()); }
  std::unique_ptr<Block> body;
};

// mask &= cond; leaves the enclosing while when the mask becomes zero. Without a mask (the
// reference prints `while control nullptr, $c`), leaves it when cond is zero.
class WhileControlStmt : public StmtOf<WhileControlStmt, StmtKind::WhileControl> {
 public:
  WhileControlStmt(Stmt* mask, Stmt* c) {
    if (mask) add_operand(mask);
    add_operand(c);
  }
  bool has_mask() const { return num_operands() == 2; }
  Stmt* mask() const { return has_mask() ? operand(0) : nullptr; }
  Stmt* cond() const { return operand(num_operands() - 1); }
};

// Skips the rest of the innermost enclosing loop body. `scoped`: printed with the reference's
// `(scope=$L)`, L that loop (a range for, struct for, while, mesh for or loop task).
class ContinueStmt : public StmtOf<ContinueStmt, StmtKind::Continue> {
 public:
  ContinueStmt() = default;
  explicit ContinueStmt(bool scoped_) : scoped(scoped_) {}
  bool scoped = false;
};

// A per-thread autodiff stack of (primal, adjoint) entries. max_size 0 means "adaptive": to be
// sized by determine_ad_stack_size, which sets either max_size or (with max_size 0) `size`, a
// capacity evaluated when the alloc executes. The statement's type is the element type.
class AdStackAllocaStmt : public StmtOf<AdStackAllocaStmt, StmtKind::AdStackAlloca> {
 public:
  AdStackAllocaStmt(ScalarKind k, int64_t max) : max_size(max) { type = DataType::of(k); }
  bool is_sized() const { return max_size > 0 || size != nullptr; }
  int64_t max_size;
  SizeExprPtr size;  // null: none
};

template <class Derived, StmtKind K>
class AdStackOp : public StmtOf<Derived, K> {
 public:
  Stmt* stack() const { return this->operand(0); }

 protected:
  explicit AdStackOp(Stmt* s) {
    this->add_operand(s);
    if (s) this->type = DataType::of(s->type.scalar);
  }
};

class AdStackPushStmt : public AdStackOp<AdStackPushStmt, StmtKind::AdStackPush> {
 public:
  AdStackPushStmt(Stmt* s, Stmt* v) : AdStackOp(s) { add_operand(v); }
  Stmt* val() const { return operand(1); }
};
class AdStackPopStmt : public AdStackOp<AdStackPopStmt, StmtKind::AdStackPop> {
 public:
  explicit AdStackPopStmt(Stmt* s) : AdStackOp(s) {}
};
class AdStackLoadTopStmt : public AdStackOp<AdStackLoadTopStmt, StmtKind::AdStackLoadTop> {
 public:
  explicit AdStackLoadTopStmt(Stmt* s) : AdStackOp(s) {}
};
class AdStackLoadTopAdjStmt : public AdStackOp<AdStackLoadTopAdjStmt, StmtKind::AdStackLoadTopAdj> {
 public:
  explicit AdStackLoadTopAdjStmt(Stmt* s) : AdStackOp(s) {}
};
class AdStackAccAdjointStmt : public AdStackOp<AdStackAccAdjointStmt, StmtKind::AdStackAccAdjoint> {
 public:
  AdStackAccAdjointStmt(Stmt* s, Stmt* v) : AdStackOp(s) { add_operand(v); }
  Stmt* val() const { return operand(1); }
};

// Prints a mix of string literals and values. Each item is literal text or an operand index.
class PrintStmt : public StmtOf<PrintStmt, StmtKind::Print> {
 public:
  using Item = std::variant<std::string, size_t>;
  PrintStmt() = default;
  void add_text(std::string t) { items.emplace_back(std::move(t)); }
  void add_value(Stmt* s) {
    items.emplace_back(num_operands());
    add_operand(s);
  }
  std::vector<Item> items;
};

// Fails the launch with `message` (formatted with args) when cond is zero.
class AssertStmt : public StmtOf<AssertStmt, StmtKind::Assert> {
 public:
  AssertStmt(Stmt* c, std::string msg, const std::vector<Stmt*>& args) : message(std::move(msg)) {
    add_operand(c);
    for (Stmt* a : args) add_operand(a);
  }
  Stmt* cond() const { return operand(0); }
  std::span<Stmt* const> args() const { return operands().subspan(1); }
  std::string message;
};

// Downcast with a kind check; nullptr when `s` is not a T.
template <class T>
T* dyn_cast(Stmt* s) {
  return s && s->kind() == T::kKind ? static_cast<T*>(s) : nullptr;
}
template <class T>
const T* dyn_cast(const Stmt* s) {
  return s && s->kind() == T::kKind ? static_cast<const T*>(s) : nullptr;
}
template <class T>
bool isa(const Stmt* s) {
  return s && s->kind() == T::kKind;
}

}  // namespace pb::ir

#include "ir/statements_stages.h"  // every kind is declared by including this header
