#include "runtime/vulkan/backend.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "ir/widen.h"
#include "runtime/core/prepare.h"
#include "runtime/vulkan/run.h"
#include "runtime/vulkan/runtime.h"

namespace pb::runtime::vulkan {

namespace {

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(const std::string& filter) : runtime_(filter) {}
  std::string_view name() const override { return "vulkan"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.device_timestamps = runtime_.device().timestamps;
    c.f64_mode = runtime_.device().float64;
    return c;
  }
  const DeviceInfo& device() const { return runtime_.device(); }

  RunResult launch(const ir::Kernel& k, State& state, const RunOptions& options) override {
    require_capabilities(*this, options, false);
    auto start = std::chrono::steady_clock::now();
    std::unique_ptr<ir::Kernel> scalar = scalarized_if_tensor(k, "vulkan");
    const ir::Kernel* run = scalar ? scalar.get() : &k;
    // f64 mode: the kernel with every f32 widened to f64, on buffers widened alike (they stay f64,
    // as after the interpreter's f64 mode).
    std::unique_ptr<ir::Kernel> wide;
    if (options.f64) {
      wide = ir::widen_f32_to_f64(*run);
      if (!wide)
        throw Refusal(
            "f64 mode on vulkan: the kernel reinterprets the bits of an f32 value (`cast_bits`), which has no f64 "
            "meaning",
            "run it in f64 mode on the interpreter, or without f64 mode");
      run = wide.get();
      widen_floats(state);
    }
    refuse_missing_features(*run);
    LaunchOptions launch;
    launch.max_steps = options.max_steps;
    std::lock_guard lock(mutex_);  // one queue: launches take turns
    RunReport r = run_kernel(runtime_, *run, state, {}, launch);
    RunResult out;
    out.returned = std::move(r.launch.returned);
    out.device = runtime_.device().name;
    out.times.compile_ms = r.compile_ms;
    out.times.kernel_ms = r.launch.kernel_ms;
    out.times.kernel_timed = r.launch.timed;
    out.times.transfer_ms = r.launch.timed ? std::max(0.0, r.launch.launch_ms - r.launch.kernel_ms) : 0;
    out.times.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!r.launch.timed) out.times.kernel_ms = r.launch.launch_ms;
    return out;
  }

 private:
  // A kernel whose types the device lacks is refused before compiling.
  void refuse_missing_features(const ir::Kernel& k) const {
    const DeviceInfo& d = runtime_.device();
    auto lowering = lowering_for(k, d);
    std::string lacks;
    if (lowering.float64 && !d.float64) lacks = "shaderFloat64 (the kernel uses f64)";
    if (lowering.int64 && !d.int64) lacks = "shaderInt64 (the kernel uses 64-bit integers)";
    if (!lacks.empty())
      throw Refusal(fmt::format("the Vulkan device \"{}\" lacks {}", d.name, lacks),
                    "run it on a device that has the feature (--device), or on interp or cpu");
  }

  Runtime runtime_;
  std::mutex mutex_;
};

// Never destroyed: a device torn down by a static destructor at exit can run after the driver's
// own teardown (NVIDIA's driver then crashes the exiting process); the OS reclaims it instead.
VulkanBackend& opened(const std::string& filter) {
  static std::mutex mutex;
  static auto* backends = new std::map<std::string, std::unique_ptr<VulkanBackend>>();
  std::lock_guard lock(mutex);
  auto& slot = (*backends)[filter];
  if (!slot) {
    try {
      slot = std::make_unique<VulkanBackend>(filter);
    } catch (const UserError& e) {
      throw BackendAbsent(e.diagnostic());
    }
  }
  return *slot;
}

}  // namespace

Backend& backend(const std::string& device_filter) { return opened(device_filter); }

const DeviceInfo& device_info(const std::string& device_filter) { return opened(device_filter).device(); }

}  // namespace pb::runtime::vulkan
