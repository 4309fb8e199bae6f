#include "runtime/core/backend.h"

#include <fmt/format.h>

namespace pb::runtime {

std::string_view request_part_name(RequestPart p) {
  switch (p) {
    case RequestPart::shuffle:
      return "shuffled iteration order";
    case RequestPart::trace_decisions:
      return "decision tracing";
    case RequestPart::f64_mode:
      return "f64 mode (f32 computed as f64)";
    case RequestPart::check_global_access:
      return "the dynamic global-access check";
    case RequestPart::unsized_stacks_unlimited:
      return "unsized autodiff stacks without a limit";
    case RequestPart::stack_usage:
      return "a stack-usage report";
  }
  return "?";
}

std::vector<RequestPart> missing_capabilities(const Capabilities& caps, const RunOptions& options, bool stack_usage) {
  std::vector<RequestPart> out;
  if (options.shuffle && !caps.shuffle) out.push_back(RequestPart::shuffle);
  if (options.trace_decisions && !caps.trace_decisions) out.push_back(RequestPart::trace_decisions);
  if (options.f64 && !caps.f64_mode) out.push_back(RequestPart::f64_mode);
  if (options.check_global_access && !caps.check_global_access) out.push_back(RequestPart::check_global_access);
  if (options.unsized_stacks_unlimited && !caps.unsized_stacks_unlimited)
    out.push_back(RequestPart::unsized_stacks_unlimited);
  if (stack_usage && !caps.stack_usage) out.push_back(RequestPart::stack_usage);
  return out;
}

void require_capabilities(const Backend& b, const RunOptions& options, bool stack_usage) {
  std::vector<RequestPart> missing = missing_capabilities(b.capabilities(), options, stack_usage);
  if (missing.empty()) return;
  std::string parts;
  for (size_t i = 0; i < missing.size(); ++i)
    parts += std::string(i == 0                    ? ""
                         : i + 1 == missing.size() ? " and "
                                                   : ", ") +
             std::string(request_part_name(missing[i]));
  Diagnostic d;
  d.message = fmt::format("the {} backend cannot carry out {}", b.name(), parts);
  d.remedy =
      "run this request on a backend that can (docs/backends.md lists what each backend runs), or leave that part "
      "out";
  throw Refusal(d, std::move(missing));
}

}  // namespace pb::runtime
