#include "vulkan_vector_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <spirv-tools/libspirv.hpp>
#include <vector>

#include "ir/diagnostic.h"
#include "runtime/vulkan/device.h"
#include "vulkan_copy_rate.h"

namespace pb::bench {
namespace {

using runtime::vulkan::check;
using runtime::vulkan::Device;

constexpr uint64_t kEvictBytes = uint64_t{256} << 20;  // several times any GPU's L2 cache

// The module as SPIR-V assembly: over `count` values of the element type, invocation g handles
// steps g, g + stride, ... below `steps`; step s reads elements s + k * steps for k < unroll,
// then writes them.
std::string probe_source(uint64_t count, uint32_t width, uint32_t unroll) {
  uint64_t steps = count / unroll;
  std::string elem = width == 1 ? "%float" : "%v4float";
  std::string c15 = width == 1 ? "%f_15" : "%v_15", cm03 = width == 1 ? "%f_m03" : "%v_m03";
  std::string body;
  for (uint32_t k = 0; k < unroll; ++k)
    body += fmt::format(
        "%o{0} = OpConstant %uint {1}\n%i{0} = OpIAdd %uint %iv %o{0}\n"
        "%px{0} = OpAccessChain %p_e %xv %uint_0 %i{0}\n%v{0} = OpLoad {2} %px{0}\n",
        k, static_cast<uint64_t>(k) * steps, elem);
  for (uint32_t k = 0; k < unroll; ++k)
    body += fmt::format(
        "%m{0} = OpFMul {1} %v{0} {2}\n%a{0} = OpFAdd {1} %m{0} {3}\n"
        "%py{0} = OpAccessChain %p_e %yv %uint_0 %i{0}\nOpStore %py{0} %a{0}\n",
        k, elem, c15, cm03);
  // Constants are declared where they are used above; SPIR-V wants them before the function, so
  // they are split out below.
  std::string consts, code;
  size_t at = 0;
  while (at < body.size()) {
    size_t end = body.find('\n', at);
    std::string line = body.substr(at, end - at + 1);
    (line.find("OpConstant") != std::string::npos ? consts : code) += line;
    at = end + 1;
  }
  return fmt::format(R"(OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid %ngroups
OpExecutionMode %main LocalSize 256 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %ngroups BuiltIn NumWorkgroups
OpDecorate %arr ArrayStride {0}
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %xv DescriptorSet 0
OpDecorate %xv Binding 0
OpDecorate %yv DescriptorSet 0
OpDecorate %yv Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%bool = OpTypeBool
%v3uint = OpTypeVector %uint 3
%v4float = OpTypeVector %float 4
%p_in = OpTypePointer Input %v3uint
%gid = OpVariable %p_in Input
%ngroups = OpVariable %p_in Input
%arr = OpTypeRuntimeArray {1}
%blk = OpTypeStruct %arr
%p_blk = OpTypePointer StorageBuffer %blk
%xv = OpVariable %p_blk StorageBuffer
%yv = OpVariable %p_blk StorageBuffer
%p_e = OpTypePointer StorageBuffer {1}
%p_u = OpTypePointer Function %uint
%uint_0 = OpConstant %uint 0
%uint_256 = OpConstant %uint 256
%steps = OpConstant %uint {2}
%f_15 = OpConstant %float 1.5
%f_m03 = OpConstant %float -0.3
%v_15 = OpConstantComposite %v4float %f_15 %f_15 %f_15 %f_15
%v_m03 = OpConstantComposite %v4float %f_m03 %f_m03 %f_m03 %f_m03
{3}%main = OpFunction %void None %fn
%entry = OpLabel
%i = OpVariable %p_u Function
%g3 = OpLoad %v3uint %gid
%g = OpCompositeExtract %uint %g3 0
%n3 = OpLoad %v3uint %ngroups
%n = OpCompositeExtract %uint %n3 0
%stride = OpIMul %uint %n %uint_256
OpStore %i %g
OpBranch %header
%header = OpLabel
OpLoopMerge %merge %cont None
OpBranch %check
%check = OpLabel
%iv = OpLoad %uint %i
%ok = OpULessThan %bool %iv %steps
OpBranchConditional %ok %body %merge
%body = OpLabel
{4}OpBranch %cont
%cont = OpLabel
%next = OpIAdd %uint %iv %stride
OpStore %i %next
OpBranch %header
%merge = OpLabel
OpReturn
OpFunctionEnd
)",
                     4 * width, elem, steps, consts, code);
}

// Releases the probe's Vulkan objects on any exit.
struct Objects {
  Device& dev;
  std::vector<Device::Allocation> buffers;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  explicit Objects(Device& d) : dev(d) {}
  ~Objects() {
    VkDevice h = dev.handle();
    vkDeviceWaitIdle(h);
    if (queries) vkDestroyQueryPool(h, queries, nullptr);
    if (pool) vkDestroyDescriptorPool(h, pool, nullptr);
    if (pipeline) vkDestroyPipeline(h, pipeline, nullptr);
    if (layout) vkDestroyPipelineLayout(h, layout, nullptr);
    if (set_layout) vkDestroyDescriptorSetLayout(h, set_layout, nullptr);
    if (module) vkDestroyShaderModule(h, module, nullptr);
    for (auto& b : buffers) dev.release(b);
  }
  Objects(const Objects&) = delete;
  Objects& operator=(const Objects&) = delete;
};

}  // namespace

ProbeRate vulkan_vector_probe(uint64_t elements, uint32_t width, uint32_t unroll, uint32_t workgroups, int repeat,
                              bool fresh) {
  if ((width != 1 && width != 4) || unroll == 0 || elements % (uint64_t{width} * unroll) != 0)
    throw UserError(fmt::format("vector probe: {} elements do not split into {} x {}", elements, width, unroll),
                    "give a width of 1 or 4 and a size that is a multiple of width x unroll");
  std::vector<uint32_t> words;
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string source = probe_source(elements / width, width, unroll);
  if (!tools.Assemble(source, &words) || !tools.Validate(words))
    throw UserError("vector probe: the hand-written module does not assemble or validate", source);
  uint64_t steps = elements / width / unroll;
  uint32_t groups =
      workgroups ? workgroups : static_cast<uint32_t>(std::clamp<uint64_t>((steps + 255) / 256, 1, 65535));
  return vulkan_module_probe(words, "main", elements, groups, repeat, fresh, false);
}

ProbeRate vulkan_module_probe(const std::vector<uint32_t>& words, const std::string& entry, uint64_t elements,
                              uint32_t groups, int repeat, bool fresh, bool pattern) {
  Device dev;
  if (!dev.info().timestamps) throw UserError("the device writes no timestamps: no vector probe");
  VkDevice h = dev.handle();
  Objects o(dev);
  const uint64_t bytes = elements * 4;
  o.buffers.push_back(dev.allocate(bytes, true));         // staging
  o.buffers.push_back(dev.allocate(bytes, false));        // x
  o.buffers.push_back(dev.allocate(bytes, false));        // y
  o.buffers.push_back(dev.allocate(kEvictBytes, false));  // written between the upload and the kernel
  auto* staged = static_cast<float*>(o.buffers[0].mapped);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint64_t i = 0; i < elements; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    staged[i] = pattern ? 0.1f * static_cast<float>(i % 13) - 0.6f
                        : static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-53);
  }

  VkShaderModuleCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  sci.codeSize = words.size() * 4;
  sci.pCode = words.data();
  check(vkCreateShaderModule(h, &sci, nullptr, &o.module), "vkCreateShaderModule");
  VkDescriptorSetLayoutBinding b[2]{};
  for (uint32_t i = 0; i < 2; ++i)
    b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dci.bindingCount = 2;
  dci.pBindings = b;
  check(vkCreateDescriptorSetLayout(h, &dci, nullptr, &o.set_layout), "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pci.setLayoutCount = 1;
  pci.pSetLayouts = &o.set_layout;
  check(vkCreatePipelineLayout(h, &pci, nullptr, &o.layout), "vkCreatePipelineLayout");
  VkComputePipelineCreateInfo cci{};
  cci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = o.module;
  cci.stage.pName = entry.c_str();
  cci.layout = o.layout;
  check(vkCreateComputePipelines(h, VK_NULL_HANDLE, 1, &cci, nullptr, &o.pipeline), "vkCreateComputePipelines");
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  check(vkCreateDescriptorPool(h, &dpci, nullptr, &o.pool), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = o.pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &o.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(h, &dsai, &set), "vkAllocateDescriptorSets");
  VkDescriptorBufferInfo infos[2] = {{o.buffers[1].buffer, 0, VK_WHOLE_SIZE}, {o.buffers[2].buffer, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[2]{};
  for (uint32_t i = 0; i < 2; ++i) {
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(h, 2, writes, 0, nullptr);
  VkQueryPoolCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 2;
  check(vkCreateQueryPool(h, &qci, nullptr, &o.queries), "vkCreateQueryPool");

  groups = std::min(groups, dev.info().max_workgroup_count_x);
  std::vector<double> times;
  for (int r = 0; r < std::max(repeat, 1) + 1; ++r) {  // the first run only warms up
    if (fresh && r > 0) {  // new memory for x and y, as a launch that allocates its buffers has
      for (size_t i = 1; i < 3; ++i) {
        dev.release(o.buffers[i]);
        o.buffers[i] = dev.allocate(bytes, false);
        infos[i - 1].buffer = o.buffers[i].buffer;
      }
      vkUpdateDescriptorSets(h, 2, writes, 0, nullptr);
    }
    submit_and_wait(dev, [&](VkCommandBuffer cb) {
      vkCmdResetQueryPool(cb, o.queries, 0, 2);
      VkBufferCopy whole{0, 0, bytes};
      vkCmdCopyBuffer(cb, o.buffers[0].buffer, o.buffers[1].buffer, 1, &whole);
      if (pattern) vkCmdFillBuffer(cb, o.buffers[2].buffer, 0, bytes, 0);  // y zeroed, as a launch uploads it
      // x was just written through the L2 cache (50 MB on an H200): writing a larger buffer evicts
      // it, so that the kernel reads device memory, not the cache.
      vkCmdFillBuffer(cb, o.buffers[3].buffer, 0, kEvictBytes, 0x3f800000u);
      VkMemoryBarrier mb{};
      mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      // Every stage after it waits, the start timestamp included: the fill's tail is not timed.
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, o.pipeline);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, o.layout, 0, 1, &set, 0, nullptr);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, o.queries, 0);
      vkCmdDispatch(cb, groups, 1, 1);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, o.queries, 1);
    });
    if (r > 0) times.push_back(timed_ms(dev, o.queries));
  }
  // The result must be the arithmetic's: a wrong module would time nothing useful.
  std::vector<float> x(staged, staged + elements);
  submit_and_wait(dev, [&](VkCommandBuffer cb) {
    VkBufferCopy back{0, 0, bytes};
    vkCmdCopyBuffer(cb, o.buffers[2].buffer, o.buffers[0].buffer, 1, &back);
  });
  for (uint64_t i = 0; i < elements; ++i)
    if (std::fabs(staged[i] - (x[i] * 1.5f - 0.3f)) > 1e-6f)
      throw UserError(fmt::format("vector probe: element {} is {}, not {}", i, staged[i], x[i] * 1.5f - 0.3f));
  std::sort(times.begin(), times.end());
  ProbeRate out;
  out.ms = times[times.size() / 2];
  out.bytes_per_s = out.ms > 0 ? 2.0 * static_cast<double>(bytes) / (out.ms * 1e-3) : 0;
  out.workgroups = groups;
  return out;
}

}  // namespace pb::bench
