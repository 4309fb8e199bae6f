// The corpus of real public dumps (fixtures/dumps/real): every file is read as posted (through
// workbench::parse_kernel_source, the loader every command uses) and verified, and the outcome
// must equal the status corpus.json records for it: "reads", or the exact first line of the
// error. As the grammar grows, statuses flip to "reads" on purpose; nothing flips silently.
// PB_UPDATE_REAL_DUMPS=1 rewrites the recorded statuses from the current outcomes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/diagnostic.h"
#include "ir/verifier.h"
#include "workbench/workspace/load.h"

namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(PASSBENCH_SOURCE_DIR) / "fixtures" / "dumps" / "real";

nlohmann::ordered_json corpus() {
  std::ifstream in(kDir / "corpus.json");
  return nlohmann::ordered_json::parse(in);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// "reads", or the first line of the error the loader or the verifier gives.
std::string outcome(const std::string& file, const std::string& dump) {
  try {
    auto k = pb::workbench::parse_kernel_source(pb::workbench::read_file((kDir / file).string()), file, dump);
    auto errors = pb::ir::verify(*k);
    if (!errors.empty()) return "verifier: " + first_line(errors.front().format());
    return "reads";
  } catch (const pb::UserError& e) {
    return first_line(e.what());
  }
}

TEST(RealDumps, EveryFileIsListedWithItsSourceAndConstructs) {
  auto c = corpus();
  std::set<std::string> listed;
  for (const auto& e : c["files"]) {
    listed.insert(e["file"].get<std::string>());
    EXPECT_TRUE(e["source"].get<std::string>().starts_with("https://")) << e["file"];
    EXPECT_FALSE(e["constructs"].empty()) << e["file"];
    EXPECT_TRUE(fs::exists(kDir / e["file"].get<std::string>())) << e["file"];
  }
  for (const auto& f : fs::directory_iterator(kDir)) {
    std::string name = f.path().filename().string();
    if (name == "corpus.json" || name == "SOURCES.md") continue;
    EXPECT_TRUE(listed.count(name)) << name << " is in fixtures/dumps/real but not in corpus.json";
  }
  EXPECT_GE(listed.size(), 24u);
}

TEST(RealDumps, EachReadsOrFailsExactlyAsRecorded) {
  auto c = corpus();
  bool update = std::getenv("PB_UPDATE_REAL_DUMPS") != nullptr;
  int reads = 0;
  for (auto& e : c["files"]) {
    std::string file = e["file"].get<std::string>();
    std::string dump = e.value("dump", std::string());
    std::string got = outcome(file, dump);
    if (got == "reads") ++reads;
    if (update) {
      e["status"] = got;
      continue;
    }
    EXPECT_EQ(got, e["status"].get<std::string>())
        << file << (dump.empty() ? "" : " --dump=" + dump) << " (PB_UPDATE_REAL_DUMPS=1 rewrites corpus.json)";
  }
  if (update) std::ofstream(kDir / "corpus.json") << c.dump(2) << "\n";
  RecordProperty("reads", reads);
}

}  // namespace
