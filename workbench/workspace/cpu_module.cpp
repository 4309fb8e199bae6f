#include "workbench/workspace/cpu_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "ir/assert.h"

#ifndef PASSBENCH_CPU_MODULE_BUILD_PATH
#define PASSBENCH_CPU_MODULE_BUILD_PATH ""
#endif

namespace pb::workbench {
namespace {

constexpr const char* kModuleFile = "libpassbench_cpu.so";

struct Loaded {
  const runtime::cpu::CpuModuleApi* api = nullptr;
  std::string path;
  std::string failure;  // when api is null: every place tried and why it failed
};

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("PASSBENCH_CPU_MODULE"); env && *env) return {env};  // the only place then
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / kModuleFile).string());
  if (*PASSBENCH_CPU_MODULE_BUILD_PATH) out.emplace_back(PASSBENCH_CPU_MODULE_BUILD_PATH);
  return out;
}

// Checks that the module was built for the types this image passes it.
std::string mismatch(const runtime::cpu::CpuModuleApi& api) {
  runtime::cpu::CpuModuleApi mine{};
  if (api.abi != mine.abi)
    return "it was built for another version of passbench (interface " + std::to_string(api.abi) + ")";
  for (size_t i = 0; i < std::size(mine.sizes); ++i)
    if (api.sizes[i] != mine.sizes[i]) return "it was built from other sources than this executable";
  if (!api.run_kernel || !api.module_text || !api.adopt_type_tables) return "its function table is incomplete";
  return {};
}

Loaded load() {
  Loaded out;
  for (const std::string& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      out.failure += "\n  " + path + ": no such file";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      out.failure += "\n  " + path + ": " + (why ? why : "dlopen failed");
      continue;
    }
    using Entry = const runtime::cpu::CpuModuleApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "passbench_cpu_module_api"));
    const runtime::cpu::CpuModuleApi* api = entry ? entry() : nullptr;
    std::string why = api ? mismatch(*api) : "it has no passbench_cpu_module_api entry point";
    if (!why.empty()) {
      out.failure.append("\n  ").append(path).append(": ").append(why);
      dlclose(handle);
      continue;
    }
    api->adopt_type_tables(&ir::type_tables());
    out.api = api;  // the handle stays open for the life of the process
    out.path = path;
    return out;
  }
  if (out.failure.empty())
    out.failure = "\n  (no place to look: /proc/self/exe unreadable and no PASSBENCH_CPU_MODULE)";
  return out;
}

const Loaded& loaded_module() {
  static const Loaded loaded = load();
  return loaded;
}

const runtime::cpu::CpuModuleApi& api() {
  const Loaded& loaded = loaded_module();
  if (!loaded.api)
    throw UserError(
        "the cpu backend could not be loaded: " + std::string(kModuleFile) + " was looked for at" + loaded.failure,
        "build the target passbench_cpu_module (it is part of the default build) next to the "
        "executable, or point PASSBENCH_CPU_MODULE at it; the other backends work without it");
  return *loaded.api;
}

void rethrow(runtime::cpu::ModuleError e) {
  switch (e.kind) {
    case runtime::cpu::ModuleError::Kind::none:
      return;
    case runtime::cpu::ModuleError::Kind::user:
      throw UserError(std::move(e.diagnostic));
    case runtime::cpu::ModuleError::Kind::internal:
      throw InternalError(e.message);
  }
}

}  // namespace

runtime::RunResult run_on_cpu(const ir::Kernel& k, runtime::State& state, const runtime::RunOptions& options) {
  runtime::RunResult result;
  rethrow(api().run_kernel(k, state, options, result));
  return result;
}

runtime::cpu::ModuleText cpu_module_text(const ir::Kernel& k, const runtime::State& state, int opt_level) {
  runtime::cpu::ModuleText out;
  rethrow(api().module_text(k, state, opt_level, out));
  return out;
}

std::string cpu_module_path() {
  api();
  return loaded_module().path;
}

}  // namespace pb::workbench
