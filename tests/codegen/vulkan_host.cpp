#include "vulkan_host.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "ir/diagnostic.h"

namespace pb::codegen::spirv::test {

namespace {

struct Opened {
  std::unique_ptr<runtime::vulkan::Runtime> runtime;
  std::string why;
};

Opened& opened() {
  static Opened o = [] {
    Opened out;
    try {
      out.runtime = std::make_unique<runtime::vulkan::Runtime>();
    } catch (const UserError& e) {
      out.why = e.what();
    }
    return out;
  }();
  return o;
}

}  // namespace

runtime::vulkan::Runtime* vulkan() { return opened().runtime.get(); }
std::string vulkan_unavailable() { return opened().why; }

HostRun run_on_host(const ir::Kernel& k, const CompiledKernel& ck, runtime::State& state, bool optimize,
                    uint32_t dynamic_invocations) {
  runtime::vulkan::LaunchOptions o;
  o.optimize = optimize;
  o.fallback_invocations = dynamic_invocations;
  runtime::vulkan::LaunchResult r = vulkan()->launch(k, ck, state, o);
  return {r.stack_overflow, r.assert_code};
}

bool matches_reference(const ir::Value& a, const ir::Value& b, double tolerance) {
  if (!ir::is_float(a.kind())) return a.bits() == b.bits();
  double x = a.as_f64(), y = b.as_f64();
  if (x == y || (std::isnan(x) && std::isnan(y))) return true;
  return std::fabs(x - y) <= tolerance * std::max({1.0, std::fabs(x), std::fabs(y)});
}

}  // namespace pb::codegen::spirv::test
