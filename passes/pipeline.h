// Textual pipelines: `simplify,dce`, options in braces `make_adjoint{use_stack=true,ad_stack_size=0}`,
// and named pipelines (`reverse_ad{use_stack=false}`) that expand to a list. The same syntax is
// used by the command line, fixtures and crash reproducers, and to_string prints it back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace pb::passes {

struct PipelineEntry {
  const PassInfo* info = nullptr;
  PassOptions options;                        // every declared option, defaults filled in
  std::vector<std::string> explicit_options;  // the ones the text set, in order (for printing)
  size_t group = 0;                           // the entry as written it comes from (a named pipeline expands)
  std::string to_string() const;              // `name` or `name{a=1,b=true}`
};

struct Pipeline {
  std::vector<PipelineEntry> entries;
  std::string to_string() const;  // entries joined by ','
};

// Throws UserError (usage error) with the column in `text`, the nearest known name, and the list
// of what exists. `source` names where the text came from ("--passes").
Pipeline parse_pipeline(std::string_view text, const std::string& source = "--passes");

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace pb::passes
