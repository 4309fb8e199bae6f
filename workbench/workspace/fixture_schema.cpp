#include "workbench/workspace/fixture_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"
#include "workbench/workspace/fixture.h"

namespace pb::workbench {

namespace {

using Keys = std::initializer_list<std::string_view>;

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string_view nearest(std::string_view key, Keys valid) {
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view v : valid)
    if (size_t d = edit_distance(key, v); d < best_distance) best = v, best_distance = d;
  return best;
}

std::string joined(Keys valid) {
  std::string out;
  for (std::string_view v : valid) out += (out.empty() ? "" : ", ") + std::string(v);
  return out;
}

class SchemaCheck {
 public:
  explicit SchemaCheck(const std::string& path) : path_(path) {}

  // `j` (at `where`) is an object whose keys are all in `valid`.
  void object(const nlohmann::ordered_json& j, const std::string& where, Keys valid) const {
    if (!j.is_object())
      throw UserError(fmt::format("{}: \"{}\" must be an object, not {}", path_, where, j.dump()),
                      "see docs/fixtures.md");
    for (const auto& [key, value] : j.items()) {
      if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
      throw UserError(
          fmt::format("{}: unknown key \"{}{}\"; did you mean \"{}\"?", path_, where.empty() ? "" : where + ".", key,
                      nearest(key, valid)),
          fmt::format("the keys of {} are: {} (docs/fixtures.md)", where.empty() ? "a fixture" : where, joined(valid)));
    }
  }

  void required(const nlohmann::ordered_json& j, const std::string& where, std::string_view key) const {
    if (!j.contains(key))
      throw UserError(fmt::format("{}: \"{}\" needs \"{}\"", path_, where, key), "see docs/fixtures.md");
  }

 private:
  const std::string& path_;
};

}  // namespace

void check_fixture_schema(const nlohmann::ordered_json& fx, const std::string& path) {
  SchemaCheck c(path);
  c.object(
      fx, "",
      {"description", "kernel", "kernel_text", "inputs", "inputs_file", "run", "pipeline", "grad", "gradcheck", "dual",
       "jvpcheck", "adjointcheck", "global_access", "compile", "backends", "expect", "expect_unexercised_stacks"});
  if (fx.contains("backends")) {
    c.object(fx["backends"], "backends", {"vulkan", "cpu"});
    for (const auto& [name, known] : fx["backends"].items()) {
      c.object(known, "backends." + name, {"known_difference", "ignore", "rtol", "expect"});
      c.required(known, "backends." + name, "known_difference");
    }
  }
  if (fx.contains("kernel") == fx.contains("kernel_text"))
    throw UserError(fmt::format("{}: a fixture needs exactly one of \"kernel\" (a path) and \"kernel_text\"", path),
                    "see docs/fixtures.md");
  if (fx.contains("inputs") && fx.contains("inputs_file"))
    throw UserError(fmt::format("{}: give \"inputs\" or \"inputs_file\", not both", path), "see docs/fixtures.md");
  if (fx.contains("run")) c.object(fx["run"], "run", {"shuffle", "seed", "f64", "seed_grad"});
  if (fx.contains("grad")) {
    c.object(fx["grad"], "grad", {"seed"});
    c.required(fx["grad"], "grad", "seed");
  }
  if (fx.contains("gradcheck")) {
    c.object(fx["gradcheck"], "gradcheck", {"loss", "wrt", "eps", "rel", "abs", "expect_nothing_compared"});
    c.required(fx["gradcheck"], "gradcheck", "loss");
  }
  if (fx.contains("dual")) {
    c.object(fx["dual"], "dual", {"seed"});
    c.required(fx["dual"], "dual", "seed");
  }
  if (fx.contains("jvpcheck")) c.object(fx["jvpcheck"], "jvpcheck", {"wrt", "out", "eps", "rel", "abs"});
  if (fx.contains("adjointcheck"))
    c.object(fx["adjointcheck"], "adjointcheck", {"seed", "trials", "rel", "abs", "reverse_pipeline"});
  if (fx.contains("compile"))
    c.object(fx["compile"], "compile", {"lowering", "max_id_bound", "intermediate_dce", "compact_ids"});
  if (!fx.contains("expect")) return;
  const auto& e = fx["expect"];
  c.object(e, "expect",
           {"ir", "ir_after", "stats", "verify", "values", "printed", "error", "warnings", "tolerance", "metrics",
            "global_access"});
  if (e.contains("error")) {
    c.object(e["error"], "expect.error", {"stage", "contains", "pass"});
    c.required(e["error"], "expect.error", "stage");
  }
  if (e.contains("tolerance")) c.object(e["tolerance"], "expect.tolerance", {"rel", "abs"});
}

// Fixture discovery (declared in fixture.h): directories expand to their *.fixture.json files.
std::vector<std::string> expand_fixture_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (std::filesystem::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        std::string name = e.path().filename().string();
        if (e.is_regular_file() && name.size() > 13 && name.ends_with(".fixture.json"))
          found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace pb::workbench
