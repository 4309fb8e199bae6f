// The fixture schema (docs/fixtures.md), checked before a fixture is replayed: an unknown key is
// an error naming it and the nearest valid key, so a misspelled expectation cannot pass by
// being ignored; a missing required key is an error too.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pb::workbench {

// Throws UserError naming `path`, the key (as a JSON path such as expect.eror) and the remedy.
void check_fixture_schema(const nlohmann::ordered_json& fixture, const std::string& path);

}  // namespace pb::workbench
