#include "ir/relayout.h"

#include <utility>

#include "ir/stmt_pool.h"
#include "ir/visitor.h"

namespace pb::ir {

// Friend of Stmt and Block: after a statement's move, its nested blocks and spilled buffers follow.
class Relocator {
 public:
  size_t moved = 0;

  void block(Block& b) {
    for (Stmt* s = b.first_; s;) {
      s = move(s);
      if (s->is_container())
        for (Block* child : s->blocks())
          if (child) block(*child);
      s = s->next_;
    }
  }

 private:
  Stmt* move(Stmt* old) {
    Stmt* s = visit(*old, [](auto& o) -> Stmt* {
      using T = std::remove_cvref_t<decltype(o)>;
      static_assert(RelocatableStmt<T>, "a statement kind relayout cannot move (see RelocatableStmt)");
      return new T(std::move(o));
    });
    s->operands_.move_heap_buffer();
    s->uses_.move_heap_buffer();
    if (s->is_container())
      for (Block* child : s->blocks())
        if (child) child->owner_ = s;
    delete old;  // unlinked and empty: destroying it touches nothing else
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
