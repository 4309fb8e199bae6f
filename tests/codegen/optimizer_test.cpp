// The spirv-opt pipeline, in one optimizer and pass by pass: per-pass rows with the IDs each pass
// needed, options, fail-closed ID overflow at exactly the bound given, fallback, message
// deduplication, the JSON report and the text table.
#include "codegen/spirv/optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/codegen/optimizer_test_modules.h"

namespace pb::codegen::spirv {
namespace {

using test::assemble;
using test::disassemble;
using test::kAdStackShader;

// The reference's whole list (34 passes, intermediate AggressiveDCE included).
OptimizerOptions reference_list(OptimizerOptions options = {}) {
  options.intermediate_dce = true;
  return options;
}

// The per-pass path (one optimizer per pass, rows and needs measured) on the reference's list.
OptimizerOptions per_pass(OptimizerOptions options = reference_list()) {
  options.measure_passes = true;
  return options;
}

std::vector<std::string> row_names(const OptimizerReport& report) {
  std::vector<std::string> names;
  for (const OptimizerPassRow& row : report.rows) names.push_back(row.pass);
  return names;
}

// Runs with `options` and expects the fail-closed error; returns it.
SpirvOptimizerError expect_failure(const std::vector<uint32_t>& words, const OptimizerOptions& options) {
  try {
    optimize_spirv(words, options, "grad_kernel", "task_3");
  } catch (const SpirvOptimizerError& e) {
    return e;
  }
  ADD_FAILURE() << "optimize_spirv did not fail";
  return SpirvOptimizerError(Diagnostic::plain("none"), {});
}

TEST(SpirvOptimizer, DefaultPipelineRecordsInputAndEveryPass) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const OptimizeResult result = optimize_spirv(words, per_pass(), "k", "t");
  const OptimizerReport& report = result.report;
  ASSERT_EQ(report.rows.size(), 35u);
  EXPECT_EQ(report.rows.front().pass, "input");
  EXPECT_EQ(report.rows[20].pass, "LoopUnroll");
  EXPECT_EQ(report.rows.back().pass, "CompactIds");
  std::vector<std::string> expected = {"input"};
  for (const std::string& name : optimizer_pass_names(reference_list())) expected.push_back(name);
  EXPECT_EQ(row_names(report), expected);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), "AggressiveDCE"), 7);
  for (size_t i = 0; i < report.rows.size(); ++i) EXPECT_EQ(report.rows[i].index, static_cast<int>(i));
  EXPECT_FALSE(report.failure);
  EXPECT_FALSE(report.used_fallback);
  EXPECT_TRUE(report.validated && report.valid);
  EXPECT_TRUE(report.warnings.empty());
}

TEST(SpirvOptimizer, InputRowMeasuresTheModule) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const OptimizerPassRow input = optimize_spirv(words, per_pass(), "k", "t").report.rows.front();
  EXPECT_EQ(input.id_bound, words[3]);
  EXPECT_EQ(input.bytes, words.size() * 4);
  EXPECT_EQ(input.function_variables, 5u);  // heap, counts, i, k, acc
  EXPECT_EQ(input.phis, 0u);
  EXPECT_EQ(input.ms, 0.0);
  EXPECT_FALSE(input.changed);
}

TEST(SpirvOptimizer, RowsFollowTheModuleThroughThePipeline) {
  const OptimizerReport report = optimize_spirv(assemble(kAdStackShader), per_pass(), "k", "t").report;
  auto row = [&](int index) { return report.rows.at(index); };
  EXPECT_EQ(row(1).pass, "WrapOpKill");
  EXPECT_FALSE(row(1).changed);                 // no OpKill in a compute shader
  EXPECT_GT(row(4).id_bound, row(3).id_bound);  // InlineExhaustive copies the helper's body
  EXPECT_EQ(row(16).pass, "LocalMultiStoreElim");
  EXPECT_GT(row(16).phis, 0u);                        // loop counters and the stack count become phis
  EXPECT_GT(row(20).id_bound, 2 * row(19).id_bound);  // LoopUnroll unrolls the 16-trip Unroll loop
  EXPECT_LT(row(34).id_bound, row(33).id_bound);      // CompactIds
  EXPECT_EQ(report.peak_id_bound, std::max_element(report.rows.begin(), report.rows.end(), [](auto& a, auto& b) {
                                    return a.id_bound < b.id_bound;
                                  })->id_bound);
  double total = 0;
  for (const OptimizerPassRow& r : report.rows) total += r.ms;
  EXPECT_DOUBLE_EQ(report.total_ms, total);
}

// The stack shape after optimization: the helper is inlined, the count array is gone (scalar
// replacement + SSA), the dynamically indexed heap stays the one Function-scope variable.
TEST(SpirvOptimizer, OptimizedStackShape) {
  const OptimizeResult result = optimize_spirv(assemble(kAdStackShader), per_pass(), "k", "t");
  const std::string text = disassemble(result.words);
  EXPECT_EQ(text.find("OpFunctionCall"), std::string::npos) << text;
  EXPECT_NE(text.find("OpPhi"), std::string::npos) << text;
  EXPECT_EQ(result.report.rows.back().function_variables, 1u) << text;
  EXPECT_NE(text.find("OpVariable %_ptr_Function__arr_float_uint_64 Function"), std::string::npos) << text;
}

TEST(SpirvOptimizer, NoIntermediateDceKeepsOnlyTheLastAggressiveDce) {
  OptimizerOptions options = per_pass();
  options.intermediate_dce = false;
  const OptimizerReport report = optimize_spirv(assemble(kAdStackShader), options, "k", "t").report;
  ASSERT_EQ(report.rows.size(), 29u);  // 35 - 6 intermediate AggressiveDCE
  const std::vector<std::string> names = row_names(report);
  EXPECT_EQ(std::count(names.begin(), names.end(), "AggressiveDCE"), 1);
  const auto dce = std::find(names.begin(), names.end(), "AggressiveDCE");
  EXPECT_EQ(*(dce + 1), "BlockMerge");
  EXPECT_EQ(names.back(), "CompactIds");
  EXPECT_TRUE(report.valid);
}

// Only the intermediate AggressiveDCE passes differ: the ID need moves by at most one ID and the
// module keeps its size (docs/performance.md measures reverse kernels: no change at all there).
TEST(SpirvOptimizer, IntermediateDceAloneBarelyMovesTheNeed) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  OptimizerOptions with = per_pass();
  OptimizerOptions without = with;
  without.intermediate_dce = false;
  EXPECT_TRUE(OptimizerOptions{}.intermediate_dce);
  const OptimizeResult a = optimize_spirv(words, with, "k", "t");
  const OptimizeResult b = optimize_spirv(words, without, "k", "t");
  EXPECT_EQ(a.report.rows.size(), 35u);
  EXPECT_EQ(b.report.rows.size(), 29u);
  EXPECT_EQ(a.words.size(), b.words.size());
  EXPECT_LE(std::max(a.report.peak_id_bound, b.report.peak_id_bound) -
                std::min(a.report.peak_id_bound, b.report.peak_id_bound),
            1u);
  EXPECT_EQ(a.report.peak_pass, b.report.peak_pass);
}

TEST(SpirvOptimizer, NoCompactIdsLeavesItOut) {
  OptimizerOptions options = per_pass();
  options.compact_ids = false;
  const OptimizerReport report = optimize_spirv(assemble(kAdStackShader), options, "k", "t").report;
  ASSERT_EQ(report.rows.size(), 34u);
  EXPECT_EQ(report.rows.back().pass, "BlockMerge");
  EXPECT_GT(report.final_id_bound, report.live_ids + 1);  // unrolling and DCE left holes
}

TEST(SpirvOptimizer, CompactIdsMakesTheBoundLiveIdsPlusOne) {
  const OptimizeResult result = optimize_spirv(assemble(kAdStackShader), per_pass(), "k", "t");
  EXPECT_EQ(result.report.final_id_bound, result.report.live_ids + 1);
  EXPECT_EQ(result.report.final_id_bound, result.words[3]);
  EXPECT_EQ(result.report.final_id_bound, result.report.rows.back().id_bound);
}

// The normal path runs the whole list in one optimizer and gives the same module as the per-pass
// path (CompactIds renumbers in order of appearance).
TEST(SpirvOptimizer, NormalPathIsOneOptimizerWithTheSameResult) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const OptimizeResult one = optimize_spirv(words, {}, "k", "t");
  const OptimizeResult each = optimize_spirv(words, per_pass(), "k", "t");
  ASSERT_EQ(one.report.rows.size(), 2u);
  EXPECT_EQ(one.report.rows[1].pass, "pipeline");
  EXPECT_EQ(one.report.rows[1].index, 34);
  EXPECT_EQ(one.report.rows[1].peak_id_bound, 0u);  // not measured
  EXPECT_TRUE(one.report.valid);
  EXPECT_EQ(one.words, each.words);
  EXPECT_EQ(one.report.final_id_bound, one.report.live_ids + 1);
}

// Each row's need is the true one: at least what the pass started and ended with, exact (the pass
// fits in it and not in one less) for the test module, and more than the surviving bound for the
// passes that allocate and drop IDs.
TEST(SpirvOptimizer, PerPassRowsGiveTheIdsEachPassNeeded) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const OptimizerReport report = optimize_spirv(words, per_pass(), "k", "t").report;
  bool dropped = false;
  for (size_t i = 1; i < report.rows.size(); ++i) {
    const OptimizerPassRow& row = report.rows[i];
    EXPECT_GE(row.peak_id_bound, std::max(row.id_bound, report.rows[i - 1].id_bound)) << row.pass;
    EXPECT_GE(row.probe_runs, 1) << row.pass;
    dropped = dropped || row.peak_id_bound > std::max(row.id_bound, report.rows[i - 1].id_bound);
  }
  EXPECT_TRUE(dropped) << "no pass of the test module allocated and dropped IDs";
  const auto peak = std::max_element(report.rows.begin(), report.rows.end(),
                                     [](auto& a, auto& b) { return a.peak_id_bound < b.peak_id_bound; });
  EXPECT_EQ(report.peak_id_bound, peak->peak_id_bound);
  EXPECT_EQ(report.peak_pass, peak->pass);
  ASSERT_TRUE(peak->peak_exact) << peak->pass;
  // Exactly that bound fits; one less fails in that pass.
  OptimizerOptions tight = per_pass();
  tight.max_id_bound = peak->peak_id_bound;
  EXPECT_FALSE(optimize_spirv(words, tight, "k", "t").report.failure);
  tight.max_id_bound = peak->peak_id_bound - 1;
  const SpirvOptimizerError error = expect_failure(words, tight);
  EXPECT_EQ(error.report().failure->pass_index, peak->index);
  // The error's measured need brackets the row's.
  EXPECT_LT(error.report().failure->need_above, peak->peak_id_bound) << error.what();
  EXPECT_GE(error.report().failure->need_at_most, peak->peak_id_bound) << error.what();
}

TEST(SpirvOptimizer, LowMaxIdBoundFailsClosedNamingThePass) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const OptimizerReport unbounded = optimize_spirv(words, per_pass(), "k", "t").report;
  OptimizerOptions options;
  options.max_id_bound = words[3] + 1;  // slightly above the input's bound
  const auto first_over = std::find_if(unbounded.rows.begin(), unbounded.rows.end(), [&](const OptimizerPassRow& r) {
    return r.peak_id_bound > options.max_id_bound;
  });
  ASSERT_NE(first_over, unbounded.rows.end());
  EXPECT_EQ(first_over->pass, "InlineExhaustive");

  for (const bool measure : {false, true}) {
    options.measure_passes = measure;
    const SpirvOptimizerError error = expect_failure(words, options);
    const std::string what = error.what();
    EXPECT_NE(what.find("kernel 'grad_kernel', task 'task_3'"), std::string::npos) << what;
    EXPECT_NE(what.find("pass InlineExhaustive (4 of 34)"), std::string::npos) << what;
    EXPECT_NE(what.find("maximum ID bound " + std::to_string(options.max_id_bound)), std::string::npos) << what;
    EXPECT_NE(what.find("measured:"), std::string::npos) << what;
    const std::string& remedy = error.diagnostic().remedy;
    const OptimizerReport& report = error.report();
    ASSERT_TRUE(report.failure);
    EXPECT_EQ(report.failure->kind, OptimizerFailureKind::kIdOverflow);
    EXPECT_EQ(report.failure->pass, "InlineExhaustive");
    EXPECT_EQ(report.failure->pass_index, 4);
    EXPECT_EQ(report.failure->id_bound_before, words[3]);
    EXPECT_GE(report.failure->need_above, options.max_id_bound);
    ASSERT_GT(report.failure->need_at_most, report.failure->need_above) << "the need was not measured";
    EXPECT_NE(remedy.find("--max-id-bound"), std::string::npos) << remedy;
    EXPECT_NE(remedy.find(std::to_string(report.failure->need_at_most)), std::string::npos) << remedy;
    EXPECT_NE(remedy.find("shared-array count lowering"), std::string::npos) << remedy;
    EXPECT_NE(remedy.find("--spirv-opt-fallback"), std::string::npos) << remedy;
    EXPECT_EQ(remedy.find("intermediate"), std::string::npos) << remedy;
    EXPECT_EQ(report.rows.size(), measure ? 4u : 1u);  // input (+ the three passes that completed)
    EXPECT_FALSE(report.module_used());
    // The measured need is true: under it the passes up to the failing one run (a later pass may
    // still need more).
    OptimizerOptions raised = options;
    raised.max_id_bound = report.failure->need_at_most;
    try {
      optimize_spirv(words, raised, "k", "t");
    } catch (const SpirvOptimizerError& later) {
      EXPECT_GT(later.report().failure->pass_index, 4) << later.what();
    }
  }
}

TEST(SpirvOptimizer, OverflowLaterInThePipelineNamesLoopUnroll) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const OptimizerReport unbounded = optimize_spirv(words, per_pass(), "k", "t").report;
  OptimizerOptions options = per_pass();
  options.max_id_bound = unbounded.rows[19].id_bound + 3;  // enough for everything before LoopUnroll
  options.intermediate_dce = false;
  const SpirvOptimizerError error = expect_failure(words, options);
  EXPECT_EQ(error.report().failure->pass, "LoopUnroll");
}

TEST(SpirvOptimizer, ErrorIsAUserError) {
  OptimizerOptions options;
  options.max_id_bound = 10;
  EXPECT_THROW(optimize_spirv(assemble(kAdStackShader), options, "k", "t"), UserError);
}

TEST(SpirvOptimizer, InputBoundAboveTheMaximumFailsBeforeAnyPass) {
  OptimizerOptions options;
  options.max_id_bound = 10;
  const SpirvOptimizerError error = expect_failure(assemble(kAdStackShader), options);
  EXPECT_EQ(error.report().failure->pass, "input");
  EXPECT_EQ(error.report().rows.size(), 1u);
  EXPECT_NE(std::string(error.what()).find("already exceeds"), std::string::npos);
}

// SPIRV-Tools gets exactly the bound given and says "ID overflow" through the consumer, once: the
// run stops at the first ID it cannot have, under every bound from the input's up to the need
// (the passes' own overflow paths, which crash, are never reached).
TEST(SpirvOptimizer, EveryBoundBelowTheNeedFailsClosedWithOneMessage) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  const uint32_t need = optimize_spirv(words, per_pass(), "k", "t").report.peak_id_bound;
  for (uint32_t bound = words[3]; bound < need; bound += 3) {
    OptimizerOptions options;
    options.max_id_bound = bound;
    const SpirvOptimizerError error = expect_failure(words, options);
    const OptimizerReport& report = error.report();
    ASSERT_TRUE(report.failure) << bound;
    EXPECT_EQ(report.failure->kind, OptimizerFailureKind::kIdOverflow) << bound << ": " << error.what();
    const auto overflow = std::find_if(report.messages.begin(), report.messages.end(), [](const OptimizerMessage& m) {
      return m.text.find("ID overflow") != std::string::npos;
    });
    ASSERT_NE(overflow, report.messages.end()) << bound;
    EXPECT_EQ(overflow->count, 1u) << bound;
    EXPECT_EQ(overflow->level, "error");
  }
}

TEST(SpirvOptimizer, DistinctMessagesAreCapped) {
  std::vector<OptimizerMessage> messages;
  for (int i = 0; i < 10000; ++i) record_message(messages, "error", "message " + std::to_string(i), "p");
  ASSERT_EQ(messages.size(), kMaxDistinctMessages);
  EXPECT_EQ(messages.back().text, "more distinct messages (not kept)");
  EXPECT_EQ(messages.back().count, 10000u - (kMaxDistinctMessages - 1));
}

TEST(SpirvOptimizer, MaxIdBoundUpToTwoToThe32MinusOne) {
  OptimizerOptions options;
  options.max_id_bound = UINT32_MAX;
  const OptimizeResult result = optimize_spirv(assemble(kAdStackShader), options, "k", "t");
  EXPECT_FALSE(result.report.failure);
  EXPECT_EQ(result.report.options.max_id_bound, UINT32_MAX);
}

// The default bound is the reference compiler's raised one; the module returned must still be
// within SPIR-V's universal limit, or the compile fails closed (also without validation).
TEST(SpirvOptimizer, DefaultBoundIsRaisedButTheResultStaysWithinTheUniversalLimit) {
  EXPECT_EQ(OptimizerOptions{}.max_id_bound, 67108863u);
  EXPECT_EQ(kSpirvUniversalIdBound, 4194303u);
  std::vector<uint32_t> words = assemble(kAdStackShader);
  words[3] = 5000000;  // an input bound above the universal limit, below the optimizer's
  const OptimizeResult compacted = optimize_spirv(words, OptimizerOptions{}, "k", "t");
  EXPECT_LT(compacted.report.final_id_bound, 200u);
  EXPECT_TRUE(compacted.report.valid);
  for (const bool validate : {true, false}) {
    OptimizerOptions options;
    options.compact_ids = false;
    options.validate = validate;
    options.allow_fallback = true;  // the input is over the limit too: nothing to fall back to
    const SpirvOptimizerError error = expect_failure(words, options);
    ASSERT_TRUE(error.report().failure);
    EXPECT_EQ(error.report().failure->kind, OptimizerFailureKind::kInvalidOutput);
    EXPECT_FALSE(error.report().module_used());
    const std::string what = error.what();
    for (const char* needle : {"task 'task_3'", "ID bound 5000", "universal limit", "4194303", "CompactIds",
                               "shared-array", "smaller tasks"})
      EXPECT_NE(what.find(needle), std::string::npos) << needle << " not in: " << what;
  }
}

TEST(SpirvOptimizer, AllowFallbackReturnsTheInputWithAWarning) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  OptimizerOptions options;
  options.max_id_bound = words[3] + 1;
  options.allow_fallback = true;
  const OptimizeResult result = optimize_spirv(words, options, "grad_kernel", "task_3");
  EXPECT_EQ(result.words, words);
  const OptimizerReport& report = result.report;
  EXPECT_TRUE(report.used_fallback);
  EXPECT_TRUE(report.module_used());
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->pass, "InlineExhaustive");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("UNOPTIMIZED"), std::string::npos) << report.warnings[0];
  EXPECT_NE(report.warnings[0].find("task 'task_3'"), std::string::npos) << report.warnings[0];
  EXPECT_EQ(report.final_id_bound, words[3]);
  EXPECT_TRUE(report.validated && report.valid);
}

TEST(SpirvOptimizer, IdenticalMessagesAreCountedOnce) {
  std::vector<OptimizerMessage> messages;
  record_message(messages, "error", "ID overflow. Try running compact-ids.", "LoopUnroll");
  record_message(messages, "error", "ID overflow. Try running compact-ids.", "LoopUnroll");
  record_message(messages, "warning", "ID overflow. Try running compact-ids.", "LoopUnroll");
  record_message(messages, "error", "something else", "CCP");
  record_message(messages, "error", "ID overflow. Try running compact-ids.", "CCP");
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].count, 3u);
  EXPECT_EQ(messages[0].first_pass, "LoopUnroll");
  EXPECT_EQ(messages[1].level, "warning");
  EXPECT_EQ(messages[1].count, 1u);
  EXPECT_EQ(messages[2].text, "something else");
}

TEST(SpirvOptimizer, NotSpirvIsAPlainUserError) {
  const std::vector<uint32_t> words = {1, 2, 3, 4, 5, 6};
  try {
    optimize_spirv(words, {}, "k", "t");
    FAIL() << "no error";
  } catch (const SpirvOptimizerError&) {
    FAIL() << "no report expected for a non-SPIR-V input";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not a SPIR-V module"), std::string::npos) << e.what();
  }
}

// A storage buffer without its Block decoration assembles but breaks Vulkan's rules.
TEST(SpirvOptimizer, InvalidInputIsReportedAsAnEmitterBugEvenWithFallback) {
  std::string text = kAdStackShader;
  const std::string block = "OpDecorate %Buf Block";
  text.erase(text.find(block), block.size());
  OptimizerOptions options;
  options.allow_fallback = true;
  const SpirvOptimizerError error = expect_failure(assemble(text), options);
  EXPECT_EQ(error.report().failure->kind, OptimizerFailureKind::kInvalidOutput);
  EXPECT_FALSE(error.report().module_used());
  EXPECT_NE(std::string(error.what()).find("before optimization"), std::string::npos) << error.what();
}

TEST(SpirvOptimizer, JsonReportSchema) {
  const OptimizeResult result = optimize_spirv(assemble(kAdStackShader), per_pass(), "k", "t");
  const nlohmann::ordered_json json = report_to_json(result.report);
  EXPECT_EQ(json["schema"], "passbench.spirv-opt-report");
  EXPECT_EQ(json["version"], 2);
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "version", "kernel", "task", "options", "passes", "summary",
                                            "failure", "validation", "warnings", "messages"}));
  ASSERT_EQ(json["passes"].size(), 35u);
  const auto& row = json["passes"][20];
  EXPECT_EQ(row["pass"], "LoopUnroll");
  EXPECT_EQ(row["flag"], "--loop-unroll");
  for (const char* key : {"index", "id_bound", "peak_id_bound", "peak_exact", "probe_runs", "instructions", "phis",
                          "function_variables", "bytes", "ms", "changed"})
    EXPECT_TRUE(row.contains(key)) << key;
  EXPECT_EQ(json["options"]["max_id_bound"], kDefaultMaxIdBound);
  EXPECT_EQ(json["options"]["target_env"], "vulkan1.1");
  EXPECT_EQ(json["summary"]["used"], "optimized");
  EXPECT_EQ(json["summary"]["final_id_bound"], result.report.final_id_bound);
  EXPECT_EQ(json["summary"]["live_ids"], result.report.live_ids);
  EXPECT_EQ(json["summary"]["peak_id_bound"], result.report.peak_id_bound);
  EXPECT_TRUE(json["failure"].is_null());
  EXPECT_EQ(json["validation"]["valid"], true);
  EXPECT_EQ(nlohmann::ordered_json::parse(json.dump()), json);
}

TEST(SpirvOptimizer, JsonReportOfAFailure) {
  const std::vector<uint32_t> words = assemble(kAdStackShader);
  OptimizerOptions options;
  options.max_id_bound = words[3] + 1;
  const nlohmann::ordered_json json = report_to_json(expect_failure(words, options).report());
  EXPECT_EQ(json["summary"]["used"], "none");
  EXPECT_TRUE(json["summary"]["final_id_bound"].is_null());
  EXPECT_EQ(json["failure"]["kind"], "id_overflow");
  EXPECT_EQ(json["failure"]["pass"], "InlineExhaustive");
  EXPECT_EQ(json["failure"]["pass_index"], 4);
  EXPECT_EQ(json["failure"]["max_id_bound"], words[3] + 1);
  EXPECT_GE(json["failure"]["need_above"].get<uint32_t>(), words[3] + 1);
  EXPECT_GT(json["failure"]["need_at_most"].get<uint32_t>(), words[3] + 1);
  EXPECT_EQ(json["validation"]["ran"], false);
  EXPECT_TRUE(json["validation"]["valid"].is_null());
}

TEST(SpirvOptimizer, TextTable) {
  const OptimizeResult result = optimize_spirv(assemble(kAdStackShader), per_pass(), "k", "t");
  const std::string table = format_report_table(result.report);
  EXPECT_EQ(table.rfind("SPIR-V optimizer: kernel 'k', task 't' (max ID bound 67108863)\n", 0), 0u) << table;
  EXPECT_NE(table.find("id bound"), std::string::npos);
  EXPECT_NE(table.find(" 34  CompactIds"), std::string::npos) << table;
  EXPECT_NE(table.find("(unchanged)"), std::string::npos) << table;
  EXPECT_NE(table.find("spirv-val (vulkan1.1): valid"), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 1 + 1 + 35 + 1 + 1);

  OptimizerOptions options;
  options.max_id_bound = result.report.rows[0].id_bound + 1;
  options.allow_fallback = true;
  const std::string failed =
      format_report_table(optimize_spirv(assemble(kAdStackShader), per_pass(options), "k", "t").report);
  EXPECT_NE(failed.find("  4  InlineExhaustive               FAILED: id_overflow"), std::string::npos) << failed;
  EXPECT_NE(failed.find("UNOPTIMIZED input (fallback)"), std::string::npos) << failed;
  EXPECT_NE(failed.find("WARNING: SPIR-V optimizer fallback"), std::string::npos) << failed;
}

}  // namespace
}  // namespace pb::codegen::spirv
