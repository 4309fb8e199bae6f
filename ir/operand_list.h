// A statement's operands, each with the position of its Use in the operand's use list (so
// unlinking a use is O(1)). Both arrays share one 40-byte object: three slots inline, more in
// one pool buffer that holds the pointers followed by the positions. Every statement holds one,
// so it is kept as small as the statement set allows (at most 65,535 operands).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ir/assert.h"
#include "ir/stmt_pool.h"

namespace pb::ir {

class Stmt;

class OperandList {
 public:
  static constexpr uint32_t kInline = 3;
  static constexpr uint32_t kMax = UINT16_MAX;

  OperandList() : inline_ops_{} {}
  OperandList(const OperandList&) = delete;
  OperandList& operator=(const OperandList&) = delete;
  // Takes over `other`'s slots (its buffer, when spilled), leaving it empty.
  OperandList(OperandList&& other) noexcept : size_(other.size_), cap_(other.cap_) {
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else {
      std::copy(other.inline_ops_, other.inline_ops_ + kInline, inline_ops_);
      std::copy(other.inline_pos_, other.inline_pos_ + kInline, inline_pos_);
    }
    other.size_ = 0;
    other.cap_ = kInline;
  }
  OperandList& operator=(OperandList&&) = delete;
  ~OperandList() {
    if (on_heap()) stmt_pool::deallocate(static_cast<void*>(heap_), buffer_bytes(cap_));
  }

  size_t size() const { return size_; }
  Stmt** ops() { return on_heap() ? heap_ : inline_ops_; }
  Stmt* const* ops() const { return on_heap() ? heap_ : inline_ops_; }
  uint32_t* positions() { return on_heap() ? heap_positions() : inline_pos_; }
  const uint32_t* positions() const { return on_heap() ? heap_positions() : inline_pos_; }

  // Appends a slot (null operand, position 0).
  void push_back(Stmt* op) {
    if (size_ == cap_) grow();
    ops()[size_] = op;
    positions()[size_] = 0;
    ++size_;
  }

  // Moves a spilled buffer to newly allocated memory (for ir::relayout: it then lies beside the
  // statement allocated just before it).
  void move_heap_buffer() {
    if (!on_heap()) return;
    void* fresh = stmt_pool::allocate(buffer_bytes(cap_));
    std::memcpy(fresh, static_cast<const void*>(heap_), buffer_bytes(cap_));
    stmt_pool::deallocate(static_cast<void*>(heap_), buffer_bytes(cap_));
    heap_ = static_cast<Stmt**>(fresh);
  }

 private:
  // The operand slots hold pointers, which clang-tidy's sizeof check takes for a mistake.
  static constexpr size_t kSlotBytes = sizeof(Stmt*);  // NOLINT(bugprone-sizeof-expression)
  static size_t buffer_bytes(uint32_t cap) { return size_t{cap} * (kSlotBytes + sizeof(uint32_t)); }
  bool on_heap() const { return cap_ > kInline; }
  // The positions follow the pointers in the one buffer.
  uint32_t* heap_positions() const { return reinterpret_cast<uint32_t*>(heap_ + cap_); }

  void grow() {
    PB_ASSERT(size_ < kMax, "a statement has more than 65,535 operands");
    uint32_t cap = cap_ * 2 > kMax ? kMax : cap_ * 2;
    auto* fresh = static_cast<Stmt**>(stmt_pool::allocate(buffer_bytes(cap)));
    std::memcpy(static_cast<void*>(fresh), static_cast<const void*>(ops()), size_t{size_} * kSlotBytes);
    std::memcpy(reinterpret_cast<uint32_t*>(fresh + cap), positions(), size_t{size_} * sizeof(uint32_t));
    if (on_heap()) stmt_pool::deallocate(static_cast<void*>(heap_), buffer_bytes(cap_));
    heap_ = fresh;
    cap_ = static_cast<uint16_t>(cap);
  }

  union {
    Stmt* inline_ops_[kInline];
    Stmt** heap_;
  };
  uint32_t inline_pos_[kInline] = {};  // unused once spilled
  uint16_t size_ = 0;
  uint16_t cap_ = kInline;
};
static_assert(sizeof(OperandList) == 40);

}  // namespace pb::ir
