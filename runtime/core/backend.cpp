#include "runtime/core/backend.h"

#include <fmt/format.h>

namespace pb::runtime {

std::vector<std::string> missing_capabilities(const Capabilities& caps, const RunOptions& options, bool stack_usage) {
  std::vector<std::string> out;
  if (options.shuffle && !caps.shuffle) out.emplace_back("shuffled iteration order");
  if (options.trace_decisions && !caps.trace_decisions) out.emplace_back("decision tracing");
  if (options.f64 && !caps.f64_mode) out.emplace_back("f64 mode (f32 computed as f64)");
  if (options.check_global_access && !caps.check_global_access) out.emplace_back("the dynamic global-access check");
  if (options.unsized_stacks_unlimited && !caps.unsized_stacks_unlimited)
    out.emplace_back("unsized autodiff stacks without a limit");
  if (stack_usage && !caps.stack_usage) out.emplace_back("a stack-usage report");
  return out;
}

void require_capabilities(const Backend& b, const RunOptions& options, bool stack_usage) {
  std::vector<std::string> missing = missing_capabilities(b.capabilities(), options, stack_usage);
  if (missing.empty()) return;
  std::string parts;
  for (size_t i = 0; i < missing.size(); ++i)
    parts += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  throw Refusal(fmt::format("the {} backend cannot carry out {}", b.name(), parts),
                "run this request on a backend that can (docs/backends.md lists what each backend runs), or leave "
                "that part out");
}

}  // namespace pb::runtime
