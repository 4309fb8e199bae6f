// Compile-time-checked dispatch over statement kinds.
// `visit(stmt, f)` calls `f(ConcreteStmt&)` for the statement's kind; `f` is usually a struct
// with one operator() per kind (or a generic `auto&` fallback). A kind `f` cannot accept is a
// compile error, so adding a statement kind shows every visitor that must learn it.
#pragma once

#include <utility>

#include "ir/statements.h"

namespace pb::ir {

template <class F>
decltype(auto) visit(Stmt& s, F&& f) {
  switch (s.kind()) {
#define PB_X(Name, text, traits) \
  case StmtKind::Name:           \
    return std::forward<F>(f)(static_cast<Name##Stmt&>(s));
    PB_STMT_KINDS(PB_X)
#undef PB_X
  }
  __builtin_unreachable();
}

template <class F>
decltype(auto) visit(const Stmt& s, F&& f) {
  switch (s.kind()) {
#define PB_X(Name, text, traits) \
  case StmtKind::Name:           \
    return std::forward<F>(f)(static_cast<const Name##Stmt&>(s));
    PB_STMT_KINDS(PB_X)
#undef PB_X
  }
  __builtin_unreachable();
}

// Calls f(Stmt&) on every statement of `b` and its nested blocks, in pre-order (a container
// before its children). `f` must not erase statements other than the one it is given.
template <class F>
void walk(const Block& b, F&& f) {
  Stmt* s = b.front();
  while (s) {
    Stmt* next = s->next();
    Stmt* prev = s->prev();
    f(*s);
    if ((prev ? prev->next() : b.front()) != s) {  // f erased s
      s = next;
      continue;
    }
    if (s->is_container())
      for (Block* child : s->blocks())
        if (child) walk(*child, f);
    s = next;
  }
}

// Pre-order snapshot of every statement under `b`.
std::vector<Stmt*> collect_preorder(const Block& b);

}  // namespace pb::ir
