#include "workbench/workspace/fixture_new.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "workbench/workspace/gradient.h"

namespace pb::workbench {

namespace fs = std::filesystem;

nlohmann::ordered_json new_fixture_json(const Workspace& ws, const NewFixtureOptions& options) {
  if (!ws.kernel()) {
    const std::optional<Diagnostic>& error = ws.source_error();
    throw UserError("there is no kernel to save as a fixture" + (error ? ": " + error->message : std::string()),
                    "open a kernel that parses");
  }
  nlohmann::ordered_json fx = nlohmann::ordered_json::object();
  fx["description"] =
      options.description.empty() ? "made by `fixture new` from " + ws.source_name() : options.description;
  fx["kernel_text"] = ir::print_kernel(*ws.kernel());
  std::string pipeline = ws.pipeline_text();
  if (!options.loss.empty()) {
    std::vector<std::string> losses = ws.loss_candidates();
    if (std::find(losses.begin(), losses.end(), options.loss) == losses.end())
      throw UserError(
          fmt::format("'{}' is not a float field with a gradient field, so it cannot be the loss", options.loss),
          losses.empty() ? "declare a gradient field (`field y : f32[] grad y_grad`)"
                         : fmt::format("choose one of: {}", fmt::join(losses, ", ")));
    if (pipeline.empty()) pipeline = kDefaultReversePipeline;
  }
  if (!pipeline.empty()) fx["pipeline"] = pipeline;
  const nlohmann::json& inputs = ws.inputs();
  if (!options.loss.empty() || (inputs.is_object() && !inputs.empty()))
    fx["inputs"] = nlohmann::ordered_json::parse(inputs.is_null() ? "{}" : inputs.dump());
  if (!options.loss.empty()) {
    fx["grad"] = {{"seed", {{options.loss, 1.0}}}};
    fx["gradcheck"] = {{"loss", options.loss}};
  }
  return fx;
}

FixtureOutcome save_new_fixture(const Workspace& ws, const std::string& path, const NewFixtureOptions& options) {
  nlohmann::ordered_json fx = new_fixture_json(ws, options);
  std::error_code ec;
  if (!options.overwrite && fs::exists(path, ec))
    throw UserError(fmt::format("{} exists", path), "choose another name, or overwrite it (--force)");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("cannot write {}", path), "check that its folder exists and is writable");
    out << fx.dump(2) << '\n';
    if (!out) throw UserError(fmt::format("cannot write {}", path), "check the free space");
  }
  FixtureOutcome filled = update_fixture(path);
  if (!filled.failures.empty() && !filled.changed) return filled;  // it could not be replayed at all
  return check_fixture(path);
}

}  // namespace pb::workbench
