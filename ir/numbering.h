// Numbers statements 0, 1, 2, ... for the duration of an analysis: in pre-order over a block
// (containers before their bodies), or in the order a pass adds them. The number is kept in the
// statement, so reading it costs no lookup, but it is read only through the Numbering that gave
// it, which checks that it did: a statement made, moved or renumbered since (by another
// Numbering) is an assertion failure, never a stale number.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/assert.h"
#include "ir/stmt.h"
#include "ir/visitor.h"

namespace pb::ir {

class Numbering {
 public:
  Numbering() = default;
  // Every statement under `b`, in pre-order.
  explicit Numbering(const Block& b) {
    order_.reserve(b.total_size());
    walk(b, [&](Stmt& s) { add(s); });
  }
  Numbering(const Numbering&) = delete;
  Numbering& operator=(const Numbering&) = delete;
  Numbering(Numbering&&) noexcept = default;
  Numbering& operator=(Numbering&&) noexcept = default;

  // Gives `s` the next number and returns it.
  uint32_t add(Stmt& s) {
    s.position_ = static_cast<uint32_t>(order_.size());
    order_.push_back(&s);
    return s.position_;
  }
  // Whether this numbering numbered `s` (and nothing renumbered it since).
  bool contains(const Stmt& s) const { return s.position_ < order_.size() && order_[s.position_] == &s; }
  uint32_t operator[](const Stmt& s) const {
    PB_ASSERT(contains(s), "a statement read through a numbering that did not number it");
    return s.position_;
  }
  // The number of `s`, or -1 when this numbering did not number it.
  int64_t find(const Stmt& s) const { return contains(s) ? static_cast<int64_t>(s.position_) : -1; }
  Stmt* at(uint32_t n) const { return order_.at(n); }
  uint32_t size() const { return static_cast<uint32_t>(order_.size()); }
  const std::vector<Stmt*>& order() const { return order_; }  // by number
  void reserve(size_t n) { order_.reserve(n); }
  void clear() { order_.clear(); }

 private:
  std::vector<Stmt*> order_;
};

}  // namespace pb::ir
