// Internal to runtime/interp: the global data access rule checked while the interpreter runs
// (RunOptions::check_global_access; runtime/core/access_check.h states the rule). Pointer slots
// that address a differentiable element are tracked; a load through one is recorded and a store
// or atomic through one is checked, throwing UserError at the first violation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/differentiable.h"
#include "ir/kernel.h"
#include "runtime/core/access_check.h"
#include "runtime/core/state.h"

namespace pb::runtime::detail {

class AccessGuard {
 public:
  AccessGuard(const ir::Kernel& k, const State& state, const std::string& label) : k_(k), st_(state), label_(label) {}

  // Starts a run over `slots` pointer slots; off, every call below does nothing.
  void reset(bool on, size_t slots) {
    on_ = on;
    tracked_.assign(on ? slots : 0, 0);
  }
  // Pointer statement `ptr` fills `slot`.
  void pointer(uint32_t slot, const ir::Stmt& ptr) {
    if (on_) tracked_[slot] = ir::is_differentiable_ptr(k_, &ptr);
  }
  void load(uint32_t slot, const ir::Value* cell, const ir::Stmt* load, int64_t iteration) {
    if (on_ && tracked_[slot]) access_.read(cell, load, iteration);
  }
  // Before `write` (a global store or an atomic) through `slot` writes `cell`.
  void write(uint32_t slot, const ir::Value* cell, const ir::Stmt* write, int64_t iteration);
  // The running top-level loop ended.
  void end_loop() { access_.end_loop(); }

 private:
  const ir::Kernel& k_;
  const State& st_;
  const std::string& label_;
  bool on_ = false;
  std::vector<uint8_t> tracked_;  // by pointer slot: accesses through it are tracked
  GlobalAccessTracker access_;
};

}  // namespace pb::runtime::detail
