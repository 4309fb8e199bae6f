// One byte per statement, kept beside the statements instead of in them: for an analysis over a
// const kernel that several threads may read at once (the verifier). Indexed by address: a
// statement is at least kGranule bytes, so two never start in the same granule, and statements
// made together lie together (ir/stmt_pool.h), so a walk touches few cache lines of marks.
// Windows of 2 MiB of address space get a byte array each, found through a small hash table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/stmt.h"

namespace pb::ir {

class StmtMarks {
 public:
  static constexpr unsigned kGranuleBits = 6;  // 64 bytes
  static constexpr unsigned kWindowBits = 21;  // 2 MiB
  static_assert(sizeof(Stmt) >= (size_t{1} << kGranuleBits), "two statements could share a mark");

  // The mark of `s`, 0 until set.
  uint8_t get(const Stmt* s) const {
    const Slot& slot = slots_[slot_of(window_of(s))];
    return slot.marks ? slot.marks[offset(s)] : 0;
  }
  void set(const Stmt* s, uint8_t mark) {
    uintptr_t w = window_of(s);
    size_t i = slot_of(w);
    if (!slots_[i].marks) {
      if (2 * (used_ + 1) > slots_.size()) {
        grow();
        i = slot_of(w);
      }
      slots_[i] = {w, std::make_unique<uint8_t[]>(kMarksPerWindow)};  // zeroed
      ++used_;
    }
    slots_[i].marks[offset(s)] = mark;
  }

 private:
  static constexpr size_t kMarksPerWindow = size_t{1} << (kWindowBits - kGranuleBits);
  struct Slot {
    uintptr_t window = 0;
    std::unique_ptr<uint8_t[]> marks;  // null: the slot is empty
  };
  static uintptr_t window_of(const Stmt* s) { return reinterpret_cast<uintptr_t>(s) >> kWindowBits; }
  static size_t offset(const Stmt* s) {
    return (reinterpret_cast<uintptr_t>(s) >> kGranuleBits) & (kMarksPerWindow - 1);
  }
  // The slot of window `w`, or the empty slot where it would go.
  size_t slot_of(uintptr_t w) const {
    size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(w * 0x9e3779b97f4a7c15ull >> 40) & mask;
    while (slots_[i].marks && slots_[i].window != w) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(2 * old.size());
    for (Slot& s : old)
      if (s.marks) slots_[slot_of(s.window)] = std::move(s);
  }

  std::vector<Slot> slots_ = std::vector<Slot>(64);
  size_t used_ = 0;
};

}  // namespace pb::ir
