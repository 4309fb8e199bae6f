#include "ir/relayout.h"

#include <cstring>
#include <type_traits>

#include "ir/stmt_pool.h"

namespace pb::ir {

namespace {

// Bytes of each kind's object, or 0 when its bytes may not be moved with memcpy. An allow-list:
// kinds whose members are scalars, pointers, unique_ptrs and vectors (relocatable bit for bit
// with libstdc++); a kind holding a std::string (its small-string buffer points into the object)
// or anything not reviewed is never moved, so a new kind is safe by default.
template <class T, class... Safe>
constexpr bool one_of() {
  return (std::is_same_v<T, Safe> || ...);
}

template <class T>
constexpr size_t movable_size() {
  constexpr bool reviewed =
      one_of<T, ConstStmt, ArgLoadStmt, AllocaStmt, LocalLoadStmt, LocalStoreStmt, GlobalPtrStmt, GlobalLoadStmt,
             GlobalStoreStmt, AtomicOpStmt, UnaryOpStmt, BinaryOpStmt, TernaryOpStmt, IfStmt, LoopIndexStmt, WhileStmt,
             WhileControlStmt, ContinueStmt, AdStackAllocaStmt, AdStackPushStmt, AdStackPopStmt, AdStackLoadTopStmt,
             AdStackLoadTopAdjStmt, AdStackAccAdjointStmt, PrintStmt, GlobalTemporaryStmt, LinearizeStmt,
             IntegerOffsetStmt, BitExtractStmt, ThreadLocalPtrStmt, LoopLinearIndexStmt, ReturnStmt>();
  return reviewed ? sizeof(T) : 0;
}

size_t movable_size(StmtKind k) {
  switch (k) {
#define PB_X(Name, text, traits) \
  case StmtKind::Name:           \
    return movable_size<Name##Stmt>();
    PB_STMT_KINDS(PB_X)
#undef PB_X
  }
  return 0;
}

}  // namespace

// Friend of Stmt and Block: moving a statement rewrites their private links.
class Relocator {
 public:
  size_t moved = 0;

  void block(Block& b) {
    for (Stmt* s = b.first_; s;) {
      if (size_t bytes = movable_size(s->kind())) s = move(s, bytes);
      if (s->is_container())
        for (Block* child : s->blocks())
          if (child) block(*child);
      s = s->next_;
    }
  }

 private:
  // The moved object takes over the old one's members, so the old one is freed without being
  // destroyed.
  Stmt* move(Stmt* old, size_t bytes) {
    auto* s = static_cast<Stmt*>(stmt_pool::allocate(bytes));
    std::memcpy(static_cast<void*>(s), static_cast<const void*>(old), bytes);
    s->operands_.move_heap_buffer();
    s->uses_.move_heap_buffer();
    Block* parent = s->parent_;
    (s->prev_ ? s->prev_->next_ : parent->first_) = s;
    (s->next_ ? s->next_->prev_ : parent->last_) = s;
    Stmt* const* ops = s->operands_.ops();
    const uint32_t* pos = s->operands_.positions();
    for (size_t i = 0; i < s->operands_.size(); ++i)
      if (Stmt* op = ops[i]) op->uses_[pos[i]] = Stmt::Use(s, static_cast<uint32_t>(i));
    for (const Stmt::Use& u : s->uses_) u.user()->operands_.ops()[u.slot()] = s;
    if (s->is_container())
      for (Block* child : s->blocks())
        if (child) child->owner_ = s;
    stmt_pool::deallocate(old, bytes);
    ++moved;
    return s;
  }
};

size_t relayout(Kernel& k) {
  stmt_pool::FreshSlabs fresh;
  Relocator r;
  r.block(k.root());
  return r.moved;
}

}  // namespace pb::ir
