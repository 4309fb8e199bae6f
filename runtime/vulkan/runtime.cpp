#include "runtime/vulkan/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "codegen/spirv/optimizer.h"
#include "runtime/core/sparse.h"
#include "runtime/vulkan/host_values.h"

namespace pb::runtime::vulkan {

using codegen::spirv::Binding;
using codegen::spirv::BindingKind;
using codegen::spirv::CompiledKernel;
using codegen::spirv::TaskInfo;

namespace {

constexpr size_t kMaxCachedPipelines = 256;

VkMemoryBarrier barrier(VkAccessFlags src, VkAccessFlags dst) {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = src;
  b.dstAccessMask = dst;
  return b;
}

// One device buffer per binding, its words, and where they sit in the staging buffer.
struct BoundBuffer {
  const Binding* binding = nullptr;
  Buffer* host = nullptr;  // fields, gradients, ndarrays
  std::vector<uint32_t> words;
  Device::Allocation device;
  VkDeviceSize staging_offset = 0;
  bool download = false;
};

// Releases every Vulkan object of one launch on any exit.
struct LaunchObjects {
  Device& device;
  BufferPool& buffers_from;
  std::vector<BoundBuffer> buffers;
  Device::Allocation staging;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool submitted = false;  // the fence will signal
  LaunchObjects(Device& d, BufferPool& p) : device(d), buffers_from(p) {}
  ~LaunchObjects() {
    VkDevice h = device.handle();
    if (fence) {
      if (submitted) vkWaitForFences(h, 1, &fence, VK_TRUE, UINT64_MAX);
      vkDestroyFence(h, fence, nullptr);
    }
    if (commands) vkFreeCommandBuffers(h, device.command_pool(), 1, &commands);
    if (pool) vkDestroyDescriptorPool(h, pool, nullptr);
    // After the fence (or with nothing submitted): no work uses the buffers any more.
    for (BoundBuffer& b : buffers) buffers_from.give(b.device, false);
    buffers_from.give(staging, true);
  }
};

}  // namespace

struct Runtime::Layout {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
};

struct Runtime::Pipeline {
  VkShaderModule module = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

std::optional<Diagnostic> flag_error(const CompiledKernel& ck, const LaunchResult& r) {
  if (r.stack_overflow) {
    int id = static_cast<int>(r.stack_overflow) - 1;
    for (const TaskInfo& t : ck.tasks)
      for (const auto& s : t.stacks) {
        if (s.stack_id != id) continue;
        std::string sized = s.size_expr.empty() ? "max_size" : fmt::format("size {} (compiled capacity)", s.size_expr);
        return Diagnostic::plain(
            fmt::format("adstack overflow in kernel \"{}\", task {}: stack ${} ({} entries, {}) was pushed past its "
                        "capacity; the results of this launch are not valid",
                        ck.kernel_name, t.name, s.stmt_id, s.capacity, sized),
            fmt::format("give stack ${} a larger max_size (or run determine_ad_stack_size), or raise the lowering's "
                        "capacity= option for stacks sized by an expression, and run again",
                        s.stmt_id));
      }
    return Diagnostic::plain(
        fmt::format("adstack overflow in kernel \"{}\" (flag {} names no stack of the compiled kernel)", ck.kernel_name,
                    r.stack_overflow),
        "give the kernel's stacks larger max_size values and run again");
  }
  if (r.problem) {
    for (const auto& p : ck.problems)
      if (p.code == r.problem)
        return Diagnostic::plain(fmt::format("{} in kernel \"{}\" (vulkan)", p.message, ck.kernel_name), p.remedy);
    return Diagnostic::plain(fmt::format("sparse-SNode problem {} in kernel \"{}\"", r.problem, ck.kernel_name));
  }
  if (r.assert_code) {
    for (const auto& a : ck.asserts)
      if (a.code == r.assert_code)
        return Diagnostic::plain(
            fmt::format("assertion failed in kernel \"{}\" (${}): {}", ck.kernel_name, a.stmt_id, a.message),
            "fix the inputs or the kernel so that the assertion holds");
    return Diagnostic::plain(fmt::format("assertion {} failed in kernel \"{}\"", r.assert_code, ck.kernel_name));
  }
  if (r.step_budget)
    return Diagnostic::plain(
        fmt::format("the launch exceeded its step budget in kernel \"{}\": an invocation ran `while` loop ${} past "
                    "max_steps={} iterations (on vulkan each invocation counts its `while` iterations); the results "
                    "of this launch are not valid",
                    ck.kernel_name, r.step_budget - 1, ck.options.while_budget),
        "look for a `while true` that never ends; or raise the budget (--max-steps N, 0 for none)");
  if (r.loop_cut)
    return Diagnostic::plain(
        fmt::format("the Vulkan driver left loop ${} of kernel \"{}\" before its end (lavapipe stops every loop "
                    "after 65,535 iterations); the results of this launch are not valid",
                    r.loop_cut - 1, ck.kernel_name),
        "run this kernel on the cpu backend (--backend=cpu) or a GPU's driver, or split the loop");
  return std::nullopt;
}

Runtime::Runtime(const std::string& device_filter) : device_(device_filter), heap_(device_), pool_(device_) {}

Runtime::~Runtime() {
  vkDeviceWaitIdle(device_.handle());
  clear_pipelines();
  for (auto& [key, l] : layouts_) {
    vkDestroyPipelineLayout(device_.handle(), l->pipeline_layout, nullptr);
    vkDestroyDescriptorSetLayout(device_.handle(), l->set_layout, nullptr);
  }
  if (queries_) vkDestroyQueryPool(device_.handle(), queries_, nullptr);
}

void Runtime::clear_pipelines() {
  for (auto& [key, p] : pipelines_) {
    vkDestroyPipeline(device_.handle(), p->pipeline, nullptr);
    vkDestroyShaderModule(device_.handle(), p->module, nullptr);
  }
  pipelines_.clear();
}

Runtime::Layout& Runtime::layout_for(uint32_t bindings, uint32_t push_bytes) {
  auto& slot = layouts_[{bindings, push_bytes}];
  if (slot) return *slot;
  auto l = std::make_unique<Layout>();
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dci.bindingCount = bindings;
  dci.pBindings = b.data();
  check(vkCreateDescriptorSetLayout(device_.handle(), &dci, nullptr, &l->set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pci.setLayoutCount = 1;
  pci.pSetLayouts = &l->set_layout;
  pci.pushConstantRangeCount = push_bytes ? 1 : 0;
  pci.pPushConstantRanges = &range;
  check(vkCreatePipelineLayout(device_.handle(), &pci, nullptr, &l->pipeline_layout), "vkCreatePipelineLayout");
  slot = std::move(l);
  return *slot;
}

VkPipeline Runtime::pipeline_for(const Layout& layout, const std::vector<uint32_t>& words, const std::string& entry) {
  PipelineKey key{&layout, entry, words};
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second->pipeline;
  auto p = std::make_unique<Pipeline>();
  VkShaderModuleCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  sci.codeSize = words.size() * 4;
  sci.pCode = words.data();
  check(vkCreateShaderModule(device_.handle(), &sci, nullptr, &p->module), "vkCreateShaderModule");
  VkComputePipelineCreateInfo cci{};
  cci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = p->module;
  cci.stage.pName = entry.c_str();
  cci.layout = layout.pipeline_layout;
  VkResult r = vkCreateComputePipelines(device_.handle(), VK_NULL_HANDLE, 1, &cci, nullptr, &p->pipeline);
  if (r != VK_SUCCESS) {
    vkDestroyShaderModule(device_.handle(), p->module, nullptr);
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY) check(r, "vkCreateComputePipelines");
    // The module passed spirv-val, so the driver's compiler refused it (NVIDIA 580 does so for
    // large function-storage adstacks; docs/backends.md).
    throw UserError(fmt::format("Vulkan: the driver of \"{}\" could not compile task {} (vkCreateComputePipelines: "
                                "VkResult {})",
                                device_.info().name, entry, static_cast<int>(r)),
                    "compile with another adstack lowering (storage=heap keeps the stacks out of the "
                    "invocation's own memory), or run on --backend=interp or cpu");
  }
  VkPipeline out = p->pipeline;
  pipelines_.emplace(std::move(key), std::move(p));
  return out;
}

LaunchResult Runtime::launch(const ir::Kernel& k, const CompiledKernel& ck, State& state,
                             const LaunchOptions& options) {
  auto started = std::chrono::steady_clock::now();
  const DeviceInfo& dev = device_.info();
  if (ck.options.float64 && !dev.float64)
    throw UserError(fmt::format("kernel \"{}\" uses f64 and the Vulkan device \"{}\" lacks shaderFloat64",
                                ck.kernel_name, dev.name),
                    "run it on a device with f64 support, or on --backend=interp");
  if (ck.options.int64 && !dev.int64)
    throw UserError(fmt::format("kernel \"{}\" uses 64-bit integers and the Vulkan device \"{}\" lacks shaderInt64",
                                ck.kernel_name, dev.name),
                    "run it on a device with shaderInt64, or on --backend=interp");
  if (ck.options.atomic_float_add && !dev.atomic_float_add)
    throw UserError(fmt::format("kernel \"{}\" was compiled with atomic-float-add and \"{}\" lacks "
                                "shaderBufferFloat32AtomicAdd",
                                ck.kernel_name, dev.name),
                    "compile with atomic-float-add=off");
  if (ck.push_constant_bytes > dev.max_push_constant_bytes)
    throw UserError(fmt::format("kernel \"{}\" needs {} push-constant bytes; \"{}\" allows {}", ck.kernel_name,
                                ck.push_constant_bytes, dev.name, dev.max_push_constant_bytes),
                    "pass fewer scalar arguments");

  VkDevice h = device_.handle();
  LaunchObjects obj(device_, pool_);
  LaunchResult result;
  const uint64_t serial = ++serial_;

  // Dispatch sizes and the heap they need.
  struct Dispatch {
    const TaskInfo* task;
    uint32_t groups;
    std::vector<uint32_t> words;
  };
  std::vector<Dispatch> dispatches;
  uint64_t heap_bytes = 16;
  uint32_t max_groups = std::max<uint32_t>(1, std::min(options.max_workgroups, dev.max_workgroup_count_x));
  for (const TaskInfo& t : ck.tasks) {
    uint64_t n = detail::task_iterations(k, t, state).value_or(options.fallback_invocations);
    n = (n + t.vector - 1) / std::max<uint32_t>(t.vector, 1);  // vector steps: one invocation per step
    uint64_t wg = std::max<uint32_t>(t.workgroup_size, 1);
    uint32_t cap = t.streaming ? std::max<uint32_t>(1, std::min(max_groups, options.streaming_workgroups)) : max_groups;
    auto groups = static_cast<uint32_t>(std::clamp<uint64_t>((n + wg - 1) / wg, 1, cap));
    std::vector<uint32_t> words = t.spirv;
    if (options.optimize) words = codegen::spirv::optimize_spirv(words, {}, ck.kernel_name, t.name).words;
    uint64_t invocations = uint64_t{groups} * wg;
    uint64_t task_heap = uint64_t{t.heap_stride_words} * 4 * invocations;
    heap_bytes = std::max(heap_bytes, task_heap);
    result.tasks.push_back({t.name, invocations, task_heap, 0});
    dispatches.push_back({&t, groups, std::move(words)});
  }

  // Sparse spaces: the interpreter's checks, and no data under inactive cells.
  if (!ck.activity.empty()) {
    std::vector<Buffer*> field_bufs;
    for (const auto& f : k.fields()) {
      auto it = state.fields.find(f.name);
      field_bufs.push_back(it == state.fields.end() ? nullptr : &it->second);
    }
    runtime::detail::SparseCells cells;
    cells.bind(k, state, field_bufs);
  }

  // Buffers and their initial words.
  VkDeviceSize staging_bytes = 0;
  VkBuffer heap_buffer = VK_NULL_HANDLE;
  for (const Binding& b : ck.bindings) {
    BoundBuffer bb;
    bb.binding = &b;
    if (b.kind == BindingKind::heap) {
      heap_buffer = heap_.acquire(heap_bytes, serial);
      obj.buffers.push_back(std::move(bb));
      continue;
    }
    bb.host = b.kind == BindingKind::activity ? nullptr : detail::buffer_of(b, state);
    if (bb.host) {
      bb.words.reserve(bb.host->data.size() * 2 + 2);
      for (const ir::Value& v : bb.host->data) detail::append_value(bb.words, v, b.element);
      if (b.ambient) bb.words.insert(bb.words.end(), 2, 0);  // the ambient slot (64-bit at most)
      bb.download = true;
    } else if (b.kind == BindingKind::activity) {
      bb.words.assign(b.elements.value_or(1), 0);
      for (const codegen::spirv::SparseRange& r : ck.activity) {
        const std::vector<int64_t>& a = state.activity[r.space];
        for (size_t i = 0; i < r.words && i < a.size(); ++i) bb.words[r.word + i] = static_cast<uint32_t>(a[i]);
      }
      bb.download = true;
    } else if (b.kind == BindingKind::temps) {
      bb.words.assign(std::max<uint32_t>(ck.temps_words, 1), 0);
      bb.download = !ck.returns.empty();  // the kernel's return values lie there
    } else {
      bb.words.assign(codegen::spirv::kNumFlagWords, 0);
      bb.download = true;
    }
    bb.device = pool_.take(bb.words.size() * 4, false);
    bb.staging_offset = staging_bytes;
    staging_bytes += (bb.words.size() * 4 + 15) / 16 * 16;
    obj.buffers.push_back(std::move(bb));
  }
  obj.staging = pool_.take(staging_bytes, true);
  for (BoundBuffer& b : obj.buffers)
    if (!b.words.empty())
      std::memcpy(static_cast<char*>(obj.staging.mapped) + b.staging_offset, b.words.data(), b.words.size() * 4);

  // The descriptor set.
  auto binding_count = static_cast<uint32_t>(ck.bindings.size());
  Layout& layout = layout_for(binding_count, ck.push_constant_bytes);
  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(binding_count, 1)};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &pool_size;
  check(vkCreateDescriptorPool(h, &dpci, nullptr, &obj.pool), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = obj.pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &layout.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(h, &dsai, &set), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(binding_count);
  std::vector<VkWriteDescriptorSet> writes(binding_count);
  for (uint32_t i = 0; i < binding_count; ++i) {
    const BoundBuffer& b = obj.buffers[i];
    infos[i] = {b.binding->kind == BindingKind::heap ? heap_buffer : b.device.buffer, 0, VK_WHOLE_SIZE};
    writes[i] = {};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = b.binding->binding;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(h, binding_count, writes.data(), 0, nullptr);

  // Pipelines first: creating one compiles the module, which must not count as kernel time. The
  // cache is trimmed only here, where no recorded work uses its pipelines (launches wait).
  if (pipelines_.size() + dispatches.size() > kMaxCachedPipelines) clear_pipelines();
  std::vector<VkPipeline> pipelines;
  pipelines.reserve(dispatches.size());
  for (const Dispatch& d : dispatches) pipelines.push_back(pipeline_for(layout, d.words, d.task->name));

  // Two timestamps per dispatch; with dispatch_repeat, two per repeat (each repeat timed alone).
  const uint32_t repeats = std::max(options.dispatch_repeat, 1u);
  auto query_need = static_cast<uint32_t>(2 * dispatches.size() * repeats);
  bool timed = dev.timestamps && query_need > 0;
  if (timed && query_count_ < query_need) {
    if (queries_) vkDestroyQueryPool(h, queries_, nullptr);
    VkQueryPoolCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = query_need;
    check(vkCreateQueryPool(h, &qci, nullptr, &queries_), "vkCreateQueryPool");
    query_count_ = query_need;
  }

  // Record: uploads, dispatches with barriers and timestamps, downloads.
  VkCommandBufferAllocateInfo cbai{};
  cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cbai.commandPool = device_.command_pool();
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(h, &cbai, &obj.commands), "vkAllocateCommandBuffers");
  VkCommandBuffer cb = obj.commands;
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
  if (timed) vkCmdResetQueryPool(cb, queries_, 0, query_need);
  for (const BoundBuffer& b : obj.buffers) {
    if (b.words.empty()) continue;
    VkBufferCopy copy{b.staging_offset, 0, b.words.size() * 4};
    vkCmdCopyBuffer(cb, obj.staging.buffer, b.device.buffer, 1, &copy);
  }
  VkMemoryBarrier up = barrier(VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &up, 0, nullptr,
                       0, nullptr);
  std::vector<uint32_t> push = detail::push_constant_words(k, ck, state);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout.pipeline_layout, 0, 1, &set, 0, nullptr);
  for (size_t i = 0; i < dispatches.size(); ++i) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[i]);
    if (ck.push_constant_bytes)
      vkCmdPushConstants(cb, layout.pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, ck.push_constant_bytes,
                         push.data());
    for (uint32_t r = 0; r < repeats; ++r) {
      if (r > 0) {
        VkMemoryBarrier again = barrier(VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                             &again, 0, nullptr, 0, nullptr);
      }
      // A repeat's start waits for everything before it, so it times that repeat alone.
      const auto q = static_cast<uint32_t>(2 * (i * repeats + r));
      if (timed)
        vkCmdWriteTimestamp(cb, repeats > 1 ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                            queries_, q);
      vkCmdDispatch(cb, dispatches[i].groups, 1, 1);
      if (timed) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, q + 1);
    }
    VkMemoryBarrier between = barrier(VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &between,
                         0, nullptr, 0, nullptr);
  }
  VkMemoryBarrier down = barrier(VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &down, 0,
                       nullptr, 0, nullptr);
  for (const BoundBuffer& b : obj.buffers) {
    if (!b.download) continue;
    VkBufferCopy copy{0, b.staging_offset, b.words.size() * 4};
    vkCmdCopyBuffer(cb, b.device.buffer, obj.staging.buffer, 1, &copy);
  }
  VkMemoryBarrier host = barrier(VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, nullptr, 0,
                       nullptr);
  check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");

  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  check(vkCreateFence(h, &fci, nullptr, &obj.fence), "vkCreateFence");
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  check(vkQueueSubmit(device_.queue(), 1, &submit, obj.fence), "vkQueueSubmit");
  obj.submitted = true;
  check(vkWaitForFences(h, 1, &obj.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  heap_.collect(serial);

  // Read back.
  const auto* staged = static_cast<const char*>(obj.staging.mapped);
  for (BoundBuffer& b : obj.buffers) {
    if (!b.download) continue;
    const auto* w = reinterpret_cast<const uint32_t*>(staged + b.staging_offset);
    if (b.host) {
      for (size_t i = 0; i < b.host->data.size(); ++i) {
        ir::Value v = detail::read_value(w, i, b.binding->element);
        b.host->data[i] = v.kind() == b.host->dtype ? v : v.cast_to(b.host->dtype);
      }
    } else if (b.binding->kind == BindingKind::activity) {
      for (const codegen::spirv::SparseRange& r : ck.activity) {
        std::vector<int64_t>& a = state.activity[r.space];
        a.assign(w + r.word, w + r.word + r.words);
      }
    } else if (b.binding->kind == BindingKind::temps) {
      if (w[ck.return_word] != 0)
        for (size_t i = 0; i < ck.returns.size(); ++i)
          result.returned.push_back(detail::read_return(w + ck.return_word + 2 + 2 * i, ck.returns[i]));
    } else {
      result.stack_overflow = w[codegen::spirv::kFlagStackOverflow];
      result.assert_code = w[codegen::spirv::kFlagAssert];
      result.step_budget = w[codegen::spirv::kFlagStepBudget];
      result.loop_cut = w[codegen::spirv::kFlagLoopCut];
      result.problem = w[codegen::spirv::kFlagProblem];
    }
  }
  if (timed) {
    std::vector<uint64_t> ticks(query_need);
    check(vkGetQueryPoolResults(h, queries_, 0, query_need, ticks.size() * 8, ticks.data(), 8,
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    double ns = dev.timestamp_period_ns;
    result.kernel_span_ms =
        static_cast<double>(ticks[query_need - 1] - ticks[0]) * ns * 1e-6 / static_cast<double>(repeats);
    if (repeats == 1) {
      for (size_t i = 0; i < dispatches.size(); ++i)
        result.tasks[i].ms = static_cast<double>(ticks[2 * i + 1] - ticks[2 * i]) * ns * 1e-6;
      result.kernel_ms = result.kernel_span_ms;
    } else {
      for (size_t i = 0; i < dispatches.size(); ++i) {
        std::vector<double> times(repeats);
        for (uint32_t r = 0; r < repeats; ++r) {
          size_t q = 2 * (i * repeats + r);
          times[r] = static_cast<double>(ticks[q + 1] - ticks[q]) * ns * 1e-6;
        }
        std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
        result.tasks[i].ms = times[repeats / 2];
        result.kernel_ms += result.tasks[i].ms;
      }
    }
    result.timed = true;
  }
  result.launch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace pb::runtime::vulkan
