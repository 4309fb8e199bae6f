// A Vulkan 1.1 compute device opened through the loader: the instance, one logical device with a
// compute queue, a command pool and the memory helpers the launcher needs. Plain Vulkan, no
// windowing. Which device: the first whose name contains the filter (case-insensitive), else the
// first one the loader lists. No loader, no device or no match is a UserError with the remedy.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pb::runtime::vulkan {

struct DeviceInfo {
  std::string name;    // VkPhysicalDeviceProperties::deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string type;    // "cpu", "discrete-gpu", ...
  std::string driver;  // driverName + driverInfo when the driver reports them
  uint32_t api_version = 0;
  bool float64 = false;               // shaderFloat64
  bool int64 = false;                 // shaderInt64
  bool atomic_float_add = false;      // VK_EXT_shader_atomic_float: shaderBufferFloat32AtomicAdd
  bool preserve_inf_nan_f32 = false;  // float controls: shaderSignedZeroInfNanPreserveFloat32
  bool preserve_inf_nan_f64 = false;  // float controls: shaderSignedZeroInfNanPreserveFloat64
  uint32_t max_push_constant_bytes = 0;
  uint32_t max_workgroup_count_x = 0;
  uint32_t max_workgroup_size_x = 0;
  bool timestamps = false;         // the compute queue writes timestamps
  double timestamp_period_ns = 0;  // nanoseconds per timestamp tick
};

// The loader's devices. Throws UserError (with the install hint) when there is no loader or
// no device.
std::vector<DeviceInfo> list_devices();

// The hint every "no Vulkan device" error carries.
std::string install_hint();

// One device with its queue. Not copyable; every Vulkan object it owns dies with it.
class Device {
 public:
  // `filter`: a substring of the device name ("" = the first device). Throws UserError.
  explicit Device(const std::string& filter = "");
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return pool_; }

  // A buffer with its own memory: device-local when possible (`host_visible`: host-visible and
  // coherent, mapped at `mapped`). Throws std::bad_alloc when the device is out of memory.
  struct Allocation {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize bytes = 0;
    void* mapped = nullptr;
  };
  Allocation allocate(VkDeviceSize bytes, bool host_visible);
  void release(Allocation& a);

 private:
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const;

  DeviceInfo info_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
};

// Throws pb::UserError naming `what` and the VkResult when `r` is not VK_SUCCESS (out-of-memory
// results throw std::bad_alloc, so callers can retry smaller).
void check(VkResult r, const char* what);

}  // namespace pb::runtime::vulkan
