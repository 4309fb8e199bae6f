// Internal to codegen/spirv: which autodiff stacks of a task can share one count (the
// shared-array count lowering, docs/codegen-spirv.md).
//
// The task's statements are cut into segments: maximal runs of statements of one block with no
// control statement between them (is_segment_boundary). Within a segment the emitter keeps each
// count as the stored count at the segment's start plus a compile-time offset and stores the
// count once, at the segment's end. Stacks share a stored count when their counts differ by a
// constant (each stack's bias) at every segment end: in every segment they are allocated or not
// alike, a segment that does not allocate them changes their counts alike, and one that does
// leaves count - bias alike; what the segment after which the counts are dead leaves does not
// matter. A stack used before its own alloc in a segment that allocates it keeps a count of its own.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/statements.h"

namespace pb::codegen::spirv::detail {

// A statement that ends a segment: one with blocks (if, loops), `while control`, `continue`.
bool is_segment_boundary(const ir::Stmt& s);

struct CountGroups {
  std::vector<uint32_t> group_of;  // per stack (its position in `stacks`): its group, numbered by first stack
  std::vector<int64_t> bias;       // per stack: its count minus the group's stored count, at segment ends
  // Per group: a statement after whose segment the group's count is dead (nothing reads it before
  // the next alloc), or null.
  std::vector<const ir::Stmt*> last_use;
  uint32_t groups = 0;
};

// `body`: the task's statements in emission order (a parallel task: the loop's body; a serial
// task: its roots). Statements after a `continue` in the same block are dead and ignored.
CountGroups plan_count_groups(std::span<const ir::AdStackAllocaStmt* const> stacks,
                              std::span<const ir::Stmt* const> body);

}  // namespace pb::codegen::spirv::detail
