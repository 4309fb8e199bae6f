#include "workbench/cli/bisect_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "ir/diagnostic.h"
#include "workbench/workspace/load.h"
#include "workbench/workspace/workspace.h"

namespace pb::cli {

int cmd_bisect_result(const BisectArgs& a) {
  workbench::Workspace ws;
  ws.open(a.file, a.dump);
  if (const auto& error = ws.source_error()) throw UserError(*error);
  if (!a.passes.empty()) ws.set_pipeline(a.passes);
  if (!a.inputs.empty()) ws.set_inputs(workbench::parse_json_text(workbench::read_file(a.inputs), a.inputs), a.inputs);
  ws.set_bisect_tolerance({a.rel, a.abs});
  const workbench::ReplayRecords& replayed = ws.replay();
  if (replayed.error) throw UserError(*replayed.error);
  const workbench::BisectResult& b = ws.bisect();
  if (b.error && b.rows.empty()) throw UserError(*b.error);

  size_t width = 4;
  for (const auto& row : b.rows) width = std::max(width, row.pass.size());
  std::cout << fmt::format("  {:>3}  {:<{}}  {:<9}  {:>8}  {:>9}  {}\n", "#", "pass", width, "verdict", "compared",
                           "differing", "first difference");
  for (const auto& row : b.rows) {
    bool first = b.first_differing && *b.first_differing == row.index;
    std::string verdict = !row.ran ? "not run" : first ? "CHANGED" : row.differs() ? "differs" : "same";
    std::cout << fmt::format("  {:>3}  {:<{}}  {:<9}  {:>8}  {:>9}  {}\n", row.index + 1, row.pass, width, verdict,
                             row.compared, row.differing, row.error.empty() ? row.first_difference : row.error);
  }
  const auto& run = replayed.run;
  if (run.failed) {
    const auto& rec = run.records[run.failed_index];
    std::cout << fmt::format("pass {} ({}) failed, the passes after it did not run: {}\n", rec.index + 1, rec.spec,
                             rec.failure.substr(0, rec.failure.find('\n')));
  }
  if (b.first_differing) {
    const auto& row = b.rows[*b.first_differing];
    std::cout << fmt::format("first pass that changed the answer: {}. {} ({})\n", row.index + 1, row.pass,
                             row.error.empty() ? row.first_difference : row.error);
    return 1;
  }
  if (b.error) throw UserError(*b.error);
  std::cout << fmt::format("no pass changed the answer ({} passes, tolerance rel {:g}, abs {:g})\n", b.rows.size(),
                           a.rel, a.abs);
  return run.failed ? 1 : 0;
}

}  // namespace pb::cli
