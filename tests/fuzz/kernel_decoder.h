// Fuzzer bytes as kernels: the product's decoder (workbench/workspace/kernel_decoder.h) reading
// its choices from the bytes, so that the pass, interpreter and codegen targets spend their
// executions past the parser. Missing bytes read as zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "ir/kernel.h"

namespace pb::fuzz {

struct FuzzKernel {
  std::unique_ptr<ir::Kernel> kernel;
  nlohmann::json inputs;  // the inputs JSON for runtime::make_state ({} for a parsed kernel)
  bool decoded = false;   // built by decode_kernel (else parsed from text)
};

// Always returns a kernel; ir::verify accepts it.
FuzzKernel decode_kernel(const uint8_t* data, size_t size);

// The text kernel in `data` when it parses and verifies (so that the bundled fixtures are useful
// seeds), else decode_kernel of the same bytes.
FuzzKernel kernel_from_bytes(const uint8_t* data, size_t size);

}  // namespace pb::fuzz
