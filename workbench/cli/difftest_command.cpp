#include "workbench/cli/difftest_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/verifier.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/progress_line.h"
#include "workbench/workspace/difftest.h"
#include "workbench/workspace/kernel_decoder.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"

namespace pb::cli {

namespace {

std::string oracle_line(const workbench::OracleOutcome& r) {
  return fmt::format("{:<7} {:<40} {:>6} compared  {}\n", workbench::verdict_name(r.verdict), r.oracle, r.compared,
                     r.summary);
}

std::string indented(const std::string& text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    size_t e = text.find('\n', at);
    if (e == std::string::npos) e = text.size();
    out += "    " + text.substr(at, e - at) + "\n";
    at = e + 1;
  }
  return out;
}

std::string counts_text(const workbench::VerdictCounts& c) {
  return fmt::format("{} pass, {} fail, {} refused, {} absent, {} empty", c.pass, c.fail, c.refused, c.absent, c.empty);
}

// "seed12-pipeline-simplify-dce": a file name for a finding.
std::string finding_name(const std::string& prefix, const std::string& oracle) {
  std::string name = prefix + "-" + oracle;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '-';
  return name;
}

workbench::DifftestOptions difftest_options(const DifftestArgs& a) {
  workbench::DifftestOptions o;
  o.backends = workbench::parse_backends(a.backend);
  if (std::find(o.backends.begin(), o.backends.end(), workbench::Backend::interp) == o.backends.end())
    o.backends.insert(o.backends.begin(), workbench::Backend::interp);
  o.backend_options.device = a.device;
  o.tolerances.f32 = a.rtol_f32;
  o.tolerances.f64 = a.rtol_f64;
  return o;
}

// Saves each failing outcome of `s` under a.out (reduced first unless --no-reduce); returns the
// lines naming the files.
std::string save_findings(const DifftestArgs& a, const workbench::DifftestSubject& s,
                          const std::vector<workbench::OracleOutcome>& outcomes, const std::string& prefix,
                          const workbench::DifftestOptions& o) {
  std::string lines;
  for (const auto& r : outcomes) {
    if (r.verdict != workbench::Verdict::fail || a.out.empty()) continue;
    std::unique_ptr<ir::Kernel> reduced;
    if (a.reduce) reduced = workbench::reduce_finding(s, r.oracle, o);
    bool smaller = reduced && reduced->count_statements() < s.kernel->count_statements();
    std::string path = workbench::write_finding(a.out, finding_name(prefix, r.oracle), *s.kernel, s.inputs, r,
                                                smaller ? reduced.get() : nullptr);
    lines += smaller ? fmt::format("    wrote {} (reduced from {} to {} statements)\n", path,
                                   s.kernel->count_statements(), reduced->count_statements())
                     : fmt::format("    wrote {}\n", path);
  }
  return lines;
}

int difftest_file(const DifftestArgs& a) {
  auto k = workbench::load_source(a.file, a.dump).kernel;
  if (!report_verify(*k, a.file)) return 1;
  workbench::CommandInputs inputs = workbench::command_inputs(a.inputs, a.file);
  workbench::DifftestSubject s;
  s.kernel = k.get();
  if (inputs.json) s.inputs = std::move(*inputs.json);
  s.inputs_name = inputs.name;
  s.kernel_name = a.file;
  s.loss = a.loss;
  if (s.loss.empty() && inputs.gradcheck && (*inputs.gradcheck)["loss"].is_string())
    s.loss = (*inputs.gradcheck)["loss"].get<std::string>();
  workbench::state_from_inputs(*k, s.inputs, s.inputs_name);  // bad inputs are exit 2, not a refusal per oracle
  workbench::DifftestOptions o = difftest_options(a);
  std::vector<workbench::OracleOutcome> outcomes;
  {
    ProgressLine progress("difftest " + a.file);
    for (const std::string& name : workbench::oracle_names(o.backends)) {
      progress.set(name);
      outcomes.push_back(workbench::run_oracle(name, s, o));
    }
  }
  workbench::VerdictCounts counts;
  for (const auto& r : outcomes) {
    counts.add(r.verdict);
    std::cout << oracle_line(r);
    if (r.verdict == workbench::Verdict::fail && !r.report.empty()) std::cout << indented(r.report);
  }
  std::cout << save_findings(a, s, outcomes, std::filesystem::path(a.file).stem().string(), o);
  std::cout << fmt::format("difftest {}: {} oracle(s): {}\n", a.file, outcomes.size(), counts_text(counts));
  if (counts.pass == 0) std::cout << "difftest: no oracle compared anything, so nothing was checked\n";
  return counts.fail || counts.pass == 0 ? 1 : 0;
}

struct SeedOutcome {
  std::vector<workbench::OracleOutcome> outcomes;
  std::string saved;  // the lines naming the files written
};

int difftest_seeds(const DifftestArgs& a) {
  workbench::SeedSlice slice = workbench::parse_seed_slice(a.seeds, a.shard);
  if (a.jobs < 1) throw UserError(fmt::format("-j {}: at least one job", a.jobs), "for example -j 2");
  std::vector<uint64_t> seeds = slice.seeds();
  workbench::DifftestOptions o = difftest_options(a);
  std::vector<SeedOutcome> results(seeds.size());
  std::atomic<size_t> next{0}, done{0};
  std::optional<ProgressLine> progress(std::in_place, "difftest --seeds " + a.seeds);
  auto work = [&] {
    for (size_t i; (i = next++) < seeds.size(); ++done) {
      progress->set(fmt::format("kernel {} of {}, {} done: seed {}", i + 1, seeds.size(), done.load(), seeds[i]));
      try {
        workbench::DecodedKernel d = workbench::generate_kernel(seeds[i]);
        PB_ASSERT(ir::verify(*d.kernel).empty(), "a generated kernel does not verify");
        workbench::DifftestSubject s;
        s.kernel = d.kernel.get();
        s.inputs = d.inputs;
        s.kernel_name = fmt::format("seed {}", seeds[i]);
        results[i].outcomes = workbench::run_oracles(s, o);
        results[i].saved = save_findings(a, s, results[i].outcomes, fmt::format("seed{}", seeds[i]), o);
      } catch (const std::exception& e) {
        // Nothing may escape a worker thread: what went wrong is this seed's finding.
        results[i].outcomes.push_back({"difftest", workbench::Verdict::fail, 0, e.what(), {}});
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::min<int>(a.jobs, static_cast<int>(seeds.size())); ++j) workers.emplace_back(work);
  work();
  for (auto& t : workers) t.join();
  progress.reset();  // the line is erased before the results are printed
  workbench::VerdictCounts counts;
  size_t with_findings = 0;
  for (size_t i = 0; i < seeds.size(); ++i) {
    workbench::VerdictCounts mine;
    for (const auto& r : results[i].outcomes) mine.add(r.verdict);
    with_findings += mine.fail > 0;
    if (a.verbose || mine.fail) std::cout << fmt::format("seed {}: {}\n", seeds[i], counts_text(mine));
    for (const auto& r : results[i].outcomes) {
      counts.add(r.verdict);
      if (!a.verbose && r.verdict != workbench::Verdict::fail) continue;
      std::cout << "  " << oracle_line(r);
      if (r.verdict == workbench::Verdict::fail && !r.report.empty()) std::cout << indented(r.report);
    }
    std::cout << results[i].saved;
  }
  std::cout << fmt::format("difftest --seeds={}{}: {} kernel(s), {} with findings; oracles: {}\n", a.seeds,
                           a.shard.empty() ? "" : " --shard=" + a.shard, seeds.size(), with_findings,
                           counts_text(counts));
  if (counts.pass == 0) std::cout << "difftest: no oracle compared anything, so nothing was checked\n";
  return counts.fail || counts.pass == 0 ? 1 : 0;
}

}  // namespace

int cmd_difftest(const DifftestArgs& a) {
  if (a.file.empty() == a.seeds.empty())
    throw UserError("difftest checks either FILE or --seeds=A:B",
                    "for example: passbench difftest kernel.chi, or passbench difftest --seeds=0:100");
  if (!a.file.empty() && !a.shard.empty())
    throw UserError("--shard splits a seed range", "give --seeds=A:B with --shard=I/N");
  return a.file.empty() ? difftest_seeds(a) : difftest_file(a);
}

}  // namespace pb::cli
