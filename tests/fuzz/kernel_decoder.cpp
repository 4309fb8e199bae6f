#include "tests/fuzz/kernel_decoder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <string_view>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "workbench/workspace/kernel_decoder.h"

namespace pb::fuzz {

namespace {

// The decoder's choices read from the fuzzer's bytes.
class ByteChoices final : public workbench::KernelChoices {
 public:
  ByteChoices(const uint8_t* data, size_t size) : in_(data, size) {}
  int64_t in_range(int64_t lo, int64_t hi) override { return in_.ConsumeIntegralInRange<int64_t>(lo, hi); }
  bool flag() override { return in_.ConsumeBool(); }
  double real() override { return in_.ConsumeFloatingPoint<double>(); }
  bool exhausted() override { return in_.remaining_bytes() == 0; }

 private:
  FuzzedDataProvider in_;
};

}  // namespace

FuzzKernel decode_kernel(const uint8_t* data, size_t size) {
  ByteChoices choices(data, size);
  workbench::DecodedKernel d = workbench::decode_kernel(choices);
  return FuzzKernel{.kernel = std::move(d.kernel), .inputs = std::move(d.inputs), .decoded = true};
}

FuzzKernel kernel_from_bytes(const uint8_t* data, size_t size) {
  try {
    auto k = ir::parse_kernel(std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>");
    if (ir::verify(*k).empty()) return FuzzKernel{.kernel = std::move(k), .inputs = nlohmann::json::object()};
  } catch (const UserError&) {
  }
  return decode_kernel(data, size);
}

}  // namespace pb::fuzz
