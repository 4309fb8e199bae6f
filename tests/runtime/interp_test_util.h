// Helpers shared by the interpreter tests: parse a kernel from text, build its state, run it.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "runtime/interp/interpreter.h"

namespace pb::runtime::test {

struct Ran {
  std::unique_ptr<ir::Kernel> kernel;
  State state;
  RunResult result;

  const Buffer& field(const std::string& name) const { return state.fields.at(name); }
  const ir::Value& at(const std::string& name, size_t i = 0) const { return field(name).data.at(i); }
};

inline Ran run_text(const std::string& text, const nlohmann::json& inputs = nullptr, const RunOptions& options = {}) {
  Ran r;
  r.kernel = ir::parse_kernel(text);
  r.state = make_state(*r.kernel, inputs);
  r.result = run_kernel(*r.kernel, r.state, options);
  return r;
}

// The message of the UserError that running `text` throws, or "<no error>".
inline std::string run_error(const std::string& text, const nlohmann::json& inputs = nullptr,
                             const RunOptions& options = {}) {
  try {
    run_text(text, inputs, options);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// out = OP(a, b) with operands of kind `type` and a result of kind `result` (default: `type`).
inline ir::Value binary(const std::string& op, const std::string& type, const std::string& a, const std::string& b,
                        std::string result = "") {
  if (result.empty()) result = type;
  return run_text(fmt::format(R"(field out : {0}[]
kernel "ops" {{
  <{1}> $1 = const {2}
  <{1}> $2 = const {3}
  <{0}> $3 = {4} $1 $2
  <*{0}> $4 = global ptr [out], index [] activate=true
  $5 : global store [$4 <- $3]
}}
)",
                              result, type, a, b, op))
      .at("out");
}

#define EXPECT_CONTAINS(haystack, needle) EXPECT_PRED2(::pb::runtime::test::contains, haystack, needle)

}  // namespace pb::runtime::test
