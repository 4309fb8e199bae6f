// SPIRV-Cross to MSL and GLSL, and the text metrics. The MSL is only looked at: there is no Metal
// compiler on Linux.
#include "codegen/msl/cross.h"

#include <gtest/gtest.h>

#include "codegen/spirv/optimizer.h"
#include "ir/diagnostic.h"
#include "tests/codegen/optimizer_test_modules.h"

namespace pb::codegen::msl {
namespace {

using spirv::test::assemble;
using spirv::test::kAdStackShader;

std::vector<uint32_t> optimized_module() { return spirv::optimize_spirv(assemble(kAdStackShader), {}, "k", "t").words; }

TEST(CrossCompile, MslHasTheKernelEntryPoint) {
  const CrossCompiled msl = spirv_to_msl(optimized_module(), {}, "k", "t");
  EXPECT_EQ(msl.language, "msl 2.3 macos");
  EXPECT_EQ(msl.entry_point, "main0");
  EXPECT_NE(msl.text.find("#include <metal_stdlib>"), std::string::npos) << msl.text;
  EXPECT_NE(msl.text.find("kernel void main0("), std::string::npos) << msl.text;
  EXPECT_NE(msl.text.find("[[thread_position_in_grid]]"), std::string::npos) << msl.text;
  EXPECT_NE(msl.text.find("spvUnsafeArray<float, 64>"), std::string::npos) << msl.text;  // the stack heap
  EXPECT_EQ(msl.metrics.bytes, msl.text.size());
  EXPECT_EQ(msl.metrics.lines, count_lines(msl.text));
}

TEST(CrossCompile, MslOptionsChooseVersionAndPlatform) {
  MslOptions options;
  options.major = 2;
  options.minor = 1;
  options.ios = true;
  EXPECT_EQ(spirv_to_msl(optimized_module(), options, "k", "t").language, "msl 2.1 ios");
}

TEST(CrossCompile, GlslWithAndWithoutVulkanSemantics) {
  const std::vector<uint32_t> words = optimized_module();
  const CrossCompiled vulkan = spirv_to_glsl(words, {}, "k", "t");
  EXPECT_EQ(vulkan.language, "glsl 450 vulkan");
  EXPECT_EQ(vulkan.entry_point, "main");
  EXPECT_EQ(vulkan.text.rfind("#version 450\n", 0), 0u) << vulkan.text;
  EXPECT_NE(vulkan.text.find("void main()"), std::string::npos) << vulkan.text;
  EXPECT_NE(vulkan.text.find("layout(set = 0, binding = 0, std430) buffer"), std::string::npos) << vulkan.text;
  EXPECT_NE(vulkan.text.find("float _42[64];"), std::string::npos) << vulkan.text;

  GlslOptions options;
  options.vulkan_semantics = false;
  const CrossCompiled opengl = spirv_to_glsl(words, options, "k", "t");
  EXPECT_EQ(opengl.language, "glsl 450 opengl");
  EXPECT_EQ(opengl.text.find("set = 0"), std::string::npos) << opengl.text;
  EXPECT_NE(opengl.text.find("void main()"), std::string::npos) << opengl.text;
}

// Unoptimized, the count array and the helper survive: more declarations, more text.
TEST(CrossCompile, OptimizationShrinksTheMsl) {
  const CrossCompiled before = spirv_to_msl(assemble(kAdStackShader), {}, "k", "t");
  const CrossCompiled after = spirv_to_msl(optimized_module(), {}, "k", "t");
  EXPECT_NE(before.text.find("spvUnsafeArray<uint, 2>"), std::string::npos) << before.text;
  EXPECT_EQ(after.text.find("spvUnsafeArray<uint, 2>"), std::string::npos) << after.text;
  EXPECT_GT(before.metrics.local_declarations, after.metrics.local_declarations);
}

TEST(CrossCompile, SpirvCrossErrorsBecomeUserErrors) {
  const std::vector<uint32_t> junk = {1, 2, 3};
  try {
    spirv_to_msl(junk, {}, "grad_kernel", "task_7");
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SPIRV-Cross cannot translate kernel 'grad_kernel', task 'task_7' to msl 2.3 macos"),
              std::string::npos)
        << what;
  }
  EXPECT_THROW(spirv_to_glsl(junk, {}, "k", "t"), UserError);
}

TEST(CrossCompile, MetricsJson) {
  const nlohmann::ordered_json json = metrics_to_json(spirv_to_glsl(optimized_module(), {}, "k", "t"));
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"language", "entry_point", "bytes", "lines", "local_declarations",
                                            "alias_copies"}));
}

TEST(TextMetrics, CountLines) {
  EXPECT_EQ(count_lines(""), 0u);
  EXPECT_EQ(count_lines("a"), 1u);
  EXPECT_EQ(count_lines("a\n"), 1u);
  EXPECT_EQ(count_lines("a\nb"), 2u);
  EXPECT_EQ(count_lines("a\nb\n"), 2u);
  EXPECT_EQ(count_lines("\n\n"), 2u);
  EXPECT_EQ(count_lines("\n"), 1u);
}

TEST(TextMetrics, LocalDeclarations) {
  for (const char* line :
       {"float _61;", "    uint _47 = uint(_6._m0[0u]);", "spvUnsafeArray<float, 64> _42;", "float _42[64];",
        "float m[2][3];", "const int n = 4;", "thread float& r = _42[_49];", "device float* p = &_6._m0[0];",
        "bool _59 = _58 < 16;", "float4 v = float4(0.0);", "\tint i = 0;  "}) {
    EXPECT_TRUE(is_local_declaration(line)) << line;
  }
  for (const char* line : {"_64 = _65;", "_49 = 0u;", "return _5;", "return;", "break;", "_42[_49] = x;",
                           "_6._m0[gl_GlobalInvocationID.x] = _61;", "_49++;", "foo(bar);", "float _61",
                           "for (uint _52 = 0u; _52 < _47; )", "if (x) y = 1;", "else y = z;", "", "{", "}",
                           "threadgroup_barrier(mem_flags::mem_threadgroup);", "x == y;", "case 1:"}) {
    EXPECT_FALSE(is_local_declaration(line)) << line;
  }
}

TEST(TextMetrics, AliasCopies) {
  for (const char* line : {"_64 = _65;", "    _56 = _45;", "i = i_1;", "_42 = _33;  "}) {
    EXPECT_TRUE(is_alias_copy(line)) << line;
  }
  for (const char* line :
       {"_49 = 0u;", "_61 += _42[_65];", "_x = _y + 1;", "_a.b = _c;", "_a = _c.d;", "_a[0] = _c;", "_a = _c[0];",
        "float _a = _b;", "_a = true;", "_a = -_b;", "_a == _b;", "_a = _b", "return _a;"}) {
    EXPECT_FALSE(is_alias_copy(line)) << line;
  }
}

// Declarations and copies count inside function bodies only, not in structs or buffer blocks.
TEST(TextMetrics, MeasureHandMadeSnippet) {
  const std::string snippet =
      "#include <metal_stdlib>\n"
      "struct Buf\n"
      "{\n"
      "    float data[1];\n"
      "    uint count;\n"
      "};\n"
      "\n"
      "layout(set = 0, binding = 0, std430) buffer Buf2\n"
      "{\n"
      "    float _m0[];\n"
      "} _6;\n"
      "\n"
      "static inline float helper(float x)\n"
      "{\n"
      "    float y = x * 0.5;\n"
      "    return y;\n"
      "}\n"
      "\n"
      "kernel void main0(device Buf& b [[buffer(0)]]) {\n"
      "    spvUnsafeArray<float, 8> _42;\n"
      "    uint _49;\n"
      "    _49 = 0u;\n"
      "    for (uint _52 = 0u; _52 < 8u; )\n"
      "    {\n"
      "        float _60 = helper(b.data[_52]);\n"
      "        _42[_49] = _60;\n"
      "        uint _61 = _49 + 1u;\n"
      "        _49 = _61;\n"
      "        _52++;\n"
      "    }\n"
      "    spvUnsafeArray<float, 8> _43;\n"
      "    _43 = _42;\n"
      "    b.data[0] = _43[0];\n"
      "}";
  const TextMetrics metrics = measure_text(snippet);
  EXPECT_EQ(metrics.bytes, snippet.size());
  EXPECT_EQ(metrics.lines, 34u);
  // y; _42, _49, _60, _61, _43
  EXPECT_EQ(metrics.local_declarations, 6u);
  // _49 = _61; _43 = _42;
  EXPECT_EQ(metrics.alias_copies, 2u);
}

TEST(TextMetrics, EmptyText) {
  const TextMetrics metrics = measure_text("");
  EXPECT_EQ(metrics.bytes, 0u);
  EXPECT_EQ(metrics.lines, 0u);
  EXPECT_EQ(metrics.local_declarations, 0u);
  EXPECT_EQ(metrics.alias_copies, 0u);
}

}  // namespace
}  // namespace pb::codegen::msl
