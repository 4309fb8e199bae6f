// Internal to runtime/interp: the decision trace, a running hash of every branch decision a run
// takes (RunOptions::trace_decisions). Two runs with the same trace went the same way at every
// point where the computed function may have a kink or a jump, so a finite difference between
// them is meaningful.
#pragma once

#include <cmath>
#include <cstdint>

#include "ir/ops.h"
#include "ir/value.h"

namespace pb::runtime::detail {

class DecisionTrace {
 public:
  explicit DecisionTrace(bool enabled = false) : enabled_(enabled) {}

  uint64_t hash() const { return hash_; }
  uint64_t count() const { return count_; }

  // One decision `d` taken by the statement in `slot`.
  void record(uint32_t slot, uint64_t d) {
    if (!enabled_) return;
    hash_ = mix(mix(hash_ ^ slot) + d);
    ++count_;
  }
  void condition(uint32_t slot, const ir::Value& c) { record(slot, c.is_zero() ? 0 : 1); }

  // abs/sgn: the operand's sign; floor/ceil/round and float->int casts: the result.
  void unary(uint32_t slot, ir::UnaryOp op, const ir::Value& x, const ir::Value& r) {
    using ir::UnaryOp;
    if (op == UnaryOp::abs || op == UnaryOp::sgn) record(slot, sign(x.as_f64()));
    if (op == UnaryOp::floor || op == UnaryOp::ceil || op == UnaryOp::round) record(slot, r.bits());
    if (op == UnaryOp::cast_value && ir::is_float(x.kind()) && !ir::is_float(r.kind())) record(slot, r.bits());
  }

  // Comparisons: the result; min/max: which side; float floordiv/mod: the quotient; atan2: the
  // sign of y on its branch cut (x < 0).
  void binary(uint32_t slot, ir::BinaryOp op, const ir::Value& a, const ir::Value& b, const ir::Value& r) {
    using ir::BinaryOp;
    if (ir::is_comparison(op)) record(slot, r.is_zero() ? 0 : 1);
    if (op == BinaryOp::min || op == BinaryOp::max) record(slot, sign(a.as_f64() - b.as_f64()));
    if (!ir::is_float(a.kind())) return;
    if (op == BinaryOp::floordiv) record(slot, r.bits());
    if (op == BinaryOp::mod) record(slot, ir::Value::make_f64(std::trunc(a.as_f64() / b.as_f64())).bits());
    if (op == BinaryOp::atan2 && b.as_f64() < 0) record(slot, sign(a.as_f64()));
  }

  // atomic min/max: which side won.
  void atomic(uint32_t slot, ir::AtomicOp op, const ir::Value& old, const ir::Value& val) {
    if (op == ir::AtomicOp::min || op == ir::AtomicOp::max) record(slot, sign(old.as_f64() - val.as_f64()));
  }

 private:
  static uint64_t sign(double v) { return v > 0 ? 1 : v < 0 ? 2 : v == 0 ? 0 : 3; }
  static uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  bool enabled_;
  uint64_t hash_ = 0;
  uint64_t count_ = 0;
};

}  // namespace pb::runtime::detail
