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

// Runs one entry on `k`, filling the record's outcome (changed, statistics, failure); never throws.
// `scalar`: the kernel is known to use no tensor type (checked before, and only scalar passes ran
// since), so the check is skipped; kept up to date.
void run_entry(ir::Kernel& k, const PipelineEntry& entry, PassRecord& rec, bool& scalar) {
  auto pass = entry.info->create();
  try {
    if (!entry.info->takes_tensors && !scalar)
      if (auto use = ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); }))
        throw UserError(fmt::format("{} runs on scalar kernels, and this one uses a tensor type: {}", rec.pass, *use),
                        "put the scalarize pass first in the pipeline: `scalarize,reverse_ad`, `scalarize,forward_ad`, "
                        "`scalarize,check_global_access`");
    scalar = !entry.info->takes_tensors;
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
}

void snapshot(const ir::Kernel& k, std::shared_ptr<const ir::Kernel>& kernel, std::string& text) {
  kernel = k.clone();
  text = ir::print_kernel(k);
}

// Capture::failure: the IR before and after the failing pass, from the input, by running the
// passes before it again (passes are deterministic) and then the failing one.
void recapture(std::unique_ptr<ir::Kernel> k, const Pipeline& pipeline, PassRecord& failed) {
  bool scalar = false;
  for (size_t i = 0; i < failed.index; ++i) {
    PassRecord scratch;
    scratch.pass = pipeline.entries[i].info->name;
    run_entry(*k, pipeline.entries[i], scratch, scalar);
    PB_ASSERT(scratch.failure.empty(), "a pass that succeeded failed when run again: " + scratch.pass);
  }
  snapshot(*k, failed.before, failed.before_text);
  PassRecord again;
  again.pass = failed.pass;
  run_entry(*k, pipeline.entries[failed.index], again, scalar);
  snapshot(*k, failed.after, failed.after_text);
}

// Whether entry i is the last of its group to run (a named pipeline's passes share a group).
bool ends_group(const Pipeline& p, size_t i, int64_t runs_up_to) {
  return i + 1 == p.entries.size() || p.entries[i + 1].group != p.entries[i].group ||
         (runs_up_to >= 0 && static_cast<int64_t>(i) + 1 >= runs_up_to);
}

bool has_groups(const Pipeline& p) {
  for (size_t i = 1; i < p.entries.size(); ++i)
    if (p.entries[i].group == p.entries[i - 1].group) return true;
  return false;
}

}  // namespace

PipelineRun run_pipeline(ir::Kernel& k, const Pipeline& pipeline, const RunOptions& opts) {
  PipelineRun run;
  bool stopping = false;
  size_t current_count = k.count_statements();
  const bool every_pass = opts.capture == Capture::all;
  // Verified once per group: a failure inside one is traced to its pass by running again.
  const bool traced = opts.verify_each && !opts.verify_expanded && has_groups(pipeline);
  std::shared_ptr<const ir::Kernel> current_snapshot;
  std::string current_text;
  std::unique_ptr<ir::Kernel> input;  // a copy, unless opts.rebuild_input makes it again on failure
  if (every_pass) snapshot(k, current_snapshot, current_text);
  const bool needs_input = opts.capture == Capture::failure || traced;
  if (needs_input && !opts.rebuild_input) input = k.clone();
  auto take_input = [&] { return opts.rebuild_input ? opts.rebuild_input() : std::move(input); };
  bool scalar = false;
  size_t unverified = 0;  // passes run since the last verification
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
    auto t0 = std::chrono::steady_clock::now();
    run_entry(k, entry, rec, scalar);
    rec.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    run.total_ms += rec.wall_ms;
    bool stops_here = !opts.stop_after.empty() && entry.info->name == opts.stop_after;
    size_t since_verified = ++unverified;
    if (rec.failure.empty() && opts.verify_each &&
        (opts.verify_expanded || stops_here || ends_group(pipeline, i, opts.bisect_limit))) {
      ir::VerifyOptions vo;
      vo.dominance = !entry.info->may_break_dominance;
      for (const auto& e : ir::verify(k, vo)) rec.verify_errors.push_back(e.format());
      if (!rec.verify_errors.empty())
        rec.failure = "the pass produced IR the verifier rejects: " + rec.verify_errors.front();
      unverified = 0;
    }
    rec.statements_after = current_count = k.count_statements();
    if (every_pass) {
      snapshot(k, current_snapshot, current_text);
      rec.after = current_snapshot;
      rec.after_text = current_text;
    }
    bool failed = !rec.failure.empty();
    if (failed && traced && since_verified > 1) {
      // Unverified passes ran before this one: the first pass whose output does not verify may
      // be one of them. Run again, verifying after every pass.
      RunOptions exact = opts;
      exact.verify_expanded = true;
      std::unique_ptr<ir::Kernel> copy = take_input();
      PipelineRun again = run_pipeline(*copy, pipeline, exact);
      if (again.failed) {
        k = std::move(*copy);
        return again;
      }
    }
    if (failed && opts.capture == Capture::failure)
      if (std::unique_ptr<ir::Kernel> copy = take_input()) recapture(std::move(copy), pipeline, rec);
    run.records.push_back(std::move(rec));
    if (failed) {
      run.failed = true;
      run.failed_index = i;
      run.remaining_pipeline = remaining(pipeline, i);
      break;
    }
    if (stops_here) stopping = true;
  }
  return run;
}

}  // namespace pb::passes
