#include "tests/fuzz/fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"

namespace pb::fuzz {

namespace {

struct Counters {
  uint64_t executions = 0;
  std::map<std::string, uint64_t> by_name;
  ~Counters() {
    if (!std::getenv("PASSBENCH_FUZZ_STATS") || executions == 0) return;
    std::fprintf(stderr, "passbench fuzz counters over %llu executions:\n", (unsigned long long)executions);
    for (const auto& [name, n] : by_name)
      std::fprintf(stderr, "  %-40s %12llu  %6.2f%%\n", name.c_str(), (unsigned long long)n,
                   100.0 * static_cast<double>(n) / static_cast<double>(executions));
  }
};

Counters& counters() {
  static Counters c;
  return c;
}

std::string join(const std::vector<ir::VerifyError>& errors) {
  std::string out;
  for (const auto& e : errors) out += e.format() + "\n";
  return out;
}

}  // namespace

void finding(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "\npassbench fuzz finding: %.*s\n%.*s\n", int(what.size()), what.data(), int(detail.size()),
               detail.data());
  std::fflush(stderr);
  std::abort();
}

void count(const char* name) { ++counters().by_name[name]; }
void count_execution() { ++counters().executions; }

void check_round_trip(const ir::Kernel& k) {
  std::string text = ir::print_kernel(k);
  std::unique_ptr<ir::Kernel> again;
  try {
    again = ir::parse_kernel(text, "<printed>");
  } catch (const UserError& e) {
    finding("a verified kernel prints text that does not parse back", std::string(e.what()) + "\n--- text:\n" + text);
  }
  if (auto errors = ir::verify(*again); !errors.empty())
    finding("a verified kernel's text parses back to a kernel the verifier rejects",
            join(errors) + "--- text:\n" + text);
  if (std::string text2 = ir::print_kernel(*again); text2 != text)
    finding("print(parse(print(k))) differs from print(k)", "--- first:\n" + text + "--- second:\n" + text2);

  nlohmann::json j = ir::to_json(k);
  std::string dumped;
  try {
    dumped = j.dump();
  } catch (const nlohmann::json::exception& e) {
    finding("the JSON of a verified kernel cannot be written", std::string(e.what()) + "\n--- text:\n" + text);
  }
  std::unique_ptr<ir::Kernel> from_json;
  try {
    from_json = ir::from_json(nlohmann::json::parse(dumped));
  } catch (const UserError& e) {
    finding("the JSON of a verified kernel does not read back", std::string(e.what()) + "\n--- text:\n" + text);
  }
  if (auto errors = ir::verify(*from_json); !errors.empty())
    finding("the JSON of a verified kernel reads back to a kernel the verifier rejects", join(errors) + text);
  if (std::string text3 = ir::print_kernel(*from_json); text3 != text)
    finding("print(from_json(to_json(k))) differs from print(k)", "--- text:\n" + text + "--- from JSON:\n" + text3);
  if (std::string dumped2 = ir::to_json(*from_json).dump(); dumped2 != dumped)
    finding("to_json(from_json(to_json(k))) differs from to_json(k)", dumped + "\n" + dumped2);
  // Text leaves some statements unnumbered (print, assert) and lists fields inferred from use in
  // the order of first use: compare with ids renumbered densely and fields sorted by name.
  // Fields with no declaration are compared only when they carry a shape or a companion.
  auto renumbered_json = [](const ir::Kernel& kernel) {
    auto copy = kernel.clone();
    copy->renumber();
    nlohmann::json j = ir::to_json(*copy);
    // A field inferred from use with nothing else to say (no shape, no companion) has no header
    // line; once a pass removes its last use, text cannot carry it. Its name and dtype are
    // re-inferred wherever it is still used.
    auto& fields = j["fields"];
    fields.erase(std::remove_if(fields.begin(), fields.end(),
                                [](const nlohmann::json& f) {
                                  return !f.value("declared", true) && f.value("shape", nlohmann::json()).is_null() &&
                                         !f.contains("grad") && !f.contains("dual") && !f.contains("primal");
                                }),
                 fields.end());
    std::sort(j["fields"].begin(), j["fields"].end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a.value("name", "") < b.value("name", "");
    });
    // An index space inferred from use is only its name (the verifier allows no shape, kind or
    // parent on it), re-inferred from the statements that still name it; a pass that removes the
    // last of them (dce erasing an empty struct for) leaves an entry text cannot carry.
    auto& spaces = j["spaces"];
    spaces.erase(std::remove_if(spaces.begin(), spaces.end(),
                                [](const nlohmann::json& s) { return !s.value("declared", true); }),
                 spaces.end());
    return j.dump();
  };
  if (std::string a = renumbered_json(k), b = renumbered_json(*again); a != b)
    finding("to_json(parse(print(k))) differs from to_json(k) (ids renumbered)", a + "\n" + b + "\n--- text:\n" + text);
}

bool run_passes(ir::Kernel& k, const std::string& pipeline) {
  std::string input = ir::print_kernel(k);
  passes::RunOptions options;
  options.capture = passes::Capture::none;
  passes::PipelineRun run = passes::run_pipeline(k, passes::parse_pipeline(pipeline), options);
  if (!run.failed) {
    if (auto errors = ir::verify(k); !errors.empty())
      finding("the pipeline's output does not verify", pipeline + "\n" + join(errors) + "--- input:\n" + input);
    return true;
  }
  const passes::PassRecord& r = run.records[run.failed_index];
  if (r.internal_error || !r.verify_errors.empty()) {
    std::string detail = "pipeline " + pipeline + ", pass " + r.spec + ": " + r.failure + "\n";
    for (const auto& e : r.verify_errors) detail += e + "\n";
    finding(r.verify_errors.empty() ? "a pass broke an invariant" : "a pass produced IR the verifier rejects",
            detail + "--- input:\n" + input);
  }
  return false;
}

int64_t field_elements(const ir::Kernel& k) {
  int64_t total = 0;
  for (const auto& f : k.fields()) {
    if (!f.shape) continue;
    int64_t n = 1;
    for (int64_t e : *f.shape)
      if (e < 0 || __builtin_mul_overflow(n, e, &n)) return INT64_MAX;
    if (__builtin_add_overflow(total, n, &total)) return INT64_MAX;
  }
  return total;
}

}  // namespace pb::fuzz
