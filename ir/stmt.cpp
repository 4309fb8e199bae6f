#include "ir/stmt.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "ir/assert.h"
#include "ir/statements.h"

namespace pb::ir {

// Every walk reads statements, so their size is a speed budget: 24 bytes of header, 24 of links,
// 40 of operands, 24 of uses.
static_assert(sizeof(Stmt) == 112, "Stmt grew; check the layout budget");

std::string_view kind_name(StmtKind k) {
  switch (k) {
#define PB_X(Name, text, traits) \
  case StmtKind::Name:           \
    return text;
    PB_STMT_KINDS(PB_X)
#undef PB_X
  }
  return "?";
}

std::string_view task_type_name(TaskType t) {
  switch (t) {
#define PB_X(name)     \
  case TaskType::name: \
    return #name;
    PB_TASK_TYPES(PB_X)
#undef PB_X
  }
  return "?";
}

std::string_view mesh_element_name(MeshElement e) {
  switch (e) {
#define PB_X(name)        \
  case MeshElement::name: \
    return #name;
    PB_MESH_ELEMENTS(PB_X)
#undef PB_X
  }
  return "?";
}

std::optional<MeshElement> mesh_element_from_name(std::string_view name) {
#define PB_X(n) \
  if (name == #n) return MeshElement::n;
  PB_MESH_ELEMENTS(PB_X)
#undef PB_X
  return std::nullopt;
}

std::string_view mesh_target_name(std::optional<MeshElement> e) { return e ? mesh_element_name(*e) : "Unknown"; }

std::string_view mesh_conversion_text(MeshConversion c) {
  switch (c) {
#define PB_X(name, text)     \
  case MeshConversion::name: \
    return text;
    PB_MESH_CONVERSIONS(PB_X)
#undef PB_X
  }
  return "?";
}

std::string_view mesh_conversion_key(MeshConversion c) {
  switch (c) {
#define PB_X(name, text)     \
  case MeshConversion::name: \
    return #name;
    PB_MESH_CONVERSIONS(PB_X)
#undef PB_X
  }
  return "?";
}

Block* BlockList::at(size_t i) const {
  PB_ASSERT(i < size_, "block index out of range");
  return items_[i];
}

Stmt::Stmt(const Stmt& other) : id(other.id), type(other.type), kind_(other.kind_) {
  for (Stmt* op : other.operands()) add_operand(op);
}

Stmt::Stmt(Stmt&& other) noexcept
    : id(other.id),
      type(other.type),
      position_(other.position_),
      kind_(other.kind_),
      parent_(std::exchange(other.parent_, nullptr)),
      prev_(std::exchange(other.prev_, nullptr)),
      next_(std::exchange(other.next_, nullptr)),
      operands_(std::move(other.operands_)),
      uses_(std::move(other.uses_)) {
  if (parent_) {
    (prev_ ? prev_->next_ : parent_->first_) = this;
    (next_ ? next_->prev_ : parent_->last_) = this;
  }
  // Users first: a statement among its own operands (invalid IR, but not ours to crash on) is
  // then already this one when its use entry is rewritten below.
  for (Use& u : uses_) {
    if (u.user() == &other) u = Use(this, u.slot());
    u.user()->operands_.ops()[u.slot()] = this;
  }
  Stmt* const* ops = operands_.ops();
  const uint32_t* pos = operands_.positions();
  for (size_t i = 0; i < operands_.size(); ++i)
    if (Stmt* op = ops[i]) op->uses_[pos[i]] = Use(this, static_cast<uint32_t>(i));
}

Stmt::~Stmt() {
  for (size_t i = 0; i < operands_.size(); ++i) unlink_use_nothrow(i);
  // Users that outlive this statement keep a null slot the verifier reports.
  for (const Use& u : uses_) u.user()->operands_.ops()[u.slot()] = nullptr;
}

Stmt* Stmt::parent_stmt() const { return parent_ ? parent_->owner() : nullptr; }

void Stmt::link_use(size_t slot) {
  Stmt* op = operands_.ops()[slot];
  if (!op) return;
  PB_ASSERT(reinterpret_cast<uintptr_t>(this) >> 48 == 0, "statement address does not fit a packed use");
  operands_.positions()[slot] = static_cast<uint32_t>(op->uses_.size());
  op->uses_.push_back(Use(this, static_cast<uint32_t>(slot)));
}

bool Stmt::use_in_sync(size_t slot) const {
  const Stmt* op = operands_.ops()[slot];
  uint32_t pos = operands_.positions()[slot];
  return pos < op->uses_.size() && op->uses_[pos].user() == this && op->uses_[pos].slot() == slot;
}

void Stmt::unlink_use_nothrow(size_t slot) noexcept {
  if (!operands_.ops()[slot]) return;
  bool in_sync = use_in_sync(slot);
  PB_ASSERT_DEFERRED(in_sync, "use list out of sync");
  if (in_sync) unlink_use(slot);
}

void Stmt::unlink_use(size_t slot) {
  Stmt* op = operands_.ops()[slot];
  if (!op) return;
  PB_ASSERT(use_in_sync(slot), "use list out of sync");
  uint32_t pos = operands_.positions()[slot];
  Use moved = op->uses_.back();
  op->uses_[pos] = moved;
  moved.user()->operands_.positions()[moved.slot()] = pos;
  op->uses_.pop_back();
}

void Stmt::add_operand(Stmt* s) {
  operands_.push_back(s);
  link_use(operands_.size() - 1);
}

void Stmt::set_operand(size_t i, Stmt* s) {
  PB_ASSERT(i < operands_.size(), "operand index out of range");
  Stmt*& slot = operands_.ops()[i];
  if (slot == s) return;
  unlink_use(i);
  slot = s;
  link_use(i);
}

void Stmt::drop_operands() {
  for (size_t i = 0; i < operands_.size(); ++i) {
    unlink_use(i);
    operands_.ops()[i] = nullptr;
  }
}

void Stmt::replace_operand(Stmt* from, Stmt* to) {
  for (size_t i = 0; i < operands_.size(); ++i)
    if (operands_.ops()[i] == from) set_operand(i, to);
}

std::vector<Stmt*> Stmt::users() const {
  std::vector<Stmt*> out;
  out.reserve(uses_.size());
  for (const Use& u : uses_) out.push_back(u.user());
  return out;
}

void Stmt::replace_all_uses_with(Stmt* replacement) {
  PB_ASSERT(replacement != this, "replacing a statement by itself");
  while (!uses_.empty()) {
    Use u = uses_.back();
    u.user()->set_operand(u.slot(), replacement);
  }
}

Block::~Block() {
  Stmt* s = first_;
  while (s) {
    Stmt* n = s->next_;
    delete s;
    s = n;
  }
}

size_t Stmt::subtree_size() const {
  size_t n = 1;
  if (is_container())
    for (const Block* b : blocks())
      if (b) n += b->total_size();
  return n;
}

void Block::add_to_totals(std::ptrdiff_t n) {
  for (Block* b = this; b; b = b->owner() ? b->owner()->parent() : nullptr)
    b->total_ = static_cast<size_t>(static_cast<std::ptrdiff_t>(b->total_) + n);
}

void Block::link(Stmt* before_this, Stmt* s) {
  PB_ASSERT(s->parent_ == nullptr, "statement is already in a block");
  s->parent_ = this;
  s->next_ = before_this;
  s->prev_ = before_this ? before_this->prev_ : last_;
  if (s->prev_)
    s->prev_->next_ = s;
  else
    first_ = s;
  if (before_this)
    before_this->prev_ = s;
  else
    last_ = s;
  ++size_;
  add_to_totals(static_cast<std::ptrdiff_t>(s->subtree_size()));
}

Stmt* Block::push_back(std::unique_ptr<Stmt> s) { return insert_before(nullptr, std::move(s)); }

Stmt* Block::push_front(std::unique_ptr<Stmt> s) { return insert_before(first_, std::move(s)); }

Stmt* Block::insert_before(Stmt* pos, std::unique_ptr<Stmt> s) {
  PB_ASSERT(pos == nullptr || pos->parent_ == this, "insertion point is not in this block");
  Stmt* raw = s.release();
  link(pos, raw);
  return raw;
}

Stmt* Block::insert_after(Stmt* pos, std::unique_ptr<Stmt> s) {
  return insert_before(pos ? pos->next_ : first_, std::move(s));
}

std::unique_ptr<Stmt> Block::detach(Stmt* s) {
  PB_ASSERT(s->parent_ == this, "detaching a statement from a block that does not hold it");
  if (s->prev_)
    s->prev_->next_ = s->next_;
  else
    first_ = s->next_;
  if (s->next_)
    s->next_->prev_ = s->prev_;
  else
    last_ = s->prev_;
  s->prev_ = s->next_ = nullptr;
  s->parent_ = nullptr;
  --size_;
  add_to_totals(-static_cast<std::ptrdiff_t>(s->subtree_size()));
  return std::unique_ptr<Stmt>(s);
}

void Block::erase(Stmt* s) { detach(s).reset(); }

std::vector<Stmt*> Block::statements() const {
  std::vector<Stmt*> out;
  out.reserve(size_);
  for (Stmt* s : *this) out.push_back(s);
  return out;
}

bool block_encloses(const Block* outer, const Block* inner) {
  for (const Block* b = inner; b; b = b->owner() ? b->owner()->parent() : nullptr)
    if (b == outer) return true;
  return false;
}

}  // namespace pb::ir
