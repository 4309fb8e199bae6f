// Shared by the Vulkan runtime tests: the runtime on the loader's device (opened once per test
// binary) and the comparison of a launch's fields with the interpreter's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "ir/diagnostic.h"
#include "runtime/core/state.h"
#include "runtime/vulkan/runtime.h"

namespace pb::runtime::vulkan::test {

struct Opened {
  std::unique_ptr<Runtime> runtime;
  std::string why;
};

inline Opened& opened() {
  static Opened o = [] {
    Opened out;
    try {
      out.runtime = std::make_unique<Runtime>();
    } catch (const UserError& e) {
      out.why = e.what();
    }
    return out;
  }();
  return o;
}
inline Runtime* device() { return opened().runtime.get(); }

#define REQUIRE_VULKAN()                      \
  if (!::pb::runtime::vulkan::test::device()) \
  GTEST_SKIP() << "no Vulkan device: " << ::pb::runtime::vulkan::test::opened().why

// Every float field within 1e-4 relative of the interpreter's (GLSL.std.450 transcendentals are
// not correctly rounded: NVIDIA's sin gave 2.5e-5 on a gradient here; docs/backends.md), every
// int field equal; returns the elements compared.
inline size_t expect_same(const State& want, const State& got, const std::string& where) {
  size_t compared = 0;
  for (const auto& [name, buf] : want.fields)
    for (size_t i = 0; i < buf.data.size(); ++i, ++compared) {
      const ir::Value& a = buf.data[i];
      const ir::Value& b = got.fields.at(name).data[i];
      if (ir::is_float(a.kind())) {
        double x = a.as_f64(), y = b.as_f64();
        EXPECT_LE(std::fabs(x - y), 1e-4 * std::max({1.0, std::fabs(x), std::fabs(y)}))
            << name << "[" << i << "]: interpreter " << x << ", Vulkan " << y << " (" << where << ")";
      } else {
        EXPECT_EQ(a.bits(), b.bits()) << name << "[" << i << "] (" << where << ")";
      }
    }
  return compared;
}

}  // namespace pb::runtime::vulkan::test
