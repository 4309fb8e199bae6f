// The parts of differential testing around the oracles (difftest.h): seed slices, reducing a
// finding, writing it down.
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "workbench/workspace/difftest.h"

namespace pb::workbench {

namespace {

bool parse_u64(std::string_view text, uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  if (!f) throw UserError(fmt::format("{}: cannot be written", p.string()), "give --out a writable directory");
}

}  // namespace

std::vector<uint64_t> SeedSlice::seeds() const {
  std::vector<uint64_t> out;
  for (uint64_t s = begin; s < end; ++s)
    if (s % shards == shard) out.push_back(s);
  return out;
}

SeedSlice parse_seed_slice(const std::string& seeds, const std::string& shard) {
  SeedSlice out;
  auto colon = seeds.find(':');
  if (colon == std::string::npos || !parse_u64(std::string_view(seeds).substr(0, colon), out.begin) ||
      !parse_u64(std::string_view(seeds).substr(colon + 1), out.end) || out.begin > out.end)
    throw UserError(fmt::format("--seeds '{}' is not A:B with A <= B", seeds),
                    "for example --seeds=0:100 (the seeds 0 to 99)");
  if (shard.empty()) return out;
  auto slash = shard.find('/');
  if (slash == std::string::npos || !parse_u64(std::string_view(shard).substr(0, slash), out.shard) ||
      !parse_u64(std::string_view(shard).substr(slash + 1), out.shards) || out.shards == 0 || out.shard >= out.shards)
    throw UserError(fmt::format("--shard '{}' is not I/N with I < N", shard),
                    "for example --shard=0/4 (the seeds s with s % 4 == 0)");
  return out;
}

std::unique_ptr<ir::Kernel> reduce_finding(const DifftestSubject& s, const std::string& oracle,
                                           const DifftestOptions& o, int max_tries) {
  std::unique_ptr<ir::Kernel> current = s.kernel->clone();
  int tries = 0;
  for (bool removed = true; removed && tries < max_tries;) {
    removed = false;
    // From the last statement back, so that a use goes before the value it uses.
    for (size_t i = ir::collect_preorder(current->root()).size(); i-- > 0 && tries < max_tries;) {
      std::unique_ptr<ir::Kernel> candidate = current->clone();
      std::vector<ir::Stmt*> stmts = ir::collect_preorder(candidate->root());
      if (i >= stmts.size() || stmts[i]->has_users()) continue;
      stmts[i]->parent()->erase(stmts[i]);
      if (!ir::verify(*candidate).empty()) continue;
      ++tries;
      DifftestSubject smaller = s;
      smaller.kernel = candidate.get();
      if (run_oracle(oracle, smaller, o).verdict != Verdict::fail) continue;
      current = std::move(candidate);
      removed = true;
    }
  }
  return current;
}

std::string write_finding(const std::string& dir, const std::string& name, const ir::Kernel& kernel,
                          const nlohmann::json& inputs, const OracleOutcome& outcome, const ir::Kernel* reduced) {
  std::filesystem::path base(dir);
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec)
    throw UserError(fmt::format("--out {}: cannot create the directory ({})", dir, ec.message()),
                    "give --out a writable directory");
  std::filesystem::path chi = base / (name + ".chi");
  write_text(chi, ir::print_kernel(reduced ? *reduced : kernel));
  if (reduced) write_text(base / (name + ".original.chi"), ir::print_kernel(kernel));
  write_text(base / (name + ".inputs.json"), inputs.dump(2) + "\n");
  write_text(base / (name + ".out"), fmt::format("{} {} ({} compared): {}\n{}", verdict_name(outcome.verdict),
                                                 outcome.oracle, outcome.compared, outcome.summary, outcome.report));
  return chi.string();
}

}  // namespace pb::workbench
