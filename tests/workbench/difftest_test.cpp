// Differential testing (workbench/workspace/difftest.h) can fail: a backend planted in place of
// the compiled ones and a pass planted in the registry, each wrong in one way, fail their oracle;
// a refusing backend or pass is REFUSED; a race between parallel iterations is named, not
// failed. A bundled fixture passes every oracle that applies to it. Seed slices partition.
#include "workbench/workspace/difftest.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/registry.h"
#include "runtime/interp/backend.h"
#include "workbench/workspace/kernel_decoder.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/replay.h"

namespace pb::workbench {
namespace {

// y = a * b * 3, with two statements nothing needs.
const char* const kMul = R"(
field a : f32[3] grad a_grad
field b : f32[3] grad b_grad
field y : f32[3] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [a], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [b], index [$3] activate=true
    <f32> $7 = global load $6
    <f32> $8 = mul $5 $7
    <f32> $13 = sin $7
    <f32> $14 = add $13 $5
    <f32> $9 = const 3
    <f32> $10 = mul $8 $9
    <*f32> $11 = global ptr [y], index [$3] activate=true
    $12 : global store [$11 <- $10]
  }
}
)";
const char* const kMulInputs = R"({"fields": {"a": {"data": [0.5, -1.25, 2.0]}, "b": {"data": [1.5, -0.75, 0.5]}}})";

// Every iteration stores its x into y[0]: y[0] is whichever iteration ran last.
const char* const kRace = R"(
field x : f32[4] grad x_grad
field y : f32[4] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [$0] activate=true
    $7 : global store [$6 <- $5]
  }
}
)";
const char* const kRaceInputs = R"({"fields": {"x": {"data": [1.0, 2.0, 3.0, 4.0]}}})";

struct Loaded {
  std::unique_ptr<ir::Kernel> kernel;
  DifftestSubject subject;
};

Loaded load(const char* text, const char* inputs) {
  Loaded l;
  l.kernel = ir::parse_kernel(text, "k.chi");
  EXPECT_TRUE(ir::verify(*l.kernel).empty());
  l.subject.kernel = l.kernel.get();
  l.subject.inputs = nlohmann::json::parse(inputs);
  return l;
}

// The interpreter; with `wrong`, the last element of every float field made wrong afterwards.
class PlantedBackend : public runtime::Backend {
 public:
  enum class Defect { none, wrong, refuses };
  explicit PlantedBackend(Defect d) : defect_(d) {}
  std::string_view name() const override { return "planted"; }
  runtime::Capabilities capabilities() const override { return runtime::interp::backend().capabilities(); }
  runtime::RunResult launch(const ir::Kernel& k, runtime::State& state, const runtime::RunOptions& options) override {
    if (defect_ == Defect::refuses)
      throw runtime::Refusal(Diagnostic::plain("the planted backend refuses every kernel"), {});
    runtime::RunResult r = runtime::interp::backend().launch(k, state, options);
    if (defect_ == Defect::wrong)
      for (auto& [name, b] : state.fields)
        if (!b.data.empty() && ir::is_float(b.dtype))
          b.data.back() = ir::Value::from_double(b.dtype, b.data.back().as_f64() + 0.5);
    return r;
  }

 private:
  Defect defect_;
};

DifftestOptions planted(PlantedBackend& backend) {
  DifftestOptions o;
  o.backends = {Backend::interp, Backend::cpu};
  o.backend_options.stand_in = &backend;
  return o;
}

// Test only: the first f32 constant 3 becomes 4 (valid IR, another answer); with `refuse`, a user
// error instead (a declared refusal).
template <bool refuse>
struct PlantedPass final : passes::Pass {
  passes::PassResult run(ir::Kernel& k, const passes::PassOptions&) override {
    if (refuse) throw UserError("the planted pass refuses every kernel");
    for (ir::Stmt* s : ir::collect_preorder(k.root()))
      if (auto* c = ir::dyn_cast<ir::ConstStmt>(s); c && c->value.identical(ir::Value::make_f32(3))) {
        c->value = ir::Value::make_f32(4);
        return {true, {}};
      }
    return {};
  }
};

passes::ScopedRegistry planted_passes() {
  return passes::ScopedRegistry(
      {{.name = "test_wrong_constant",
        .summary = "test only: 3 becomes 4",
        .options = {},
        .statistics = {},
        .create = [] { return std::make_unique<PlantedPass<false>>(); }},
       {.name = "test_refuses", .summary = "test only: refuses", .options = {}, .statistics = {}, .create = [] {
          return std::make_unique<PlantedPass<true>>();
        }}});
}

TEST(Difftest, ABundledFixturePassesEveryOracleThatApplies) {
  std::string fixture = std::string(PASSBENCH_SOURCE_DIR) + "/fixtures/autodiff/binary_mul_f32.fixture.json";
  auto k = load_source(fixture).kernel;
  DifftestSubject s;
  s.kernel = k.get();
  s.inputs = *command_inputs("", fixture).json;
  DifftestOptions o;
  o.backends = {Backend::interp, Backend::cpu};
  VerdictCounts counts;
  for (const OracleOutcome& r : run_oracles(s, o)) {
    counts.add(r.verdict);
    EXPECT_NE(r.verdict, Verdict::fail) << r.oracle << ": " << r.summary << "\n" << r.report;
    if (r.verdict == Verdict::pass) {
      EXPECT_GT(r.compared, 0u) << r.oracle;
    }
  }
  EXPECT_EQ(counts.fail, 0u);
  EXPECT_GE(counts.pass, 15u);  // backends, 4 gradient oracles, 10 pipelines, the access check
  EXPECT_EQ(run_oracle("gradcheck:interp", s, o).verdict, Verdict::pass);
  EXPECT_EQ(run_oracle("backends:cpu", s, o).verdict, Verdict::pass);
}

TEST(Difftest, APlantedWrongBackendFailsAndATruthfulOnePasses) {
  Loaded l = load(kMul, kMulInputs);
  PlantedBackend truthful(PlantedBackend::Defect::none), wrong(PlantedBackend::Defect::wrong);
  EXPECT_EQ(run_oracle("backends:cpu", l.subject, planted(truthful)).verdict, Verdict::pass);
  OracleOutcome r = run_oracle("backends:cpu", l.subject, planted(wrong));
  EXPECT_EQ(r.verdict, Verdict::fail) << r.summary;
  EXPECT_NE(r.report.find("DIFFERS"), std::string::npos) << r.report;
}

TEST(Difftest, APlantedRefusalIsRefusedNotPassed) {
  Loaded l = load(kMul, kMulInputs);
  PlantedBackend refuses(PlantedBackend::Defect::refuses);
  OracleOutcome r = run_oracle("backends:cpu", l.subject, planted(refuses));
  EXPECT_EQ(r.verdict, Verdict::refused);
  EXPECT_NE(r.summary.find("refuses every kernel"), std::string::npos) << r.summary;
}

TEST(Difftest, APlantedWrongPassFailsItsPipelineAndARefusingPassIsRefused) {
  auto scope = planted_passes();
  Loaded l = load(kMul, kMulInputs);
  DifftestOptions o;
  OracleOutcome wrong = run_oracle("pipeline:test_wrong_constant", l.subject, o);
  EXPECT_EQ(wrong.verdict, Verdict::fail) << wrong.summary;
  EXPECT_GT(wrong.compared, 0u);
  OracleOutcome refused = run_oracle("pipeline:simplify,test_refuses", l.subject, o);
  EXPECT_EQ(refused.verdict, Verdict::refused) << refused.summary;
  EXPECT_NE(refused.summary.find("refuses every kernel"), std::string::npos) << refused.summary;
  EXPECT_EQ(run_oracle("pipeline:simplify,dce", l.subject, o).verdict, Verdict::pass);
}

TEST(Difftest, AFindingIsReducedWhileItStillFailsAndWrittenDown) {
  auto scope = planted_passes();
  Loaded l = load(kMul, kMulInputs);
  DifftestOptions o;
  auto reduced = reduce_finding(l.subject, "pipeline:test_wrong_constant", o);
  EXPECT_LT(reduced->count_statements(), l.kernel->count_statements());
  DifftestSubject smaller = l.subject;
  smaller.kernel = reduced.get();
  EXPECT_EQ(run_oracle("pipeline:test_wrong_constant", smaller, o).verdict, Verdict::fail);
  std::string text = ir::print_kernel(*reduced);
  EXPECT_NE(text.find("const 3"), std::string::npos) << text;  // what the planted pass needs stays

  auto dir = std::filesystem::temp_directory_path() / ("pb_difftest_" + std::to_string(::getpid()));
  OracleOutcome r = run_oracle("pipeline:test_wrong_constant", l.subject, o);
  std::string chi = write_finding(dir.string(), "k", *l.kernel, l.subject.inputs, r, reduced.get());
  EXPECT_EQ(ir::print_kernel(*load_kernel(chi)), text);
  EXPECT_TRUE(std::filesystem::exists(dir / "k.original.chi"));
  EXPECT_EQ(parse_json_text(read_file((dir / "k.inputs.json").string()), "inputs"), l.subject.inputs);
  EXPECT_NE(read_file((dir / "k.out").string()).find("FAIL pipeline:test_wrong_constant"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Difftest, ARaceBetweenIterationsIsNamedNotFailed) {
  Loaded l = load(kRace, kRaceInputs);
  PlantedBackend truthful(PlantedBackend::Defect::none);
  OracleOutcome backends = run_oracle("backends:cpu", l.subject, planted(truthful));
  EXPECT_EQ(backends.verdict, Verdict::pass) << backends.summary;
  EXPECT_NE(backends.summary.find("racing between parallel iterations: y"), std::string::npos) << backends.summary;
  for (const char* oracle : {"gradcheck:interp", "adjointcheck:interp", "jvpcheck:interp"}) {
    OracleOutcome r = run_oracle(oracle, l.subject, DifftestOptions{});
    EXPECT_EQ(r.verdict, Verdict::refused) << oracle << ": " << r.summary;
    EXPECT_NE(r.summary.find("order of parallel iterations (y)"), std::string::npos) << r.summary;
  }
}

TEST(Difftest, TheStaticAccessCheckIsComparedWithTheDynamicOne) {
  // out[i] = out[i] + x[i] after reading out[i]: both checks see it.
  Loaded l = load(R"(
field x : f32[2] grad x_grad
field y : f32[2] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 2
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [y], index [$3] activate=true
    <f32> $5 = global load $4
    <f32> $6 = mul $5 $5
    $7 : global store [$4 <- $6]
  }
}
)",
                  R"({"fields": {"y": {"data": [1.5, 2.0]}}})");
  OracleOutcome r = run_oracle("global-access", l.subject, DifftestOptions{});
  EXPECT_EQ(r.verdict, Verdict::pass) << r.summary;
  EXPECT_NE(r.summary.find("dynamic violation"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("static fine"), std::string::npos) << r.summary;
}

TEST(Difftest, AnUnknownOracleIsAUserError) {
  Loaded l = load(kMul, kMulInputs);
  EXPECT_THROW(run_oracle("backends:nowhere", l.subject, DifftestOptions{}), UserError);
  EXPECT_THROW(run_oracle("guesswork", l.subject, DifftestOptions{}), UserError);
}

TEST(Difftest, ShardsPartitionASeedRange) {
  std::set<uint64_t> all;
  size_t total = 0;
  for (uint64_t i = 0; i < 3; ++i) {
    auto seeds = parse_seed_slice("10:30", fmt::format("{}/3", i)).seeds();
    for (uint64_t s : seeds) EXPECT_EQ(s % 3, i);
    total += seeds.size();
    all.insert(seeds.begin(), seeds.end());
  }
  EXPECT_EQ(total, 20u);
  EXPECT_EQ(all.size(), 20u);
  EXPECT_EQ(*all.begin(), 10u);
  EXPECT_EQ(*all.rbegin(), 29u);
  EXPECT_EQ(parse_seed_slice("5:8", "").seeds(), (std::vector<uint64_t>{5, 6, 7}));
  for (const char* bad : {"", "5", "8:5", "a:b", "1:2:3", "-1:4"}) EXPECT_THROW(parse_seed_slice(bad, ""), UserError);
  for (const char* bad : {"3/3", "1", "0/0", "x/2"}) EXPECT_THROW(parse_seed_slice("0:9", bad), UserError);
}

TEST(Difftest, ASeedGivesOneVerifyingKernel) {
  for (uint64_t seed : {0u, 1u, 77u}) {
    DecodedKernel a = generate_kernel(seed), b = generate_kernel(seed);
    EXPECT_TRUE(ir::verify(*a.kernel).empty());
    EXPECT_EQ(ir::print_kernel(*a.kernel), ir::print_kernel(*b.kernel));
    EXPECT_EQ(a.inputs, b.inputs);
  }
  EXPECT_NE(ir::print_kernel(*generate_kernel(1).kernel), ir::print_kernel(*generate_kernel(2).kernel));
}

// Atomics on the 0-d s that do not commute (a `min` in one iteration, an `add` in another) end
// differently in different iteration orders: a generated kernel uses one commuting kind on s.
TEST(Difftest, GeneratedAtomicsOnTheScalarCommute) {
  int kernels_with_two = 0;
  for (uint64_t seed = 0; seed < 5000; ++seed) {
    DecodedKernel d = generate_kernel(seed);
    std::set<ir::AtomicOp> ops;
    int on_s = 0;
    ir::walk(d.kernel->root(), [&](ir::Stmt& s) {
      auto* a = ir::dyn_cast<ir::AtomicOpStmt>(&s);
      auto* p = a ? ir::dyn_cast<ir::GlobalPtrStmt>(a->dest()) : nullptr;
      if (!p || d.kernel->field(p->field).name != "s") return;
      ++on_s;
      ops.insert(a->op == ir::AtomicOp::sub ? ir::AtomicOp::add : a->op);
    });
    EXPECT_LE(ops.size(), 1u) << "seed " << seed << "\n" << ir::print_kernel(*d.kernel);
    kernels_with_two += on_s >= 2;
  }
  EXPECT_GT(kernels_with_two, 10);  // the property was tested on kernels it could fail on
}

}  // namespace
}  // namespace pb::workbench
