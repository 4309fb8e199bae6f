// A vector of trivially copyable elements with N elements of inline storage: statements keep
// their operands and (usually few) uses without a heap allocation.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

namespace pb::ir {

template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable elements");

 public:
  SmallVector() = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  ~SmallVector() {
    if (data_ != inline_) std::free(data_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<const T>() const { return {data_, size_}; }

  void push_back(const T& v) {
    if (size_ == capacity_) grow();
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  void reserve(size_t n) {
    while (capacity_ < n) grow();
  }

 private:
  void grow() {
    size_t cap = capacity_ * 2;
    T* fresh = static_cast<T*>(std::malloc(cap * sizeof(T)));
    if (!fresh) throw std::bad_alloc();
    std::memcpy(fresh, data_, size_ * sizeof(T));
    if (data_ != inline_) std::free(data_);
    data_ = fresh;
    capacity_ = cap;
  }

  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace pb::ir
