// Target: SPIR-V codegen on kernels that verify (kernel_decoder.h), optionally after reverse_ad
// (first byte, bit 0). Every execution emits the kernel under all 16 adstack lowerings (codegen
// runs spirv-val on every module and reports an invalid one as an InternalError), then, for one
// lowering (bits 1-4), runs the optimizer on each task, validates its output and cross-compiles
// it to MSL (and, with bit 5, GLSL). A construct the backend documents as unsupported, or a
// module the optimizer or SPIRV-Cross refuses, is a user error and fine.
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
  std::optional<spirv::CompiledKernel> chosen;
  for (size_t i = 0; i < lowerings.size(); ++i) {
    std::optional<spirv::CompiledKernel> compiled = emit(*fk.kernel, lowerings[i]);
    if (!compiled) {
      fuzz::count("codegen rejected the kernel (user error)");
      return 0;
    }
    if (i == (flags >> 1) % lowerings.size()) chosen = std::move(compiled);
  }
  fuzz::count("emitted under all 16 lowerings");
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
    try {
      (void)codegen::msl::spirv_to_msl(words, {}, name, task.name);
      if (flags & 32) (void)codegen::msl::spirv_to_glsl(words, {}, name, task.name);
    } catch (const UserError&) {
      fuzz::count("SPIRV-Cross refused a module (user error)");
      return 0;
    }
  }
  fuzz::count("optimized and cross-compiled");
  return 0;
}
