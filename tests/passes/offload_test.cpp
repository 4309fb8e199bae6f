// offload against the interpreter: every fixture kernel that runs gives the same fields, ndarrays,
// printed text and return values before and after offloading (and so does the kernel its
// pipeline makes, reverse kernels included); plus the pass's statistics and errors.
#include "passes/offload.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/diagnostic.h"
#include "ir/dump_source.h"
#include "ir/json.h"
#include "pass_test_util.h"
#include "passes/pass_manager.h"
#include "runtime/interp/interpreter.h"

using namespace pb;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<ir::Kernel> load_source(const std::string& text, const std::string& name) {
  if (text.find_first_not_of(" \t\r\n") != std::string::npos && text[text.find_first_not_of(" \t\r\n")] == '{')
    return ir::from_json(nlohmann::json::parse(text));
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
Outcome run(const ir::Kernel& k, const nlohmann::json& inputs, const runtime::RunOptions& o, bool seed_grads) {
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

struct Tally {
  int compared = 0;
  int skipped = 0;
  int carried = 0;  // compared kernels that carry values between tasks
};

// Runs `k` as it is and offloaded; a kernel that does not run as it is is not a case.
void compare(const ir::Kernel& k, const nlohmann::json& inputs, const runtime::RunOptions& o, bool seed_grads,
             const std::string& label, Tally& t) {
  Outcome before;
  try {
    before = run(k, inputs, o, seed_grads);
  } catch (const UserError&) {
    ++t.skipped;
    return;
  }
  auto off = k.clone();
  passes::OffloadResult r;
  try {
    r = passes::offload(*off);
  } catch (const UserError& e) {
    ADD_FAILURE() << label << ": offload refused the kernel: " << e.what();
    return;
  }
  if (r.serial + r.range_for + r.struct_for == 0) {
    ++t.skipped;  // already offloaded, or empty
    return;
  }
  std::string errors = test::verify_text(*off);
  if (!errors.empty()) {
    ADD_FAILURE() << label << ": the offloaded kernel does not verify:\n" << errors << test::print(*off);
    return;
  }
  Outcome after;
  try {
    after = run(*off, inputs, o, seed_grads);
  } catch (const UserError& e) {
    ADD_FAILURE() << label << ": the offloaded kernel fails where the kernel ran: " << e.what() << "\n"
                  << test::print(*off);
    return;
  }
  EXPECT_EQ(before.state, after.state) << label << "\n" << test::print(*off);
  EXPECT_EQ(before.printed, after.printed) << label;
  EXPECT_EQ(before.returned, after.returned) << label;
  ++t.compared;
  t.carried += r.temporaries > 0;
}

}  // namespace

TEST(Offload, EveryFixtureKernelRunsTheSameOffloaded) {
  Tally plain, piped;
  const fs::path root = fs::path(PASSBENCH_SOURCE_DIR) / "fixtures";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".fixture.json")) continue;
    auto fx = nlohmann::json::parse(read_file(entry.path()));
    if (!fx.contains("inputs") && !fx.contains("inputs_file")) continue;
    const fs::path dir = entry.path().parent_path();
    const std::string label = fs::relative(entry.path(), root).string();
    std::unique_ptr<ir::Kernel> k;
    nlohmann::json inputs;
    try {
      k = fx.contains("kernel_text") ? load_source(fx["kernel_text"].get<std::string>(), label)
                                     : load_source(read_file(dir / fx["kernel"].get<std::string>()), label);
      inputs = fx.contains("inputs") ? fx["inputs"] : nlohmann::json::parse(read_file(dir / fx["inputs_file"]));
    } catch (const std::exception&) {
      continue;  // a parse-error fixture
    }
    if (!test::verify_text(*k).empty()) continue;
    runtime::RunOptions o;
    const auto run_opts = fx.value("run", nlohmann::json::object());
    o.shuffle = run_opts.value("shuffle", false);
    o.seed = run_opts.value("seed", uint64_t{0});
    o.f64 = run_opts.value("f64", false);
    compare(*k, inputs, o, false, label, plain);

    // The kernel the fixture's pipeline makes (the reverse kernel of a reverse_ad fixture).
    if (!fx.contains("pipeline")) continue;
    try {
      auto pipeline = passes::parse_pipeline(fx["pipeline"].get<std::string>());
      passes::RunOptions po;
      po.capture_ir = false;
      if (passes::run_pipeline(*k, pipeline, po).failed) continue;
    } catch (const UserError&) {
      continue;
    }
    compare(*k, inputs, o, true, label + " after " + fx["pipeline"].get<std::string>(), piped);
  }
  std::cout << "offload compared " << plain.compared << " fixture kernels (" << plain.carried
            << " carrying values between tasks; " << plain.skipped << " did not run or were offloaded already) and "
            << piped.compared << " pipeline outputs (" << piped.carried << " carrying; " << piped.skipped
            << " skipped)\n";
  // A comparison of nothing proves nothing: most of the 500-odd runnable fixtures must take part.
  EXPECT_GE(plain.compared, 300);
  EXPECT_GE(piped.compared, 100);
  EXPECT_GE(plain.carried + piped.carried, 40);
}

namespace {

const char* kShared = R"(field x : f32[8]
field total : f32[]
arg 0 : i32
kernel shared {
  <*f32> $0 = alloca
  <i32> $1 = argload[0]
  <i32> $2 = const 0
  <f64> $3 = const 2.5
  <f32> $4 = cast_value<f32> $3
  $5 : for in range($2, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = global ptr [x], index [$6] activate=true
    <f32> $8 = global load $7
    <f32> $9 = mul $8 $4
    <f32> $10 = atomic add($0, $9)
  }
  <f32> $11 = local load [$0]
  <*f32> $12 = global ptr [total], index [] activate=true
  $13 : global store [$12 <- $11]
}
)";

}  // namespace

TEST(Offload, StatisticsCountTasksTemporariesAndCopies) {
  auto k = test::parse(kShared);
  passes::OffloadResult r = passes::offload(*k);
  EXPECT_EQ(test::verify_text(*k), "");
  EXPECT_EQ(r.serial, 2);
  EXPECT_EQ(r.range_for, 1);
  EXPECT_EQ(r.struct_for, 0);
  EXPECT_EQ(r.temporaries, 3);  // the end bound $1, the factor $4, the local $0
  EXPECT_EQ(r.temporary_bytes, 12);
  EXPECT_EQ(r.cloned, 0);
  auto out = run(*k, nlohmann::json::parse(R"({"fields": {"x": {"data": [1, 2, 3, 4, 5, 6, 7, 8]}}, "args": [4]})"), {},
                 false);
  EXPECT_EQ(out.state["fields"]["total"]["data"][0], 25.0);  // 2.5 * (1 + 2 + 3 + 4)
}

TEST(Offload, AnOffloadedKernelIsLeftAsItIs) {
  auto k = test::parse(kShared);
  passes::offload(*k);
  const std::string once = test::print(*k);
  passes::OffloadResult r = passes::offload(*k);
  EXPECT_EQ(r.serial + r.range_for + r.struct_for + r.temporaries + r.cloned, 0);
  EXPECT_EQ(test::print(*k), once);
}

TEST(Offload, RefusesAMixOfTasksAndStatements) {
  auto k = test::parse(R"(kernel {
  $0 = offloaded
  body {
    <i32> $1 = const 1
  }
  <i32> $2 = const 2
}
)");
  try {
    passes::offload(*k);
    FAIL() << "a mixed top level was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes offloaded tasks with top-level statements (`<i32> $2 = const 2`)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Offload, RefusesAStackUsedByAnotherTask) {
  auto k = test::parse(R"(kernel {
  <f32> $0 = stack alloc (max_size=4)
  <i32> $1 = const 0
  <i32> $2 = const 4
  $3 : for in range($1, $2) block_dim=adaptive {
    <f32> $4 = const 1
    <f32> $5 : stack push $0, val = $4
  }
}
)");
  try {
    passes::offload(*k);
    FAIL() << "a stack shared by two tasks was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the autodiff stack of `<f32> $0 = stack alloc (max_size=4)` is used by "
                                         "another task"),
              std::string::npos)
        << e.what();
  }
}
