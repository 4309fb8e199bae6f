#include "codegen/spirv/options.h"

#include <fmt/format.h>

#include <charconv>

#include "ir/diagnostic.h"

namespace pb::codegen::spirv {
namespace {

constexpr const char* kKeys =
    "storage=function|heap, count=per-stack|shared-array, push=branch|select, "
    "bounds=on|off, float64=on|off, int64=on|off, atomic-float-add=on|off, inf-nan=on|off, "
    "print=drop|error, capacity=N, workgroup=N, unroll=N, vector=on|off";

[[noreturn]] void bad(std::string_view pair, std::string_view why) {
  throw UserError(fmt::format("bad SPIR-V lowering option '{}': {}", pair, why), fmt::format("use {}", kKeys));
}

bool on_off(std::string_view pair, std::string_view v) {
  if (v == "on" || v == "true" || v == "1") return true;
  if (v == "off" || v == "false" || v == "0") return false;
  bad(pair, "expected on or off");
}

int64_t positive(std::string_view pair, std::string_view v) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 1) bad(pair, "expected a positive integer");
  return n;
}

}  // namespace

std::string lowering_name(const LoweringOptions& o) {
  return fmt::format("storage={},count={},push={},bounds={}", o.storage == StackStorage::heap ? "heap" : "function",
                     o.count == StackCount::shared_array ? "shared-array" : "per-stack",
                     o.push == StackPush::select ? "select" : "branch", o.bounds_check ? "on" : "off");
}

LoweringOptions parse_lowering(std::string_view text, LoweringOptions o) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view pair = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) bad(pair, "expected key=value");
    std::string_view key = pair.substr(0, eq), v = pair.substr(eq + 1);
    if (key == "storage") {
      if (v != "function" && v != "heap") bad(pair, "expected function or heap");
      o.storage = v == "heap" ? StackStorage::heap : StackStorage::function;
    } else if (key == "count") {
      if (v != "per-stack" && v != "shared-array") bad(pair, "expected per-stack or shared-array");
      o.count = v == "per-stack" ? StackCount::per_stack : StackCount::shared_array;
    } else if (key == "push") {
      if (v != "branch" && v != "select") bad(pair, "expected branch or select");
      o.push = v == "branch" ? StackPush::branch : StackPush::select;
    } else if (key == "bounds") {
      o.bounds_check = on_off(pair, v);
    } else if (key == "float64") {
      o.float64 = on_off(pair, v);
    } else if (key == "int64") {
      o.int64 = on_off(pair, v);
    } else if (key == "atomic-float-add") {
      o.atomic_float_add = on_off(pair, v);
    } else if (key == "inf-nan") {
      o.preserve_inf_nan = o.preserve_inf_nan_f64 = on_off(pair, v);
    } else if (key == "print") {
      if (v != "drop" && v != "error") bad(pair, "expected drop or error");
      o.print = v == "drop" ? PrintLowering::drop : PrintLowering::error;
    } else if (key == "capacity") {
      o.symbolic_stack_capacity = positive(pair, v);
    } else if (key == "workgroup") {
      o.workgroup_size = static_cast<uint32_t>(positive(pair, v));
    } else if (key == "unroll") {
      int64_t u = positive(pair, v);
      if (u > 16) bad(pair, "expected 1 to 16");
      o.unroll = static_cast<uint32_t>(u);
    } else if (key == "vector") {
      o.vector = on_off(pair, v) ? VectorSteps::on : VectorSteps::off;
    } else {
      bad(pair, "unknown key");
    }
  }
  return o;
}

std::vector<LoweringOptions> all_stack_lowerings(const LoweringOptions& base) {
  std::vector<LoweringOptions> out;
  for (auto storage : {StackStorage::function, StackStorage::heap})
    for (auto count : {StackCount::per_stack, StackCount::shared_array})
      for (auto push : {StackPush::branch, StackPush::select})
        for (bool bounds : {false, true}) {
          LoweringOptions o = base;
          o.storage = storage;
          o.count = count;
          o.push = push;
          o.bounds_check = bounds;
          out.push_back(o);
        }
  return out;
}

}  // namespace pb::codegen::spirv
