// Lowering for the SPIR-V backend: i8, i16, u8 and u16 become 32-bit values that hold the
// narrow value sign- or zero-extended (the canonical form), so no 8/16-bit capability is needed.
//
// - Every statement, field, argument and stack of a narrow kind takes the 32-bit kind of its
//   signedness (fields and ndarrays are stored as 32-bit words; the runtime converts exactly).
// - Results that may leave the canonical form are brought back right after the statement:
//   arithmetic, integer casts and loads (`bit_shl`/`bit_sar` by 32 - width when signed,
//   `bit_and` with the width's mask when unsigned). Atomics work on the whole word; since every
//   load is brought back, the bits above the width never matter.
// - Shift amounts are taken modulo the narrow width; a logical right shift of a signed narrow
//   value shifts its bit pattern; a float converted to a narrow kind saturates at its range.
// Refused (UserError naming the statement): bit casts to or from a narrow kind, atomic min/max
// on one (the word's upper bits are not meaningful there).
// Pre: a verified kernel. Post: verified; computes what ir/eval.h computes on the narrow kinds.
#pragma once

#include <memory>

#include "ir/kernel.h"

namespace pb::codegen::spirv {

// A lowered copy of `k`, or nullptr when `k` uses no narrow integer kind.
std::unique_ptr<ir::Kernel> lower_narrow_integers(const ir::Kernel& k);

}  // namespace pb::codegen::spirv
