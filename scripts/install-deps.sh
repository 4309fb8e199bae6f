#!/usr/bin/env bash
# Installs the Debian 12 packages passbench needs, and only those that are missing.
# Safe to run any number of times. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  # toolchain
  cmake ninja-build g++ pkg-config
  # libraries used by ir/, passes/, runtime/, workbench/
  nlohmann-json3-dev libcli11-dev libfmt-dev libdtl-dev
  # codegen/: SPIR-V builder, validator and optimizer; MSL/GLSL through SPIRV-Cross
  spirv-tools spirv-headers spirv-cross libspirv-cross-c-shared-dev
  # runtime/vulkan: the loader and headers; lavapipe (a Vulkan device on the CPU) for tests and CI
  libvulkan-dev mesa-vulkan-drivers
  # codegen/llvm and runtime/cpu: LLVM 19 (its CMake targets need libzstd-dev) and oneTBB
  llvm-19-dev libzstd-dev libtbb-dev
  # tests and benchmarks (python3: the autodiff fuzzer's smoke test)
  libgtest-dev libbenchmark-dev python3
  # FileCheck tests (tests/passes/*.chi, tests/codegen/*.chi): LLVM's lit, FileCheck and not
  llvm-19-tools
  # libFuzzer targets under ASan/UBSan (tests/fuzz, scripts/fuzz/libfuzzer.sh)
  clang-19 libclang-rt-19-dev
  # the house rules CI checks (scripts/lint.sh): formatting and static analysis
  clang-format-19 clang-tidy-19
  # passbench-gui (workbench/gui): Dear ImGui with its GLFW + OpenGL3 backends, GLFW, OpenGL,
  # FreeType (libimgui.a refers to it), stb_image_write for screenshots
  libimgui-dev libglfw3-dev libgl-dev libfreetype-dev libstb-dev
  # its screenshot tests: a virtual X server and Mesa's software OpenGL (xvfb-run needs xauth)
  xvfb xauth libgl1-mesa-dri
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
