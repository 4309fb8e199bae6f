// Placeholder translation unit so the library exists while the SPIR-V backend is written.
#include <spirv-tools/libspirv.hpp>
#include <spirv_cross/spirv_msl.hpp>

namespace passbench::codegen {
bool spirv_tools_linked() {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  return tools.IsValid();
}
}  // namespace passbench::codegen
