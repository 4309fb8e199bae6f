// A map from statements to small values, by open addressing over the pointers: no heap node per
// entry, so a pass over a whole kernel costs one allocation. Sized up front for the expected
// count and grown by doubling past a load of one half. Keys are never removed (set a value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pb::ir {

class Stmt;

template <class V>
class StmtMap {
 public:
  explicit StmtMap(size_t expected = 0) { resize(capacity_for(expected)); }

  // The value of `key`, inserted as V{} when absent. The reference lasts until the next insert.
  V& operator[](const Stmt* key) {
    size_t i = slot_of(key);
    if (slots_[i].key == key) return slots_[i].value;
    if (2 * (size_ + 1) > slots_.size()) {
      resize(2 * slots_.size());
      i = slot_of(key);
    }
    slots_[i].key = key;
    ++size_;
    return slots_[i].value;
  }
  // The value of `key`, or nullptr when absent.
  const V* find(const Stmt* key) const {
    const Slot& s = slots_[slot_of(key)];
    return s.key == key ? &s.value : nullptr;
  }
  V* find(const Stmt* key) {
    Slot& s = slots_[slot_of(key)];
    return s.key == key ? &s.value : nullptr;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    const Stmt* key = nullptr;
    V value{};
  };
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  // The slot holding `key`, or the empty slot where it would go.
  size_t slot_of(const Stmt* key) const {
    size_t mask = slots_.size() - 1;
    // Statements made together lie together (ir/stmt_pool.h): the low bits keep them in nearby
    // slots, so a walk in creation order walks the table in order; the chunk bits are mixed in.
    auto p = reinterpret_cast<uintptr_t>(key);
    size_t i = static_cast<size_t>((p >> 3) ^ ((p >> 21) * 0x9e3779b97f4a7c15ull >> 40)) & mask;
    while (slots_[i].key && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  void resize(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    for (const Slot& s : old)
      if (s.key) slots_[slot_of(s.key)] = s;
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace pb::ir
