// Quant types: the reference's packed custom-width types, read and printed in its spellings.
// Each spelling is interned once per process; a DataType refers to it by id (DataType::quant).
//   integers `qi4` `qu1` (older `ci4` `cu1`), fixed point `qfx(d=qi8 c=f32 s=0.1)`, floats
//   `qfl(d=qi8 e=qu5 c=f32)` (older `cf(d=ci8 c=f32 s=0.1)`), bit structs `bs(0: qi4@0, ...)`,
//   quant arrays `qa(qu1x32)` (older `ba(cu1x32)`).
// Only quant integers have a meaning here (a store keeps the low bits, a load sign- or
// zero-extends them); the others are read, printed and verified, and refused when run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/type.h"

namespace pb::ir {

struct QuantType {
  enum class Form : uint8_t { integer, fixed, floating, bit_struct, array };
  std::string spelling;
  Form form = Form::integer;
  int bits = 0;  // integers: the width; others: 0
  bool is_signed = false;
  ScalarKind compute = ScalarKind::unknown;  // what a load gives
};

// The id of `spelling` (>= 1), interned on first use; nullopt if it is not a quant type.
std::optional<uint16_t> intern_quant(std::string_view spelling);
// The type an id from intern_quant names. Pre: id was returned by intern_quant.
const QuantType& quant_type(uint16_t id);

}  // namespace pb::ir
