// The Vulkan backend (runtime.h, run.h) as a runtime::Backend: kernels compiled by the SPIR-V
// backend and launched on a Vulkan device. It carries out the launch sequences of every mode; the
// interpreter-only parts (shuffling, decision tracing, f64 mode, the dynamic access check, stack
// usage) are refused by name.
#pragma once

#include <string>

#include "runtime/core/backend.h"
#include "runtime/vulkan/device.h"

namespace pb::runtime::vulkan {

// The backend on the first device whose name contains `device_filter` ("" = the first device),
// opened on first use and kept for the life of the process (one per filter). Throws UserError when
// there is no such device.
Backend& backend(const std::string& device_filter = "");

// The device a filter opens (opening it if needed). Throws UserError when there is none.
const DeviceInfo& device_info(const std::string& device_filter = "");

}  // namespace pb::runtime::vulkan
