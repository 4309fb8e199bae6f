// The one pass contract. A pass is declared once, in a PassInfo (name = command-line spelling,
// summary, typed options with defaults, statistics); the registry, `passbench passes`, pipeline
// parsing and the GUI's option widgets all read that declaration. Running a pass returns whether
// it changed the kernel plus its named statistics. The algorithm itself lives in a free function
// the pass wraps, so other passes can call it directly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/kernel.h"

namespace pb::passes {

enum class OptionType { Bool, Int, Float, String };

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::Bool;
  std::string default_value;  // in pipeline syntax: "true", "0", "1.5", "heap"
  std::string help;
  std::vector<std::string> choices;  // String options: the allowed values (empty: any)
  int64_t min_int = INT64_MIN;       // Int options: the range a pipeline string may give
  int64_t max_int = INT64_MAX;
};

using OptionValue = std::variant<bool, int64_t, double, std::string>;

// Option values of one pass run, every declared option present (defaults filled in).
class PassOptions {
 public:
  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  void set(const std::string& name, OptionValue v) { values_[name] = std::move(v); }
  const std::map<std::string, OptionValue>& values() const { return values_; }

 private:
  const OptionValue& at(const std::string& name) const;
  std::map<std::string, OptionValue> values_;
};

using Statistics = std::map<std::string, int64_t>;

struct PassResult {
  bool changed = false;
  Statistics stats;
  // Per-item findings for --stats (e.g. each stack's bound). The initializer keeps GCC's
  // -Wmissing-field-initializers quiet on designated initializers that leave it out.
  std::vector<std::string> notes = {};  // NOLINT(readability-redundant-member-init)
  // Problems that do not stop the pipeline (a conservative "maybe" of a check); every face shows
  // them, not only with --stats.
  std::vector<std::string> warnings = {};  // NOLINT(readability-redundant-member-init)
};

class Pass {
 public:
  virtual ~Pass() = default;
  // Runs on the whole kernel. User-facing problems (a kernel the pass cannot handle) throw
  // pb::UserError; broken invariants are PB_ASSERTs.
  virtual PassResult run(ir::Kernel& k, const PassOptions& options) = 0;
};

struct PassInfo {
  std::string name;     // the command-line spelling
  std::string summary;  // one line
  std::vector<OptionSpec> options;
  std::vector<std::string> statistics;  // names the pass reports, in display order
  std::function<std::unique_ptr<Pass>()> create;
  // The output may use values that do not dominate their uses yet (make_adjoint); the verifier
  // after it skips the dominance check, and a later pass (backup_ssa) must restore it.
  bool may_break_dominance = false;
  // Handles tensor-typed statements; the pass manager refuses to run any other pass on a kernel
  // that has them, naming the first and pointing at scalarize.
  bool takes_tensors = false;
};

// A named pipeline (`reverse_ad`): options of its own, expanded to a pipeline string.
struct NamedPipelineInfo {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  std::function<std::string(const PassOptions&)> expand;
};

// Builds a PassInfo for a Pass class with a static `info()` returning the declaration fields.
template <class P>
PassInfo declare_pass(PassInfo info) {
  info.create = [] { return std::make_unique<P>(); };
  return info;
}

}  // namespace pb::passes
