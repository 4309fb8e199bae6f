// A new regression fixture from what the workspace holds: its kernel (the selected dump, in
// canonical text, inline), its pipeline and its inputs, with every expectation filled in from
// the current build (as `fixture update` does) and then checked. `passbench fixture new` and the
// GUI's Fixtures panel both write fixtures through it.
#pragma once

#include <string>

#include "workbench/workspace/fixture.h"
#include "workbench/workspace/workspace.h"

namespace pb::workbench {

struct NewFixtureOptions {
  std::string description;  // the fixture's one line; a default names the source
  // A float field with a gradient field: the fixture runs forward + reverse seeded with 1 there
  // (pinning the gradients) and checks them against finite differences. "" = no gradients.
  std::string loss;
  bool overwrite = false;  // replace an existing file
};

// The fixture's JSON before its expectations are filled in. Throws UserError (no kernel, a loss
// that is no float field with a gradient).
nlohmann::ordered_json new_fixture_json(const Workspace& ws, const NewFixtureOptions& options);

// Writes new_fixture_json to `path`, fills its expectations and checks it. The outcome is the
// check's: a fixture that fails right away (a gradient that differs from finite differences, a
// kernel that does not print back) is kept on disk and reported. Throws UserError when `path`
// exists (without overwrite) or cannot be written.
FixtureOutcome save_new_fixture(const Workspace& ws, const std::string& path, const NewFixtureOptions& options);

}  // namespace pb::workbench
