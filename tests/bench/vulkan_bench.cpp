// The Vulkan runtime against the interpreter on kernels shaped like the reference compiler's use:
// an elementwise loop, a loop-carried dynamic inner loop (autodiff stacks in reverse), an atomic
// add into a scalar and a struct for over a sparse field, forward and reverse, over --sizes top-level iterations. Per
// case: kernel time from timestamp queries and launch time (uploads, dispatches, downloads) as the median of --repeat
// launches after one untimed launch (pipeline creation), the adstack heap's bytes the launch used, and the
// interpreter's time where the size is at most --interp-max.
// `--shape S` runs one kernel; `--vector on|off` (vector steps; on, as the runtime runs kernels),
// `--unroll N`, `--workgroup N` (the lowering's workgroup size) and
// `--max-workgroups N` (the launch's cap) change the dispatch shape. Writes JSON:
//   {"device": ..., "cases": [{"kernel", "direction", "size", "backend", "kernel_ms" (median; _min, _max:
//     the range), "kernel_span_ms" (with --dispatch-repeat: the mean with the barriers), "launch_ms",
//     "heap_bytes", "peak_rss_kib"}, ...]}
// Without a Vulkan device it writes {"skipped": reason} and succeeds.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "codegen/spirv/compile.h"
#include "cpu_bench_kernels.h"
#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "runtime/vulkan/run.h"
#include "vulkan_copy_rate.h"
#include "vulkan_vector_probe.h"

namespace {

using namespace pb;

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// The loop bodies; every kernel reads x, n and writes y (or total); the sparse one is cpu_bench's
// (a struct for over a field under pointer blocks, every other one active).
std::string kernel_text(const std::string& shape, size_t n) {
  if (shape == "sparse") return bench::sparse_kernel(static_cast<int64_t>(n));
  std::string head = fmt::format(
      "field x : f32[{0}] grad x_grad\nfield n : i32[{0}]\nfield y : f32[{0}] grad y_grad\n"
      "field total : f32[] grad total_grad\nkernel \"{1}\" {{\n  <i32> $0 = const 0\n  <i32> $1 = const {0}\n"
      "  <f32> $2 = const 1.5\n  <f32> $3 = const -0.3\n  $4 : for in range($0, $1) block_dim=adaptive {{\n"
      "    <i32> $5 = loop $4 index 0\n    <*f32> $6 = global ptr [x], index [$5] activate=true\n"
      "    <f32> $7 = global load $6\n",
      n, shape);
  if (shape == "elementwise")
    return head +
           "    <f32> $8 = mul $7 $2\n    <f32> $9 = add $8 $3\n"
           "    <*f32> $10 = global ptr [y], index [$5] activate=true\n    $11 : global store [$10 <- $9]\n  }\n}\n";
  if (shape == "atomic")
    return head +
           "    <f32> $8 = mul $7 $7\n    <*f32> $9 = global ptr [total], index [] activate=true\n"
           "    <f32> $10 = atomic add($9, $8)\n  }\n}\n";
  return head +
         "    <*f32> $8 = alloca\n    <f32> $9 : local store [$8 <- $7]\n"
         "    <*i32> $10 = global ptr [n], index [$5] activate=true\n    <i32> $11 = global load $10\n"
         "    $12 : for in range($0, $11) block_dim=adaptive {\n      <f32> $13 = local load [$8]\n"
         "      <f32> $14 = sin $13\n      <f32> $15 = mul $14 $2\n      <f32> $16 = add $15 $3\n"
         "      <f32> $17 : local store [$8 <- $16]\n    }\n    <f32> $18 = local load [$8]\n"
         "    <*f32> $19 = global ptr [y], index [$5] activate=true\n    $20 : global store [$19 <- $18]\n  }\n}\n";
}

runtime::State inputs(const ir::Kernel& k, size_t size) {
  if (k.find_space("P")) {  // the sparse shape
    std::vector<int64_t> active(size / bench::kSparseBlock);
    for (size_t b = 0; b < active.size(); ++b) active[b] = b % 2 == 0 ? 1 : 0;
    runtime::State s = runtime::make_state(k, {{"active", {{"P", active}}}});
    for (size_t i = 0; i < size; ++i) {
      s.fields.at("x").data[i] = ir::Value::make_f32(0.1f + 0.001f * static_cast<float>(i % 1000));
      s.fields.at("y_grad").data[i] = ir::Value::make_f32(1.0f);
    }
    return s;
  }
  runtime::State s = runtime::make_state(k, nlohmann::json::object());
  for (size_t i = 0; i < size; ++i) {
    s.fields.at("x").data[i] = ir::Value::make_f32(0.1f * static_cast<float>(i % 13) - 0.6f);
    s.fields.at("n").data[i] = ir::Value::make_i32(static_cast<int32_t>(i % 8));
    s.fields.at("y_grad").data[i] = ir::Value::make_f32(1.0f);
  }
  s.fields.at("total_grad").data[0] = ir::Value::make_f32(1.0f);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  return pb::bench::guarded_main("vulkan_bench", [&] {
    size_t interp_max = 100'000;
    std::vector<std::string> shapes = {"elementwise", "carried", "atomic", "sparse"};
    codegen::spirv::LoweringOptions lowering;
    runtime::vulkan::LaunchOptions launch;
    std::vector<std::string> kernel_files;  // --kernel FILE: also time these kernels, forward, random inputs
    uint64_t copy_bytes = 0;                // --copy-rate BYTES: the device's own copy rate, random and zero data
    uint64_t probe_elements = 0;            // --vector-probe N: hand-written float/vec4 kernels over N floats
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--interp-max" && i + 1 < argc)
        interp_max = pb::bench::count_or_throw("--interp-max", argv[++i], 0);
      else if (a == "--shape" && i + 1 < argc)
        shapes = {argv[++i]};
      else if (a == "--unroll" && i + 1 < argc)
        lowering.unroll = static_cast<uint32_t>(pb::bench::count_or_throw("--unroll", argv[++i], 1));
      else if (a == "--vector" && i + 1 < argc)
        lowering = codegen::spirv::parse_lowering(std::string("vector=") + argv[++i], lowering);
      else if (a == "--workgroup" && i + 1 < argc)
        lowering.workgroup_size = static_cast<uint32_t>(pb::bench::count_or_throw("--workgroup", argv[++i], 1));
      else if (a == "--copy-rate" && i + 1 < argc)
        copy_bytes = pb::bench::count_or_throw("--copy-rate", argv[++i], 4);
      else if (a == "--vector-probe" && i + 1 < argc)
        probe_elements = pb::bench::count_or_throw("--vector-probe", argv[++i], 16);
      else if (a == "--kernel" && i + 1 < argc)
        kernel_files.emplace_back(argv[++i]);
      else if (a == "--dispatch-repeat" && i + 1 < argc)
        launch.dispatch_repeat = static_cast<uint32_t>(pb::bench::count_or_throw("--dispatch-repeat", argv[++i], 1));
      else if (a == "--max-workgroups" && i + 1 < argc)
        launch.max_workgroups = static_cast<uint32_t>(pb::bench::count_or_throw("--max-workgroups", argv[++i], 1));
      else if (a == "--streaming-workgroups" && i + 1 < argc)
        launch.streaming_workgroups =
            static_cast<uint32_t>(pb::bench::count_or_throw("--streaming-workgroups", argv[++i], 1));
      else
        rest.push_back(argv[i]);
    }
    for (const std::string& shape : shapes)
      if (shape != "elementwise" && shape != "carried" && shape != "atomic" && shape != "sparse")
        throw std::runtime_error("--shape takes elementwise, carried, atomic or sparse");
    pb::bench::BenchArgs defaults;
    defaults.sizes = {1'000, 10'000, 100'000, 1'000'000};
    auto args = pb::bench::parse_bench_args(static_cast<int>(rest.size()), rest.data(), defaults, "vulkan_bench");
    if (!args) return 2;
    nlohmann::json out;
    std::unique_ptr<runtime::vulkan::Runtime> vk;
    try {
      vk = std::make_unique<runtime::vulkan::Runtime>();
    } catch (const UserError& e) {
      out["skipped"] = e.what();
    }
    if (vk) {
      out["device"] = vk->device().name;
      out["cases"] = nlohmann::json::array();
      out["workgroup_size"] = lowering.workgroup_size;
      out["max_workgroups"] = launch.max_workgroups;
      out["streaming_workgroups"] = launch.streaming_workgroups;
      out["unroll"] = lowering.unroll;
      out["vector"] = lowering.vector == codegen::spirv::VectorSteps::off ? "off" : "on";
      out["dispatch_repeat"] = launch.dispatch_repeat;
      for (size_t size : args->sizes)
        for (const std::string& shape : shapes) {
          auto forward = ir::parse_kernel(kernel_text(shape, size), shape + ".chi");
          auto reverse = ir::parse_kernel(kernel_text(shape, size), shape + ".chi");
          passes::RunOptions ro;
          ro.capture = passes::Capture::none;
          if (passes::run_pipeline(*reverse, passes::parse_pipeline("reverse_ad"), ro).failed)
            throw std::runtime_error("reverse_ad failed on " + shape);
          for (const ir::Kernel* k : {forward.get(), reverse.get()}) {
            std::string direction = k == forward.get() ? "forward" : "reverse";
            runtime::State base = inputs(*k, size);
            runtime::State warm = base;
            runtime::vulkan::run_kernel(*vk, *k, warm, lowering, launch);  // creates the pipelines
            std::vector<double> kernel_ms, launch_ms, span_ms;
            uint64_t heap_bytes = 0;
            nlohmann::json tasks;
            for (int r = 0; r < args->repeat; ++r) {
              runtime::State s = base;
              auto report = runtime::vulkan::run_kernel(*vk, *k, s, lowering, launch);
              kernel_ms.push_back(report.launch.kernel_ms);
              span_ms.push_back(report.launch.kernel_span_ms);
              launch_ms.push_back(report.launch.launch_ms);
              for (const auto& t : report.launch.tasks) heap_bytes = std::max(heap_bytes, t.heap_bytes);
              if (r + 1 == args->repeat) {  // the dispatch shape, task by task
                tasks = nlohmann::json::array();
                for (size_t t = 0; t < report.launch.tasks.size(); ++t)
                  tasks.push_back({{"task", report.launch.tasks[t].task},
                                   {"invocations", report.launch.tasks[t].invocations},
                                   {"streaming", report.compiled.tasks[t].streaming},
                                   {"unroll", report.compiled.tasks[t].unroll},
                                   {"vector", report.compiled.tasks[t].vector}});
              }
            }
            out["cases"].push_back({{"kernel", shape},
                                    {"direction", direction},
                                    {"size", size},
                                    {"backend", "vulkan"},
                                    {"kernel_ms", median(kernel_ms)},
                                    {"kernel_ms_min", *std::min_element(kernel_ms.begin(), kernel_ms.end())},
                                    {"kernel_ms_max", *std::max_element(kernel_ms.begin(), kernel_ms.end())},
                                    {"kernel_span_ms", median(span_ms)},
                                    {"launch_ms", median(launch_ms)},
                                    {"heap_bytes", heap_bytes},
                                    {"tasks", tasks},
                                    {"peak_rss_kib", peak_rss_kib()}});
            if (size > interp_max) continue;
            runtime::State s = base;
            auto start = std::chrono::steady_clock::now();
            runtime::run_kernel(*k, s);
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            out["cases"].push_back({{"kernel", shape},
                                    {"direction", direction},
                                    {"size", size},
                                    {"backend", "interp"},
                                    {"kernel_ms", ms},
                                    {"launch_ms", ms},
                                    {"peak_rss_kib", peak_rss_kib()}});
          }
        }
    }
    if (vk && copy_bytes) {
      for (bool random : {true, false}) {
        pb::bench::CopyRate c = pb::bench::vulkan_copy_rate(copy_bytes / 4 * 4, random, args->repeat);
        out["copy_rate"].push_back({{"bytes", copy_bytes / 4 * 4},
                                    {"data", random ? "random" : "zeros"},
                                    {"ms", c.ms},
                                    {"tb_per_s", c.bytes_per_s * 1e-12}});
      }
    }
    if (vk && probe_elements) {
      for (uint32_t width : {1u, 4u})
        for (uint32_t unroll : {1u, 2u, 4u})
          for (uint32_t groups : {0u, 1056u}) {
            pb::bench::ProbeRate p =
                pb::bench::vulkan_vector_probe(probe_elements / 16 * 16, width, unroll, groups, args->repeat);
            out["vector_probe"].push_back({{"elements", probe_elements / 16 * 16},
                                           {"width", width},
                                           {"unroll", unroll},
                                           {"workgroups", p.workgroups},
                                           {"ms", p.ms},
                                           {"tb_per_s", p.bytes_per_s * 1e-12}});
          }
      // The generated elementwise kernel's module, as a launch runs it, in the probe's harness.
      uint64_t n = probe_elements / 16 * 16;
      auto k = ir::parse_kernel(kernel_text("elementwise", n), "elementwise.chi");
      codegen::spirv::CompiledKernel ck =
          codegen::spirv::compile(*k, runtime::vulkan::lowering_for(*k, vk->device(), lowering));
      const codegen::spirv::TaskInfo& task = ck.tasks.front();
      uint64_t wg = task.workgroup_size;
      uint64_t steps = (n + task.vector - 1) / task.vector;  // invocations a launch needs (vector steps: n / 4)
      uint32_t streaming = std::min(launch.max_workgroups, launch.streaming_workgroups);
      for (uint32_t groups : {static_cast<uint32_t>(std::min<uint64_t>((steps + wg - 1) / wg, streaming)),
                              static_cast<uint32_t>((steps + wg - 1) / wg)})
        for (bool pattern : {false, true}) {
          pb::bench::ProbeRate g =
              pb::bench::vulkan_module_probe(task.spirv, task.name, n, groups, args->repeat, false, pattern);
          out["vector_probe"].push_back({{"elements", n},
                                         {"module", "generated"},
                                         {"workgroup_size", wg},
                                         {"vector", task.vector},
                                         {"workgroups", groups},
                                         {"data", pattern ? "pattern" : "random"},
                                         {"ms", g.ms},
                                         {"tb_per_s", g.bytes_per_s * 1e-12}});
        }
      pb::bench::ProbeRate p = pb::bench::vulkan_vector_probe(probe_elements / 16 * 16, 1, 1, 0, args->repeat, true);
      out["vector_probe"].push_back({{"elements", probe_elements / 16 * 16},
                                     {"width", 1},
                                     {"unroll", 1},
                                     {"workgroups", p.workgroups},
                                     {"fresh_buffers", true},
                                     {"ms", p.ms},
                                     {"tb_per_s", p.bytes_per_s * 1e-12}});
    }
    for (const std::string& file : kernel_files) {
      if (!vk) break;
      std::ifstream in(file);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto k = ir::parse_kernel(text, file);
      // Pseudo-random values, so that no memory compression of constant data flatters the time.
      runtime::State base = runtime::make_state(*k, nlohmann::json::object());
      uint64_t h = 0x9E3779B97F4A7C15ull;
      for (auto& [name, buffer] : base.fields)
        for (ir::Value& v : buffer.data) {
          h ^= h << 13, h ^= h >> 7, h ^= h << 17;
          double unit = static_cast<double>(h >> 11) * 0x1.0p-53;
          v = ir::is_float(buffer.dtype) ? ir::Value::from_double(buffer.dtype, 2 * unit - 1)
                                         : ir::Value::from_double(buffer.dtype, static_cast<double>(h % 8));
        }
      runtime::State warm = base;
      runtime::vulkan::run_kernel(*vk, *k, warm, lowering, launch);
      std::vector<double> kernel_ms;
      for (int r = 0; r < args->repeat; ++r) {
        runtime::State s = base;
        kernel_ms.push_back(runtime::vulkan::run_kernel(*vk, *k, s, lowering, launch).launch.kernel_ms);
      }
      out["cases"].push_back(
          {{"kernel", file}, {"direction", "forward"}, {"backend", "vulkan"}, {"kernel_ms", median(kernel_ms)}});
    }
    std::string text = out.dump(2) + "\n";
    if (args->out_path.empty())
      std::cout << text;
    else
      pb::bench::write_file(args->out_path, text);
    return 0;
  });
}
