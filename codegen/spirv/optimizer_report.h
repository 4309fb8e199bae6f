// What one run of the SPIR-V optimizer records: options, one row per pass, the failure (if any),
// deduplicated optimizer messages, warnings and the validation verdict. Plain data; the JSON form
// (schema "passbench.spirv-opt-report", version 1, described in docs/codegen-spirv.md) and the
// text table for the CLI are derived here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pb::codegen::spirv {

inline constexpr uint32_t kDefaultMaxIdBound = 0x3FFFFF;  // 4,194,303: SPIRV-Tools' own default

enum class TargetEnv { kVulkan1_0, kVulkan1_1, kVulkan1_2, kVulkan1_3 };
std::string_view target_env_name(TargetEnv env);  // "vulkan1.1"

struct OptimizerOptions {
  uint32_t max_id_bound = kDefaultMaxIdBound;  // any value up to 2^32-1
  bool intermediate_dce = true;                // false: keep only the last AggressiveDCE
  bool compact_ids = true;                     // false: leave the final CompactIds out
  // The limit handed to SPIRV-Tools itself. Its passes can crash or corrupt memory when they hit
  // that limit, so by default it sits above max_id_bound (max_id_bound + max(max_id_bound, 2^20),
  // capped at 2^32-1) and a pass whose output bound exceeds max_id_bound is the overflow. Set it
  // to max_id_bound to reproduce the reference compiler's behaviour exactly.
  std::optional<uint32_t> spirv_tools_max_id_bound;
  bool allow_fallback = false;  // on failure return the input module, with a warning
  bool validate = true;         // run spirv-val on the module finally used
  TargetEnv target_env = TargetEnv::kVulkan1_1;
  // The module keeps its adstack counts in one shared array already, so an ID overflow's remedy
  // does not suggest that lowering (the optimizer cannot tell from the words).
  bool counts_in_shared_array = false;
};

// Measures of the module after one pass (row 0: the input, pass "input", ms 0).
struct OptimizerPassRow {
  int index = 0;
  std::string pass;
  std::string flag;  // spirv-opt spelling; empty for the input row
  uint32_t id_bound = 0;
  uint64_t instructions = 0;
  uint64_t phis = 0;
  uint64_t function_variables = 0;
  uint64_t bytes = 0;
  double ms = 0;         // wall time of Optimizer::Run for this pass alone (parse + pass + serialise)
  bool changed = false;  // the output words differ from the input words
};

// One distinct message from SPIRV-Tools; identical (level, text) pairs are counted, not repeated.
struct OptimizerMessage {
  std::string level;  // "error", "warning", "info", ...
  std::string text;
  std::string first_pass;  // the pass that emitted it first ("spirv-val" for the validator)
  uint64_t count = 1;
};

// Adds one message to `messages`, or bumps the count of an identical earlier one.
void record_message(std::vector<OptimizerMessage>& messages, std::string_view level, std::string_view text,
                    std::string_view pass);

enum class OptimizerFailureKind { kIdOverflow, kPassFailed, kInvalidOutput };
std::string_view failure_kind_name(OptimizerFailureKind kind);  // "id_overflow", "pass_failed", "invalid_output"

struct OptimizerFailure {
  OptimizerFailureKind kind = OptimizerFailureKind::kPassFailed;
  std::string pass;               // the pass that failed ("spirv-val" for invalid output)
  int pass_index = 0;             // 1-based position in the pipeline; 0 for invalid output
  uint32_t max_id_bound = 0;      // the limit in force
  uint32_t id_bound_before = 0;   // ID bound of the module the failing pass was given
  uint32_t id_bound_reached = 0;  // bound of the pass's (discarded) output; 0 when SPIRV-Tools stopped it
};

// The limit optimize_spirv hands to SPIRV-Tools for `options` (see spirv_tools_max_id_bound).
uint32_t effective_spirv_tools_max_id_bound(const OptimizerOptions& options);

struct OptimizerReport {
  std::string kernel;
  std::string task;
  OptimizerOptions options;
  std::vector<OptimizerPassRow> rows;  // input row, then one row per pass that completed
  uint32_t peak_id_bound = 0;          // largest ID bound among the rows
  std::string peak_pass;               // first row where the peak was reached
  uint32_t final_id_bound = 0;         // of the module actually used (0 when none is: failure thrown)
  uint64_t live_ids = 0;               // distinct result ids in the module actually used (0 likewise)
  double total_ms = 0;                 // sum of the rows' ms
  bool used_fallback = false;          // the unoptimised input was returned because of `failure`
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
