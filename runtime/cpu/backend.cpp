#include "runtime/cpu/backend.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "ir/assert.h"
#include "runtime/core/prepare.h"

#ifndef PASSBENCH_CPU_MODULE_BUILD_PATH
#define PASSBENCH_CPU_MODULE_BUILD_PATH ""
#endif

namespace pb::runtime::cpu {
namespace {

constexpr const char* kModuleFile = "libpassbench_cpu.so";

struct Loaded {
  const CpuModuleApi* api = nullptr;
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
std::string mismatch(const CpuModuleApi& api) {
  CpuModuleApi mine{};
  if (api.abi != mine.abi)
    return "it was built for another version of passbench (interface " + std::to_string(api.abi) + ")";
  for (size_t i = 0; i < std::size(mine.sizes); ++i)
    if (api.sizes[i] != mine.sizes[i]) return "it was built from other sources than this executable";
  if (!api.run_kernel || !api.module_text || !api.adopt_type_tables || !api.adopt_stmt_pool)
    return "its function table is incomplete";
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
    using Entry = const CpuModuleApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "passbench_cpu_module_api"));
    const CpuModuleApi* api = entry ? entry() : nullptr;
    std::string why = api ? mismatch(*api) : "it has no passbench_cpu_module_api entry point";
    if (!why.empty()) {
      out.failure.append("\n  ").append(path).append(": ").append(why);
      dlclose(handle);
      continue;
    }
    api->adopt_type_tables(&ir::type_tables());
    api->adopt_stmt_pool(ir::stmt_pool::current_pool());
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

const CpuModuleApi& api() {
  const Loaded& loaded = loaded_module();
  if (!loaded.api)
    throw BackendAbsent(
        "the cpu backend could not be loaded: " + std::string(kModuleFile) + " was looked for at" + loaded.failure,
        "build the target passbench_cpu_module (it is part of the default build) next to the "
        "executable, or point PASSBENCH_CPU_MODULE at it; the other backends work without it");
  return *loaded.api;
}

void rethrow(ModuleError e) {
  switch (e.kind) {
    case ModuleError::Kind::none:
      return;
    case ModuleError::Kind::refusal:
      throw Refusal(std::move(e.diagnostic));
    case ModuleError::Kind::user:
      throw UserError(std::move(e.diagnostic));
    case ModuleError::Kind::internal:
      throw InternalError(e.message);
  }
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.f64_mode = c.check_global_access = c.stack_usage = c.prints = true;
    return c;
  }
  RunResult launch(const ir::Kernel& k, State& state, const RunOptions& options) override {
    require_capabilities(*this, options, false);
    auto start = std::chrono::steady_clock::now();
    std::unique_ptr<ir::Kernel> scalar = scalarized_if_tensor(k, "cpu");
    RunResult result;
    rethrow(api().run_kernel(scalar ? *scalar : k, state, options, result));
    result.times.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
};

}  // namespace

Backend& backend() {
  static CpuBackend b;
  return b;
}

ModuleText module_text(const ir::Kernel& k, const State& state, int opt_level, int64_t part_statements) {
  ModuleText out;
  rethrow(api().module_text(k, state, opt_level, part_statements, out));
  return out;
}

std::string module_path() {
  api();
  return loaded_module().path;
}

}  // namespace pb::runtime::cpu
