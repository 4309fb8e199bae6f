// Every pass and named pipeline passbench knows. The built-in set is built once, at first use,
// from each pass's own declaration (its info()), and never changes afterwards: a PassInfo* or
// NamedPipelineInfo* it hands out (parsed pipelines keep them) stays valid for the program's life.
// Tests that need passes of their own (a deliberately broken pass) declare them in a
// ScopedRegistry, whose passes lookups find while it lives.
#pragma once

#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace pb::passes {

// The built-in passes and named pipelines, in listing order.
const std::vector<PassInfo>& all_passes();
const std::vector<NamedPipelineInfo>& all_named_pipelines();
// A built-in or scoped pass or pipeline by name; nullptr when there is none.
const PassInfo* find_pass(std::string_view name);
const NamedPipelineInfo* find_named_pipeline(std::string_view name);

// Extra passes and pipelines, fixed at construction, that lookups find (after the built-in ones)
// until it is destroyed; pointers to them stay valid as long. Scopes may nest and must end in
// reverse order of construction; a name may not repeat one already known. Construct and destroy
// scopes while no other thread is looking passes up.
class ScopedRegistry {
 public:
  explicit ScopedRegistry(std::vector<PassInfo> passes, std::vector<NamedPipelineInfo> pipelines = {});
  ~ScopedRegistry();
  ScopedRegistry(const ScopedRegistry&) = delete;
  ScopedRegistry& operator=(const ScopedRegistry&) = delete;

 private:
  friend const PassInfo* find_pass(std::string_view name);
  friend const NamedPipelineInfo* find_named_pipeline(std::string_view name);
  const std::vector<PassInfo> passes_;
  const std::vector<NamedPipelineInfo> pipelines_;
};

}  // namespace pb::passes
