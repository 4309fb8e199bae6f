// The JSON form of a kernel: the machine interface (fixtures, the GUI). Round-trip exact:
// from_json(to_json(k)) prints the same text and has the same ids, fields and attributes.
// Constants are stored as their shortest round-trip text so NaN, inf and -0 survive.
// docs/ir-format.md documents the schema.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "ir/kernel.h"

namespace pb::ir {

nlohmann::json to_json(const Kernel& k);
// Throws UserError naming the JSON path of the problem.
std::unique_ptr<Kernel> from_json(const nlohmann::json& j);

// The JSON keys of an offloaded task's blocks, in OffloadedStmt::blocks() order (both halves).
inline constexpr const char* kTaskBlockKeys[] = {"tls_prologue", "mesh_prologue", "bls_prologue",
                                                 "body",         "bls_epilogue",  "tls_epilogue"};

}  // namespace pb::ir
