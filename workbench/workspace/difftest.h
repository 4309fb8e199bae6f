// Differential testing: a kernel checked against every independent oracle the workbench has (the
// backends against the interpreter, gradients against finite differences, forward against reverse
// mode, semantics-preserving pipelines against the kernel before them, the static global access
// check against the dynamic one), each through the same workspace functions the single commands
// use. Seeded generation (kernel_decoder.h), shards of a seed range, a finding's files and its
// reduction live here too; `passbench difftest` prints what these return. docs/testing.md lists the
// oracles.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ir/kernel.h"
#include "workbench/workspace/compare.h"
#include "workbench/workspace/execute.h"

namespace pb::workbench {

// pass: it compared values and all agreed; fail: a disagreement (or a crash); refused: the kernel
// cannot take the oracle, by the oracle's declared refusal (reason given); absent: the backend is
// not on this machine; empty: it ran but compared nothing, so it checked nothing.
enum class Verdict { pass, fail, refused, absent, empty };
std::string_view verdict_name(Verdict v);  // "PASS", "FAIL", "REFUSED", "ABSENT", "EMPTY"

struct OracleOutcome {
  std::string oracle;  // "backends:cpu", "gradcheck:interp", "pipeline:simplify,dce", "global-access"
  Verdict verdict = Verdict::empty;
  size_t compared = 0;  // values (elements, trials, verdicts) compared
  std::string summary;  // one line: what agreed, what differed, or why it did not run
  std::string report;   // the details a finding is read from (tables, differing elements)
};

// What is checked: a verified kernel and the inputs it runs on.
struct DifftestSubject {
  const ir::Kernel* kernel = nullptr;
  nlohmann::json inputs = nlohmann::json::object();
  std::string inputs_name;           // named in errors about the inputs
  std::string kernel_name = "FILE";  // named in remedies
  std::string loss;                  // gradcheck's loss ("" = the first differentiable field the kernel writes)
};

struct DifftestOptions {
  std::vector<Backend> backends = {Backend::interp, Backend::cpu, Backend::vulkan};
  BackendOptions backend_options;
  Tolerances tolerances;
};

// Every oracle's name, in the order run_oracles runs them, for `backends`.
std::vector<std::string> oracle_names(const std::vector<Backend>& backends);
// The semantics-preserving pipelines each run on the interpreter against the kernel before them.
const std::vector<std::string>& difftest_pipelines();

// Runs one oracle (a name from oracle_names). Never throws for what the kernel or a backend does:
// a crash of a pass or a backend is a FAIL, with the message.
OracleOutcome run_oracle(const std::string& oracle, const DifftestSubject& s, const DifftestOptions& o);
std::vector<OracleOutcome> run_oracles(const DifftestSubject& s, const DifftestOptions& o);

struct VerdictCounts {
  size_t pass = 0, fail = 0, refused = 0, absent = 0, empty = 0;
  void add(Verdict v);
};

// A seed range A:B (A <= s < B) and a shard I/N of it: the seeds s with s % N == I. Both throw
// UserError with the form expected.
struct SeedSlice {
  uint64_t begin = 0, end = 0;
  uint64_t shard = 0, shards = 1;
  std::vector<uint64_t> seeds() const;
};
SeedSlice parse_seed_slice(const std::string& seeds, const std::string& shard);

// Removes statements from `s.kernel`, one at a time from the last, while `oracle` still fails on
// what is left; at most `max_tries` candidates are tried. Returns the smallest failing kernel
// found (a clone of the input when nothing could be removed).
std::unique_ptr<ir::Kernel> reduce_finding(const DifftestSubject& s, const std::string& oracle,
                                           const DifftestOptions& o, int max_tries = 200);

// Writes a finding as DIR/NAME.chi (the kernel, reduced when `reduced` is given, with the original
// beside it as NAME.original.chi), DIR/NAME.inputs.json and DIR/NAME.out (the oracle's output).
// Returns the path of the .chi. Throws UserError when DIR cannot be written.
std::string write_finding(const std::string& dir, const std::string& name, const ir::Kernel& kernel,
                          const nlohmann::json& inputs, const OracleOutcome& outcome, const ir::Kernel* reduced);

}  // namespace pb::workbench
