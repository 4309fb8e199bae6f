// The CPU backend is a module loaded on first use (runtime/cpu/backend.h): a process
// maps it, and LLVM with it, only once it runs something on the CPU; the module exports its entry
// point and nothing of the LLVM and passbench code it carries. One test: the first assertion is
// about the process's state before any CPU run.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "ir/parser.h"
#include "runtime/core/state.h"
#include "runtime/cpu/backend.h"
#include "workbench/workspace/execute.h"
#include "workbench/workspace/run.h"

using namespace pb;

namespace {

bool module_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream s;
  s << maps.rdbuf();
  return s.str().find("libpassbench_cpu.so") != std::string::npos;
}

const char* kKernel = R"(field x : f32[4]
field y : f32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = sin $5
    <*f32> $7 = global ptr [y], index [] activate=true
    <f32> $8 = atomic add($7, $6)
  }
}
)";

TEST(CpuModule, LoadedOnFirstCpuRunOnlyWithItsEntryPointExported) {
  std::unique_ptr<ir::Kernel> k = ir::parse_kernel(kKernel, "k.chi");
  nlohmann::json inputs = nlohmann::json::parse(R"({"fields": {"x": {"data": [0.5, 1, 2, 3]}}})");

  runtime::State on_interp = runtime::make_state(*k, inputs);
  workbench::backend_for(workbench::Backend::interp).launch(*k, on_interp, {});
  EXPECT_FALSE(module_mapped()) << "an interpreter run loaded the cpu backend";

  runtime::State on_cpu = runtime::make_state(*k, inputs);
  workbench::backend_for(workbench::Backend::cpu).launch(*k, on_cpu, {});
  ASSERT_TRUE(module_mapped());
  float a = on_interp.fields.at("y").data.at(0).as_f32();
  float b = on_cpu.fields.at("y").data.at(0).as_f32();
  EXPECT_NEAR(a, b, 1e-5f * std::max(1.0f, std::abs(a)));
  EXPECT_GT(a, 1.0f);  // sin(0.5) + sin(1) + sin(2) + sin(3): the run computed something

  std::string path = runtime::cpu::module_path();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << path;
  EXPECT_NE(dlsym(handle, "passbench_cpu_module_api"), nullptr);
  EXPECT_EQ(dlsym(handle, "LLVMContextCreate"), nullptr) << "LLVM's symbols leak out of the module";
  EXPECT_EQ(dlsym(handle, "_ZN2pb7runtime10run_kernelERKNS_2ir6KernelERNS0_5StateERKNS0_10RunOptionsE"), nullptr)
      << "passbench's own symbols leak out of the module";
  dlclose(handle);
}

}  // namespace
