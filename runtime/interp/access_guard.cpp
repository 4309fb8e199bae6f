#include "runtime/interp/access_guard.h"

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "ir/statements.h"

namespace pb::runtime::detail {

void AccessGuard::write(uint32_t slot, const ir::Value* cell, const ir::Stmt* write, int64_t iteration) {
  if (!on_ || !tracked_[slot]) return;
  if (auto read = access_.earlier_read(cell))
    throw UserError(
        fmt::format("{}\n  in {}", global_access_violation(k_, state_element_name(st_, cell), *read, write, iteration),
                    label_),
        kGlobalAccessRemedy);
  if (auto first = access_.overwrite(cell, write, iteration, ir::isa<ir::GlobalStoreStmt>(write)))
    throw UserError(
        fmt::format("{}\n  in {}", overwrite_violation(k_, state_element_name(st_, cell), *first, write, iteration),
                    label_),
        kOverwriteRemedy);
}

}  // namespace pb::runtime::detail
