// Creates statements with fresh ids and rule-derived types at an insertion point.
// The insertion point is (block, before): new statements go before `before`, or at the end of
// the block when `before` is null. InsertionGuard restores the previous point on scope exit.
#pragma once

#include "ir/kernel.h"

namespace pb::ir {

class Builder {
 public:
  explicit Builder(Kernel& k) : k_(k), block_(&k.root()) {}

  Kernel& kernel() { return k_; }
  Block* block() const { return block_; }
  Stmt* before() const { return before_; }
  void set_insertion_point_end(Block& b) {
    block_ = &b;
    before_ = nullptr;
  }
  void set_insertion_point_before(Stmt& s) {
    block_ = s.parent();
    before_ = &s;
  }
  void set_insertion_point_after(Stmt& s) {
    block_ = s.parent();
    before_ = s.next();
  }

  // Inserts an already built statement at the insertion point, typing it by the rules when its
  // type is not an attribute.
  Stmt* insert(std::unique_ptr<Stmt> s);
  template <class T, class... Args>
  T* create(Args&&... args) {
    return static_cast<T*>(insert(k_.make<T>(std::forward<Args>(args)...)));
  }

  ConstStmt* constant(Value v) { return create<ConstStmt>(v); }
  ConstStmt* const_i32(int32_t v) { return constant(Value::make_i32(v)); }
  ConstStmt* const_f32(float v) { return constant(Value::make_f32(v)); }
  ConstStmt* const_f64(double v) { return constant(Value::make_f64(v)); }
  ArgLoadStmt* argload(int index, ScalarKind k) { return create<ArgLoadStmt>(index, DataType::of(k)); }
  AllocaStmt* alloca(ScalarKind k) { return create<AllocaStmt>(k); }
  LocalLoadStmt* local_load(Stmt* a) { return create<LocalLoadStmt>(a); }
  LocalStoreStmt* local_store(Stmt* a, Stmt* v) { return create<LocalStoreStmt>(a, v); }
  GlobalPtrStmt* global_ptr(FieldId f, const std::vector<Stmt*>& idx) { return create<GlobalPtrStmt>(f, idx); }
  GlobalLoadStmt* global_load(Stmt* p) { return create<GlobalLoadStmt>(p); }
  GlobalStoreStmt* global_store(Stmt* p, Stmt* v) { return create<GlobalStoreStmt>(p, v); }
  AtomicOpStmt* atomic(AtomicOp op, Stmt* p, Stmt* v) { return create<AtomicOpStmt>(op, p, v); }
  UnaryOpStmt* unary(UnaryOp op, Stmt* x);
  UnaryOpStmt* cast(Stmt* x, ScalarKind to);
  BinaryOpStmt* binary(BinaryOp op, Stmt* l, Stmt* r) { return create<BinaryOpStmt>(op, l, r); }
  TernaryOpStmt* select(Stmt* c, Stmt* a, Stmt* b) { return create<TernaryOpStmt>(c, a, b); }
  IfStmt* if_(Stmt* c) { return create<IfStmt>(c); }
  RangeForStmt* range_for(Stmt* b, Stmt* e, bool reversed = false);
  StructForStmt* struct_for(const std::string& space) { return create<StructForStmt>(space); }
  LoopIndexStmt* loop_index(Stmt* loop, int axis = 0) { return create<LoopIndexStmt>(loop, axis); }
  AdStackAllocaStmt* stack_alloc(ScalarKind k, int64_t max) { return create<AdStackAllocaStmt>(k, max); }
  AdStackPushStmt* stack_push(Stmt* s, Stmt* v) { return create<AdStackPushStmt>(s, v); }
  AdStackPopStmt* stack_pop(Stmt* s) { return create<AdStackPopStmt>(s); }
  AdStackLoadTopStmt* stack_load_top(Stmt* s) { return create<AdStackLoadTopStmt>(s); }
  AdStackLoadTopAdjStmt* stack_load_top_adj(Stmt* s) { return create<AdStackLoadTopAdjStmt>(s); }
  AdStackAccAdjointStmt* stack_acc_adj(Stmt* s, Stmt* v) { return create<AdStackAccAdjointStmt>(s, v); }

 private:
  Kernel& k_;
  Block* block_;
  Stmt* before_ = nullptr;
};

// Saves a builder's insertion point and restores it when the scope ends.
class InsertionGuard {
 public:
  explicit InsertionGuard(Builder& b) : b_(b), block_(b.block()), before_(b.before()) {}
  ~InsertionGuard() {
    if (before_)
      b_.set_insertion_point_before(*before_);
    else
      b_.set_insertion_point_end(*block_);
  }
  InsertionGuard(const InsertionGuard&) = delete;
  InsertionGuard& operator=(const InsertionGuard&) = delete;

 private:
  Builder& b_;
  Block* block_;
  Stmt* before_;
};

}  // namespace pb::ir
