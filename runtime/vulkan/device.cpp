#include "runtime/vulkan/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <new>

#include "ir/diagnostic.h"

namespace pb::runtime::vulkan {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

VkInstance create_instance() {
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "passbench";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&ci, nullptr, &instance);
  if (r != VK_SUCCESS)
    throw UserError(fmt::format("no Vulkan device: the Vulkan loader could not create an instance (VkResult {})",
                                static_cast<int>(r)),
                    install_hint());
  return instance;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> out(n);
  if (n) vkEnumeratePhysicalDevices(instance, &n, out.data());
  out.resize(n);
  return out;
}

bool has_extension(VkPhysicalDevice p, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(p, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  if (n) vkEnumerateDeviceExtensionProperties(p, nullptr, &n, ext.data());
  for (const auto& e : ext)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// The first queue family with compute, or -1.
int compute_family(VkPhysicalDevice p, uint32_t* timestamp_bits) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(p, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(p, &n, fams.data());
  for (uint32_t i = 0; i < n; ++i)
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      *timestamp_bits = fams[i].timestampValidBits;
      return static_cast<int>(i);
    }
  return -1;
}

DeviceInfo describe(VkPhysicalDevice p) {
  DeviceInfo d;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(p, &base);
  VkPhysicalDeviceFloatControlsProperties controls{};
  controls.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  if (base.apiVersion >= VK_API_VERSION_1_2) {
    props.pNext = &driver;
    driver.pNext = &controls;
    vkGetPhysicalDeviceProperties2(p, &props);
    d.preserve_inf_nan_f32 = controls.shaderSignedZeroInfNanPreserveFloat32;
    d.preserve_inf_nan_f64 = controls.shaderSignedZeroInfNanPreserveFloat64;
    d.driver = fmt::format("{} {}", driver.driverName, driver.driverInfo);
  }
  d.name = base.deviceName;
  d.type = type_name(base.deviceType);
  d.api_version = base.apiVersion;
  d.max_push_constant_bytes = base.limits.maxPushConstantsSize;
  d.max_workgroup_count_x = base.limits.maxComputeWorkGroupCount[0];
  d.max_workgroup_size_x = base.limits.maxComputeWorkGroupSize[0];
  d.timestamp_period_ns = base.limits.timestampPeriod;
  uint32_t ts_bits = 0;
  compute_family(p, &ts_bits);
  d.timestamps = ts_bits > 0 && base.limits.timestampComputeAndGraphics;

  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic{};
  atomic.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  bool atomic_ext = has_extension(p, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (atomic_ext) features.pNext = &atomic;
  vkGetPhysicalDeviceFeatures2(p, &features);
  d.float64 = features.features.shaderFloat64;
  d.int64 = features.features.shaderInt64;
  d.atomic_float_add = atomic_ext && atomic.shaderBufferFloat32AtomicAdd;
  return d;
}

}  // namespace

std::string install_hint() {
  return "install a Vulkan driver and the loader (Debian: apt-get install libvulkan1 mesa-vulkan-drivers, which "
         "brings lavapipe, a Vulkan device on the CPU; scripts/install-deps.sh does it) and check it with "
         "`vulkaninfo --summary`; or run on --backend=interp";
}

void check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return;
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) throw std::bad_alloc();
  throw UserError(
      fmt::format("Vulkan: {} failed (VkResult {})", what, static_cast<int>(r)),
      r == VK_ERROR_DEVICE_LOST ? "the device was lost: check the driver (dmesg), rerun with a smaller size" : "");
}

std::vector<DeviceInfo> list_devices() {
  VkInstance instance = create_instance();
  std::vector<DeviceInfo> out;
  for (VkPhysicalDevice p : physical_devices(instance)) out.push_back(describe(p));
  vkDestroyInstance(instance, nullptr);
  if (out.empty()) throw UserError("no Vulkan device: the loader lists none", install_hint());
  return out;
}

Device::Device(const std::string& filter) {
  instance_ = create_instance();
  std::vector<VkPhysicalDevice> devices = physical_devices(instance_);
  std::vector<std::string> names;
  for (VkPhysicalDevice p : devices) {
    DeviceInfo d = describe(p);
    names.push_back(d.name);
    uint32_t ts = 0;
    if (compute_family(p, &ts) < 0) continue;
    if (filter.empty() || lower(d.name).find(lower(filter)) != std::string::npos) {
      physical_ = p;
      info_ = d;
      break;
    }
  }
  if (!physical_) {
    vkDestroyInstance(instance_, nullptr);
    if (devices.empty()) throw UserError("no Vulkan device: the loader lists none", install_hint());
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + fmt::format("\"{}\"", n);
    throw UserError(fmt::format("no Vulkan device with compute whose name contains \"{}\"", filter),
                    fmt::format("pick one of {} with --device (a substring of the name)", list));
  }
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  uint32_t ts = 0;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = static_cast<uint32_t>(compute_family(physical_, &ts));
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic{};
  atomic.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  atomic.shaderBufferFloat32AtomicAdd = info_.atomic_float_add;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.features.shaderFloat64 = info_.float64;
  features.features.shaderInt64 = info_.int64;
  std::vector<const char*> extensions;
  if (info_.atomic_float_add) {
    features.pNext = &atomic;
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateDevice(physical_, &dci, nullptr, &device_);
  if (r != VK_SUCCESS) {
    vkDestroyInstance(instance_, nullptr);
    throw UserError(
        fmt::format("Vulkan: creating a device on \"{}\" failed (VkResult {})", info_.name, static_cast<int>(r)),
        install_hint());
  }
  vkGetDeviceQueue(device_, qci.queueFamilyIndex, 0, &queue_);
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = qci.queueFamilyIndex;
  check(vkCreateCommandPool(device_, &pci, nullptr, &pool_), "vkCreateCommandPool");
}

Device::~Device() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

uint32_t Device::memory_type(uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const {
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
    if ((type_bits & (1u << i)) && (f & want) == want && !(f & avoid)) return i;
  }
  return UINT32_MAX;
}

Device::Allocation Device::allocate(VkDeviceSize bytes, bool host_visible) {
  Allocation a;
  a.bytes = std::max<VkDeviceSize>(bytes, 16);
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = a.bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &bci, nullptr, &a.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, a.buffer, &req);
  uint32_t type = UINT32_MAX;
  if (host_visible) {
    type = memory_type(
        req.memoryTypeBits,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
        0);
    if (type == UINT32_MAX)
      type = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         0);
  } else {
    type = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    if (type == UINT32_MAX) type = memory_type(req.memoryTypeBits, 0, 0);
  }
  if (type == UINT32_MAX) {
    vkDestroyBuffer(device_, a.buffer, nullptr);
    throw UserError(fmt::format("Vulkan: \"{}\" has no memory type for a storage buffer", info_.name));
  }
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  VkResult r = vkAllocateMemory(device_, &mai, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, a.buffer, nullptr);
    check(r, "vkAllocateMemory");
  }
  check(vkBindBufferMemory(device_, a.buffer, a.memory, 0), "vkBindBufferMemory");
  if (host_visible) check(vkMapMemory(device_, a.memory, 0, VK_WHOLE_SIZE, 0, &a.mapped), "vkMapMemory");
  return a;
}

void Device::release(Allocation& a) {
  if (a.buffer) vkDestroyBuffer(device_, a.buffer, nullptr);
  if (a.memory) vkFreeMemory(device_, a.memory, nullptr);
  a = Allocation{};
}

}  // namespace pb::runtime::vulkan
