#include "codegen/msl/cross.h"

#include <fmt/format.h>

#include <spirv_cross/spirv_glsl.hpp>
#include <spirv_cross/spirv_msl.hpp>
#include <vector>

#include "codegen/large_stack.h"
#include "ir/diagnostic.h"

namespace pb::codegen::msl {
namespace {

// Name of the (single) entry point after SPIRV-Cross renamed it for the target language.
std::string entry_point_name(const spirv_cross::Compiler& compiler) {
  const auto entry_points = compiler.get_entry_points_and_stages();
  if (entry_points.empty()) return {};
  return compiler.get_cleansed_entry_point_name(entry_points[0].name, entry_points[0].execution_model);
}

// Runs `translate` and turns SPIRV-Cross' exceptions into a UserError.
template <typename Translate>
CrossCompiled cross_compile(std::string_view language, std::string_view kernel, std::string_view task,
                            Translate&& translate) {
  CrossCompiled out;
  out.language = language;
  try {
    translate(out);
  } catch (const spirv_cross::CompilerError& e) {
    throw UserError(
        fmt::format("SPIRV-Cross cannot translate kernel '{}', task '{}' to {}: {}", kernel, task, language, e.what()),
        "inspect the module with --target=spvasm; the construct named above is not supported by this "
        "SPIRV-Cross build for that language");
  }
  out.metrics = measure_text(out.text);
  return out;
}

}  // namespace

CrossCompiled spirv_to_msl(std::span<const uint32_t> words, const MslOptions& options, std::string_view kernel,
                           std::string_view task) {
  const std::string language = fmt::format("msl {}.{} {}", options.major, options.minor, options.ios ? "ios" : "macos");
  return cross_compile(language, kernel, task, [&](CrossCompiled& out) {
    spirv_cross::CompilerMSL compiler(std::vector<uint32_t>(words.begin(), words.end()));
    spirv_cross::CompilerMSL::Options msl = compiler.get_msl_options();
    msl.set_msl_version(options.major, options.minor);
    msl.platform = options.ios ? spirv_cross::CompilerMSL::Options::iOS : spirv_cross::CompilerMSL::Options::macOS;
    compiler.set_msl_options(msl);
    codegen::on_large_stack([&] { out.text = compiler.compile(); });
    out.entry_point = entry_point_name(compiler);
  });
}

CrossCompiled spirv_to_glsl(std::span<const uint32_t> words, const GlslOptions& options, std::string_view kernel,
                            std::string_view task) {
  const std::string language =
      fmt::format("glsl {} {}", options.version, options.vulkan_semantics ? "vulkan" : "opengl");
  return cross_compile(language, kernel, task, [&](CrossCompiled& out) {
    spirv_cross::CompilerGLSL compiler(std::vector<uint32_t>(words.begin(), words.end()));
    spirv_cross::CompilerGLSL::Options glsl = compiler.get_common_options();
    glsl.version = options.version;
    glsl.es = false;
    glsl.vulkan_semantics = options.vulkan_semantics;
    compiler.set_common_options(glsl);
    codegen::on_large_stack([&] { out.text = compiler.compile(); });
    out.entry_point = entry_point_name(compiler);
  });
}

nlohmann::ordered_json metrics_to_json(const CrossCompiled& compiled) {
  return {{"language", compiled.language},
          {"entry_point", compiled.entry_point},
          {"bytes", compiled.metrics.bytes},
          {"lines", compiled.metrics.lines},
          {"local_declarations", compiled.metrics.local_declarations},
          {"alias_copies", compiled.metrics.alias_copies}};
}

}  // namespace pb::codegen::msl
