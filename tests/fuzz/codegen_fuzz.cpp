// Target: SPIR-V codegen on kernels that verify (kernel_decoder.h), optionally after reverse_ad
// (first byte, bit 0), under the adstack lowering that bits 1-4 pick: emit it (codegen runs
// spirv-val on every module and reports an invalid one as an InternalError), run the optimizer on
// each task, validate its output and cross-compile it to MSL (and, with bit 5, GLSL). The input
// picks one lowering rather than every execution emitting all 16, so that the fuzzer sees each
// lowering's coverage as the input's own and an execution costs one codegen (docs/fuzzing.md,
// "Targets"). A construct the backend documents as unsupported, or a module the optimizer or
// SPIRV-Cross refuses, is a user error and fine.
#include <string>

#include "codegen/msl/cross.h"
#include "codegen/spirv/compile.h"
#include "codegen/spirv/optimizer.h"
#include "codegen/spirv/options.h"
#include "codegen/spirv/validate.h"
#include "ir/assert.h"
#include "ir/printer.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/kernel_decoder.h"

using namespace pb;
namespace spirv = pb::codegen::spirv;

namespace {

std::optional<spirv::CompiledKernel> emit(const ir::Kernel& k, const spirv::LoweringOptions& lowering) {
  try {
    return spirv::compile(k, lowering);
  } catch (const UserError&) {
    return std::nullopt;
  } catch (const InternalError& e) {
    fuzz::finding("codegen internal error",
                  "[" + spirv::lowering_name(lowering) + "] " + e.what() + "\n--- kernel:\n" + ir::print_kernel(k));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  uint8_t flags = size ? data[0] : 0;
  fuzz::FuzzKernel fk = fuzz::kernel_from_bytes(data, size);
  fuzz::count(fk.decoded ? "kernel decoded from bytes" : "kernel parsed from text");
  if ((flags & 1) && !fuzz::run_passes(*fk.kernel, "reverse_ad")) {
    fuzz::count("reverse_ad rejected the kernel");
    return 0;
  }
  fuzz::count("reached codegen");
  spirv::LoweringOptions base;
  base.float64 = base.int64 = true;
  std::vector<spirv::LoweringOptions> lowerings = spirv::all_stack_lowerings(base);
  std::optional<spirv::CompiledKernel> chosen = emit(*fk.kernel, lowerings[(flags >> 1) % lowerings.size()]);
  if (!chosen) {
    fuzz::count("codegen rejected the kernel (user error)");
    return 0;
  }
  fuzz::count("emitted and validated");
  const std::string name = fk.kernel->name.empty() ? "kernel" : fk.kernel->name;
  for (const auto& task : chosen->tasks) {
    std::vector<uint32_t> words;
    try {
      spirv::OptimizerOptions options;
      options.counts_in_shared_array = chosen->options.count == spirv::StackCount::shared_array;
      words = spirv::optimize_spirv(task.spirv, options, name, task.name).words;
    } catch (const UserError&) {
      fuzz::count("optimizer refused a module (user error)");
      return 0;
    }
    if (auto v = spirv::validate(words); !v.ok)
      fuzz::finding("the optimizer's output fails spirv-val", "[" + spirv::lowering_name(chosen->options) + "] task " +
                                                                  task.name + ": " + v.message + "\n" + v.excerpt +
                                                                  "\n--- kernel:\n" + ir::print_kernel(*fk.kernel));
    // MSL has no doubles in buffers and no 64-bit atomics, so its refusal does not end the input:
    // the same module still goes to GLSL when asked.
    try {
      (void)codegen::msl::spirv_to_msl(words, {}, name, task.name);
    } catch (const UserError&) {
      fuzz::count("spirv-cross refused msl (user error)");
    }
    if (flags & 32) {
      try {
        (void)codegen::msl::spirv_to_glsl(words, {}, name, task.name);
      } catch (const UserError&) {
        fuzz::count("spirv-cross refused glsl (user error)");
      }
    }
  }
  fuzz::count("optimized every task");
  return 0;
}
