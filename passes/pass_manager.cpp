#include "passes/pass_manager.h"

#include <fmt/format.h>

#include <chrono>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/type_uses.h"
#include "ir/verifier.h"

namespace pb::passes {

namespace {
std::string remaining(const Pipeline& p, size_t from) {
  std::string out;
  for (size_t i = from; i < p.entries.size(); ++i) {
    if (i > from) out += ',';
    out += p.entries[i].to_string();
  }
  return out;
}
}  // namespace

PipelineRun run_pipeline(ir::Kernel& k, const Pipeline& pipeline, const RunOptions& opts) {
  PipelineRun run;
  bool stopping = false;
  size_t current_count = k.count_statements();
  std::shared_ptr<const ir::Kernel> current_snapshot;
  std::string current_text;
  if (opts.capture_ir) {
    current_snapshot = k.clone();
    current_text = ir::print_kernel(k);
  }
  for (size_t i = 0; i < pipeline.entries.size(); ++i) {
    const PipelineEntry& entry = pipeline.entries[i];
    PassRecord rec;
    rec.index = i;
    rec.pass = entry.info->name;
    rec.spec = entry.to_string();
    rec.statements_before = current_count;
    bool over_limit = opts.bisect_limit >= 0 && static_cast<int64_t>(i) >= opts.bisect_limit;
    if (stopping || over_limit) {
      rec.statements_after = current_count;
      run.records.push_back(std::move(rec));
      continue;
    }
    rec.ran = true;
    rec.before = current_snapshot;
    rec.before_text = current_text;
    auto pass = entry.info->create();
    auto t0 = std::chrono::steady_clock::now();
    try {
      if (!entry.info->takes_tensors)
        if (auto use = ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); }))
          throw UserError(
              fmt::format("{} runs on scalar kernels, and this one uses a tensor type: {}", rec.pass, *use),
              "put the scalarize pass first in the pipeline: `scalarize,reverse_ad`, `scalarize,forward_ad`, "
              "`scalarize,check_global_access`");
      PassResult r = pass->run(k, entry.options);
      rec.changed = r.changed;
      rec.stats = std::move(r.stats);
      rec.notes = std::move(r.notes);
      rec.warnings = std::move(r.warnings);
    } catch (const UserError& e) {
      rec.failure =
          e.diagnostic().message + (e.diagnostic().remedy.empty() ? "" : "\n  remedy: " + e.diagnostic().remedy);
      rec.rule_violation = dynamic_cast<const RuleViolation*>(&e) != nullptr;
    } catch (const InternalError& e) {
      rec.failure = e.what();
      rec.internal_error = true;
    } catch (const std::exception& e) {
      rec.failure = std::string("unexpected exception: ") + e.what();
      rec.internal_error = true;
    }
    rec.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    run.total_ms += rec.wall_ms;
    if (rec.failure.empty() && opts.verify_each) {
      ir::VerifyOptions vo;
      vo.dominance = !entry.info->may_break_dominance;
      for (const auto& e : ir::verify(k, vo)) rec.verify_errors.push_back(e.format());
      if (!rec.verify_errors.empty())
        rec.failure = "the pass produced IR the verifier rejects: " + rec.verify_errors.front();
    }
    rec.statements_after = current_count = k.count_statements();
    if (opts.capture_ir) {
      current_text = ir::print_kernel(k);
      current_snapshot = k.clone();
      rec.after = current_snapshot;
      rec.after_text = current_text;
    }
    bool failed = !rec.failure.empty();
    run.records.push_back(std::move(rec));
    if (failed) {
      run.failed = true;
      run.failed_index = i;
      run.remaining_pipeline = remaining(pipeline, i);
      break;
    }
    if (!opts.stop_after.empty() && entry.info->name == opts.stop_after) stopping = true;
  }
  return run;
}

}  // namespace pb::passes
