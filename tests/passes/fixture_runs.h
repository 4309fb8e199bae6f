// Differential runs over the fixture corpus: every fixture kernel that runs on the interpreter (and
// the kernel its pipeline makes) is run before and after a transformation, which must leave the
// fields, ndarrays, printed text and return values as they were. For passes that move a kernel
// between stages without changing what it computes (offload, lower_access).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/diagnostic.h"
#include "ir/dump_source.h"
#include "ir/json.h"
#include "ir/type_uses.h"
#include "pass_test_util.h"
#include "passes/pass_manager.h"
#include "runtime/interp/interpreter.h"

namespace pb::test {

// What a transformation did to one kernel: nothing (the kernel is not a case), something, or
// something the caller counts apart (offload carrying values between tasks).
enum class Change { none, some, notable };
using Transform = std::function<Change(ir::Kernel&)>;

// Whether `k` uses a tensor type: passes without `takes_tensors` get only scalar kernels (the pass
// manager refuses the others), so a transform calling such a pass directly leaves them alone.
inline bool has_tensor_type(const ir::Kernel& k) {
  return ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); }).has_value();
}

struct Tally {
  int compared = 0;
  int notable = 0;  // compared kernels the transform marked notable
  int skipped = 0;  // did not run, or the transform left them alone
};

namespace detail {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::unique_ptr<ir::Kernel> load_source(const std::string& text, const std::string& name) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return ir::from_json(nlohmann::json::parse(text));
  ir::PreparedDump d = ir::prepare_dump(text, "", name);
  return ir::parse_kernel(d.parser_input(text), name);
}

struct Outcome {
  nlohmann::json state;
  std::string printed;
  std::string returned;
};

// Runs `k` on a state built from `inputs`; with `seed_grads`, every gradient field starts at one
// (so that a reverse kernel moves values). Throws what the run throws.
inline Outcome run(const ir::Kernel& k, const nlohmann::json& inputs, const runtime::RunOptions& o, bool seed_grads) {
  runtime::State st = runtime::make_state(k, inputs);
  if (seed_grads)
    for (size_t id = 0; id < k.fields().size(); ++id) {
      const ir::Field& f = k.fields()[id];
      if (f.primal && k.field(*f.primal).grad == static_cast<ir::FieldId>(id))
        if (auto it = st.fields.find(f.name); it != st.fields.end())
          for (ir::Value& v : it->second.data) v = ir::Value::from_int(v.kind(), 1);
    }
  runtime::RunResult r = runtime::run_kernel(k, st, o);
  Outcome out{runtime::state_to_json(k, st), r.printed, ""};
  for (const ir::Value& v : r.returned) out.returned += v.to_string() + " ";
  return out;
}

inline void compare(const ir::Kernel& k, const nlohmann::json& inputs, const runtime::RunOptions& o, bool seed_grads,
                    const Transform& transform, const std::string& label, Tally& t) {
  Outcome before;
  try {
    before = run(k, inputs, o, seed_grads);
  } catch (const UserError&) {
    ++t.skipped;
    return;
  }
  auto changed = k.clone();
  Change c = Change::none;
  try {
    c = transform(*changed);
  } catch (const UserError& e) {
    ADD_FAILURE() << label << ": the pass refused the kernel: " << e.what();
    return;
  }
  if (c == Change::none) {
    ++t.skipped;
    return;
  }
  std::string errors = verify_text(*changed);
  if (!errors.empty()) {
    ADD_FAILURE() << label << ": the kernel the pass made does not verify:\n" << errors << print(*changed);
    return;
  }
  Outcome after;
  try {
    after = run(*changed, inputs, o, seed_grads);
  } catch (const UserError& e) {
    ADD_FAILURE() << label << ": the kernel the pass made fails where the kernel ran: " << e.what() << "\n"
                  << print(*changed);
    return;
  }
  EXPECT_EQ(before.state, after.state) << label << "\n" << print(*changed);
  EXPECT_EQ(before.printed, after.printed) << label;
  EXPECT_EQ(before.returned, after.returned) << label;
  ++t.compared;
  t.notable += c == Change::notable;
}

}  // namespace detail

// Every fixture with inputs under fixtures/: its kernel as written into `plain`, and the kernel
// its pipeline makes (gradient fields seeded with ones) into `piped`.
inline void compare_fixture_kernels(const Transform& transform, Tally& plain, Tally& piped) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(PASSBENCH_SOURCE_DIR) / "fixtures";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.path().filename().string().ends_with(".fixture.json")) continue;
    auto fx = nlohmann::json::parse(detail::read_file(entry.path()));
    if (!fx.contains("inputs") && !fx.contains("inputs_file")) continue;
    const fs::path dir = entry.path().parent_path();
    const std::string label = fs::relative(entry.path(), root).string();
    std::unique_ptr<ir::Kernel> k;
    nlohmann::json inputs;
    try {
      k = fx.contains("kernel_text")
              ? detail::load_source(fx["kernel_text"].get<std::string>(), label)
              : detail::load_source(detail::read_file(dir / fx["kernel"].get<std::string>()), label);
      inputs = fx.contains("inputs") ? fx["inputs"] : nlohmann::json::parse(detail::read_file(dir / fx["inputs_file"]));
    } catch (const std::exception&) {
      continue;  // a parse-error fixture
    }
    if (!verify_text(*k).empty()) continue;
    runtime::RunOptions o;
    const auto run_opts = fx.value("run", nlohmann::json::object());
    o.shuffle = run_opts.value("shuffle", false);
    o.seed = run_opts.value("seed", uint64_t{0});
    o.f64 = run_opts.value("f64", false);
    detail::compare(*k, inputs, o, false, transform, label, plain);

    if (!fx.contains("pipeline")) continue;
    try {
      auto pipeline = passes::parse_pipeline(fx["pipeline"].get<std::string>());
      passes::RunOptions po;
      po.capture = passes::Capture::none;
      if (passes::run_pipeline(*k, pipeline, po).failed) continue;
    } catch (const UserError&) {
      continue;
    }
    detail::compare(*k, inputs, o, true, transform, label + " after " + fx["pipeline"].get<std::string>(), piped);
  }
}

}  // namespace pb::test
