#include "workbench/workspace/replay.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "workbench/workspace/fixture_compare.h"
#include "workbench/workspace/load.h"

namespace fs = std::filesystem;

namespace pb::workbench {

LoadedSource load_source(const std::string& path, const std::string& dump) {
  std::string text = read_file(path);
  std::string name = path == "-" ? "<stdin>" : path;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    auto j = parse_json_text(text, name);
    if (j.is_object() && !j.contains("format") && (j.contains("kernel_text") || j.contains("kernel"))) {
      LoadedSource s;
      if (j.contains("kernel_text")) {
        s.kernel = parse_kernel_source(j["kernel_text"].get<std::string>(), name + ":kernel_text", dump);
      } else {
        auto rel = j["kernel"].get<std::string>();
        auto p = (fs::path(path).parent_path() / rel).string();
        s.kernel = parse_kernel_source(read_file(p), rel, dump);
      }
      if (j.contains("pipeline")) s.pipeline = j["pipeline"].get<std::string>();
      return s;
    }
    if (!dump.empty() && dump != "1")
      throw UserError(fmt::format("{}: --dump={}: a JSON kernel holds one dump", name, dump));
    return {ir::from_json(j), std::nullopt};
  }
  return {parse_kernel_source(text, name, dump), std::nullopt};
}

ReplayResult replay(std::unique_ptr<ir::Kernel> kernel, const std::string& pipeline_text,
                    const passes::RunOptions& options) {
  ReplayResult r;
  r.pipeline = passes::parse_pipeline(pipeline_text);
  r.kernel = std::move(kernel);
  r.run = passes::run_pipeline(*r.kernel, r.pipeline, options);
  return r;
}

std::string pass_diff(const passes::PassRecord& rec) {
  if (!rec.ran || !rec.before || !rec.after) return "";
  return unified_diff(rec.before_text, rec.after_text, "before " + rec.spec, "after " + rec.spec);
}

std::string write_reproducer(const ReplayResult& r, const std::string& dir) {
  const auto& rec = r.run.records.at(r.run.failed_index);
  nlohmann::ordered_json fx;
  fx["description"] = fmt::format("reproducer: pass '{}' failed (pass {} of the pipeline)", rec.pass, rec.index + 1);
  fx["kernel_text"] = rec.before_text;
  fx["pipeline"] = r.run.remaining_pipeline;
  std::string first_line = rec.failure.substr(0, rec.failure.find('\n'));
  fx["expect"] = {{"error", {{"stage", "pass"}, {"pass", rec.pass}, {"contains", first_line}}}};
  size_t h = std::hash<std::string>()(rec.before_text + r.run.remaining_pipeline);
  fs::create_directories(dir);
  fs::path p = fs::path(dir) / fmt::format("passbench-reproducer-{}-{:08x}.fixture.json", rec.pass, h & 0xffffffffu);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << fx.dump(2) << "\n";
  if (!out)
    throw UserError(fmt::format("cannot write the reproducer to '{}'", p.string()),
                    "pass --reproducer-dir with a writable folder");
  return p.string();
}

}  // namespace pb::workbench
