// The reference interpreter (interpreter.h) as a runtime::Backend: every request part, exactly.
#pragma once

#include "runtime/core/backend.h"

namespace pb::runtime::interp {

// The process's interpreter backend (stateless; safe to use from several threads at once).
Backend& backend();

}  // namespace pb::runtime::interp
