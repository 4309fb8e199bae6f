// Cross-compiles one task's SPIR-V module to Metal Shading Language or GLSL with SPIRV-Cross and
// measures the text (text_metrics.h). MSL is produced for reading and size comparison only: no
// Metal compiler exists on Linux, so nothing here proves the MSL compiles; that needs macOS
// (xcrun metal). SPIRV-Cross errors become UserErrors naming the kernel, task and language.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "codegen/msl/text_metrics.h"

namespace pb::codegen::msl {

// Default: MSL 2.3 for macOS (macOS 11+, the Apple-silicon baseline); local arrays stay
// spvUnsafeArray<T, N> (SPIRV-Cross' default), so whole-array copies are plain assignments.
struct MslOptions {
  uint32_t major = 2;
  uint32_t minor = 3;
  bool ios = false;
};

// Default: desktop GLSL 450 with Vulkan semantics (keeps descriptor sets, push constants and
// SPIR-V's buffer layout, i.e. the same program the Vulkan driver gets); false gives OpenGL GLSL.
struct GlslOptions {
  uint32_t version = 450;
  bool vulkan_semantics = true;
};

struct CrossCompiled {
  std::string language;     // "msl 2.3 macos", "glsl 450 vulkan", "glsl 450 opengl"
  std::string entry_point;  // the entry point's name in the output ("main0" in MSL, "main" in GLSL)
  std::string text;
  TextMetrics metrics;  // of `text`
};

CrossCompiled spirv_to_msl(std::span<const uint32_t> words, const MslOptions& options, std::string_view kernel,
                           std::string_view task);
CrossCompiled spirv_to_glsl(std::span<const uint32_t> words, const GlslOptions& options, std::string_view kernel,
                            std::string_view task);

// {"language", "entry_point", "bytes", "lines", "local_declarations", "alias_copies"}; no text.
nlohmann::ordered_json metrics_to_json(const CrossCompiled& compiled);

}  // namespace pb::codegen::msl
