// What one run of the SPIR-V optimizer records: options, one row per pass, the failure (if any),
// deduplicated optimizer messages, warnings and the validation verdict. Plain data; the JSON form
// (schema "passbench.spirv-opt-report", version 2, described in docs/codegen-spirv.md) and the
// text table for the CLI are derived here.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pb::codegen::spirv {

// The bound handed to SPIRV-Tools while optimizing: 67,108,863 (0x3FFFFFF), the reference
// compiler's, 16 times SPIRV-Tools' own default, because SSA construction on autodiff kernels
// allocates (and drops) far more IDs than survive; CompactIds at the end renumbers densely.
inline constexpr uint32_t kDefaultMaxIdBound = 0x3FFFFFF;
// 4,194,303: the SPIR-V specification's universal limit on a module's ID bound (spirv-val's
// default); the module returned must stay within it.
inline constexpr uint32_t kSpirvUniversalIdBound = 0x3FFFFF;

enum class TargetEnv { kVulkan1_0, kVulkan1_1, kVulkan1_2, kVulkan1_3 };
std::string_view target_env_name(TargetEnv env);  // "vulkan1.1"

struct OptimizerOptions {
  // The limit handed to SPIRV-Tools for every run (any value up to 2^32-1): no ID at or above it
  // is ever allocated, in any pass.
  uint32_t max_id_bound = kDefaultMaxIdBound;
  bool intermediate_dce = true;  // false: keep only the last AggressiveDCE
  bool compact_ids = true;       // false: leave the final CompactIds out
  // false (the normal path): all passes in one spvtools::Optimizer, as spirv-opt runs them; the
  // report has the input row and one row for the pipeline. true: one Optimizer per pass, a row
  // per pass with the IDs it needed (extra runs of the passes that drop IDs; see
  // docs/codegen-spirv.md), several times slower.
  bool measure_passes = false;
  // measure_passes: called before pass `index` (1-based) of `count` runs; empty: no calls.
  std::function<void(size_t index, size_t count)> on_pass;
  bool allow_fallback = false;  // on failure return the input module, with a warning
  bool validate = true;         // run spirv-val on the module finally used
  TargetEnv target_env = TargetEnv::kVulkan1_1;
  // The module keeps its adstack counts in one shared array already, so an ID overflow's remedy
  // does not suggest that lowering (the optimizer cannot tell from the words).
  bool counts_in_shared_array = false;
};

// Measures of the module after one pass (row 0: the input, pass "input", ms 0). In the normal
// path the one row after the input is pass "pipeline", the whole pass list.
struct OptimizerPassRow {
  int index = 0;
  std::string pass;
  std::string flag;       // spirv-opt spelling; empty for the input and pipeline rows
  uint32_t id_bound = 0;  // of the output: the highest ID that survived the pass, plus one
  // The bound the pass needed while it ran (IDs it allocated and dropped included): the smallest
  // bound it ran under, within 1/16 above the true need unless peak_exact. 0: not measured.
  uint32_t peak_id_bound = 0;
  bool peak_exact = false;
  int probe_runs = 0;  // extra runs of the pass spent measuring peak_id_bound
  uint64_t instructions = 0;
  uint64_t phis = 0;
  uint64_t function_variables = 0;
  uint64_t bytes = 0;
  double ms = 0;         // wall time of Optimizer::Run for this row (parse + pass(es) + serialise)
  bool changed = false;  // the output words differ from the input words
};

// One distinct message from SPIRV-Tools; identical (level, text) pairs are counted, not repeated.
struct OptimizerMessage {
  std::string level;  // "error", "warning", "info", ...
  std::string text;
  std::string first_pass;  // the pass that emitted it first ("spirv-val" for the validator)
  uint64_t count = 1;
};

// Adds one message to `messages`, or bumps the count of an identical earlier one. Past
// kMaxDistinctMessages distinct texts, further new texts are counted in one last message.
inline constexpr size_t kMaxDistinctMessages = 200;
void record_message(std::vector<OptimizerMessage>& messages, std::string_view level, std::string_view text,
                    std::string_view pass);

enum class OptimizerFailureKind { kIdOverflow, kPassFailed, kInvalidOutput };
std::string_view failure_kind_name(OptimizerFailureKind kind);  // "id_overflow", "pass_failed", "invalid_output"

struct OptimizerFailure {
  OptimizerFailureKind kind = OptimizerFailureKind::kPassFailed;
  std::string pass;              // the pass that failed ("spirv-val" for invalid output)
  int pass_index = 0;            // 1-based position in the pipeline; 0 for invalid output
  uint32_t max_id_bound = 0;     // the limit in force
  uint32_t id_bound_before = 0;  // ID bound of the module the failing pass was given
  // ID overflow: what the run up to and including the failing pass needs, measured by running
  // it again under larger bounds: more than need_above, at most need_at_most (0: not found
  // up to the probe cap, see docs/codegen-spirv.md).
  uint32_t need_above = 0;
  uint32_t need_at_most = 0;
};

struct OptimizerReport {
  std::string kernel;
  std::string task;
  OptimizerOptions options;
  std::vector<OptimizerPassRow> rows;  // input row, then one row per pass (or the pipeline) that completed
  // The largest need among the rows (measure_passes), else the largest bound among the rows.
  uint32_t peak_id_bound = 0;
  std::string peak_pass;        // first row where the peak was reached
  uint32_t final_id_bound = 0;  // of the module actually used (0 when none is: failure thrown)
  uint64_t live_ids = 0;        // distinct result ids in the module actually used (0 likewise)
  double total_ms = 0;          // sum of the rows' ms
  bool used_fallback = false;   // the unoptimised input was returned because of `failure`
  bool module_used() const { return !failure || used_fallback; }
  std::optional<OptimizerFailure> failure;
  std::vector<std::string> warnings;
  std::vector<OptimizerMessage> messages;
  bool validated = false;  // spirv-val ran on the module actually used
  bool valid = false;      // its verdict (meaningless when !validated)
};

nlohmann::ordered_json report_to_json(const OptimizerReport& report);

// A fixed-width table, one line per row, then the summary, failure, warnings and messages.
std::string format_report_table(const OptimizerReport& report);

}  // namespace pb::codegen::spirv
