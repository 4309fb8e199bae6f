// A vector of trivially copyable elements with N elements of inline storage: statements keep
// their operands and (usually few) uses without a heap allocation. Compact (the heap pointer
// shares the inline storage, sizes are 32-bit) because every statement holds three of them;
// spilled elements live in the statement pool, near the statements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "ir/stmt_pool.h"

namespace pb::ir {

template <class T, uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable elements");
  static_assert(N > 0, "SmallVector needs inline storage");
  // T is often itself a pointer (Stmt*), which clang-tidy's sizeof check takes for a mistake.
  static constexpr size_t kElem = sizeof(T);  // NOLINT(bugprone-sizeof-expression)

 public:
  SmallVector() {}
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  // Takes over `other`'s elements (its buffer, when spilled), leaving it empty.
  SmallVector(SmallVector&& other) noexcept : size_(other.size_), capacity_(other.capacity_) {
    if (other.on_heap())
      heap_ = other.heap_;
    else
      std::memcpy(inline_, other.inline_, size_t{size_} * kElem);
    other.size_ = 0;
    other.capacity_ = N;
  }
  SmallVector& operator=(SmallVector&&) = delete;
  ~SmallVector() {
    if (on_heap()) stmt_pool::deallocate(heap_, capacity_ * kElem);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return on_heap() ? heap_ : inline_; }
  const T* data() const { return on_heap() ? heap_ : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  operator std::span<const T>() const { return {data(), size_}; }

  void push_back(const T& v) {
    if (size_ == capacity_) grow();
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void reserve(size_t n) {
    while (capacity_ < n) grow();
  }
  // Moves spilled elements to a newly allocated buffer (for ir::relayout: the buffer then lies
  // beside the statement allocated just before it).
  void move_heap_buffer() {
    if (!on_heap()) return;
    T* fresh = static_cast<T*>(stmt_pool::allocate(capacity_ * kElem));
    std::memcpy(fresh, heap_, size_t{size_} * kElem);
    stmt_pool::deallocate(heap_, capacity_ * kElem);
    heap_ = fresh;
  }

 private:
  bool on_heap() const { return capacity_ > N; }
  void grow() {
    uint32_t cap = capacity_ * 2;
    T* fresh = static_cast<T*>(stmt_pool::allocate(size_t{cap} * kElem));
    std::memcpy(fresh, data(), size_t{size_} * kElem);
    if (on_heap()) stmt_pool::deallocate(heap_, capacity_ * kElem);
    heap_ = fresh;
    capacity_ = cap;
  }

  union {
    T inline_[N];
    T* heap_;
  };
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
};

}  // namespace pb::ir
