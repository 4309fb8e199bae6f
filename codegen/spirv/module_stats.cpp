#include "codegen/spirv/module_stats.h"

#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace pb::codegen::spirv {
namespace {

constexpr uint16_t kOpPhi = 245;
constexpr uint16_t kOpVariable = 59;
constexpr uint32_t kStorageClassFunction = 7;

struct Counter {
  ModuleStats stats;
  std::vector<uint32_t> result_ids;  // sorted and deduplicated at the end
};

spv_result_t on_header(void* user, spv_endianness_t, uint32_t, uint32_t, uint32_t, uint32_t id_bound, uint32_t) {
  auto* counter = static_cast<Counter*>(user);
  counter->stats.id_bound = id_bound;
  return SPV_SUCCESS;
}

spv_result_t on_instruction(void* user, const spv_parsed_instruction_t* inst) {
  auto* counter = static_cast<Counter*>(user);
  ModuleStats& stats = counter->stats;
  ++stats.instructions;
  if (inst->opcode == kOpPhi) ++stats.phis;
  // OpVariable: result type, result id, storage class, [initializer].
  if (inst->opcode == kOpVariable && inst->num_words >= 4 && inst->words[3] == kStorageClassFunction)
    ++stats.function_variables;
  if (inst->result_id != 0) counter->result_ids.push_back(inst->result_id);
  return SPV_SUCCESS;
}

}  // namespace

std::optional<ModuleStats> measure_module(std::span<const uint32_t> words, std::string* error) {
  // The universal environment parses every SPIR-V version this project can produce.
  std::unique_ptr<spv_context_t, void (*)(spv_context)> context(spvContextCreate(SPV_ENV_UNIVERSAL_1_6),
                                                                spvContextDestroy);
  Counter counter;
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result =
      spvBinaryParse(context.get(), &counter, words.data(), words.size(), on_header, on_instruction, &diagnostic);
  if (result != SPV_SUCCESS) {
    if (error) *error = diagnostic ? diagnostic->error : "SPIR-V binary could not be parsed";
    spvDiagnosticDestroy(diagnostic);
    return std::nullopt;
  }
  spvDiagnosticDestroy(diagnostic);
  counter.stats.bytes = static_cast<uint64_t>(words.size()) * 4;
  std::sort(counter.result_ids.begin(), counter.result_ids.end());
  counter.stats.live_ids = static_cast<uint64_t>(std::unique(counter.result_ids.begin(), counter.result_ids.end()) -
                                                 counter.result_ids.begin());
  return counter.stats;
}

}  // namespace pb::codegen::spirv
