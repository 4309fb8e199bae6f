#include "ir/iteration_private.h"

#include "ir/statements.h"

namespace pb::ir {
namespace {

bool is_store_to(const Stmt& s, const Stmt& alloca) {
  const auto* st = dyn_cast<LocalStoreStmt>(&s);
  return st && st->dest() == &alloca;
}

// True when a store to `alloca` precedes `user` in its block or in an enclosing block below the
// root statement holding it (a store at the root does not count: every iteration sees it).
bool read_after_store(const Stmt& user, const Stmt& alloca) {
  for (const Stmt* at = &user; at->parent_stmt(); at = at->parent_stmt())
    for (const Stmt* s = at->prev(); s; s = s->prev())
      if (is_store_to(*s, alloca)) return true;
  return false;
}

}  // namespace

bool iteration_private(const Stmt& alloca) {
  if (!isa<AllocaStmt>(&alloca) || alloca.parent_stmt() || alloca.type.tensor) return false;
  for (const Stmt::Use& u : alloca.uses()) {
    const Stmt& user = *u.user();
    if (isa<LocalStoreStmt>(&user) && u.slot() == 0) continue;
    bool read = (isa<LocalLoadStmt>(&user) || isa<AtomicOpStmt>(&user)) && u.slot() == 0;
    if (!read || !read_after_store(user, alloca)) return false;
  }
  return true;
}

}  // namespace pb::ir
