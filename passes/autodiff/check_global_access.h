// check_global_access: the global data access rule of reverse mode, checked before differentiating.
//
// Refuses (a UserError naming both statements and the fix) what makes reverse mode silently wrong:
//  - cross-iteration read-after-write: in a top-level range-for or struct-for body, a differentiable
//    field or ndarray stored at one index and loaded at another index of the same loop
//    (out[i] = out[i-1] + x). A pair is fine when, on some axis, the index ranges are disjoint
//    (constants, loop indices over constant ranges, plus or minus constants); otherwise, per axis:
//    both indices depend on the loop index -> the same statement; exactly one -> conflict. Loads
//    and stores inside nested loops are not compared.
//  - the write-after-read rule of passes/autodiff/write_after_read.h: a read whose value the reverse
//    kernel needs, followed by a write that may touch its element.
// Every element the reference's rule flags (read, then written, in one launch:
// passes/autodiff/global_access_findings.h) is a note and a statistic, with the read, the write,
// their lines and the fix. A proven finding (the same element) is refused too, every one named,
// unless findings=warn makes it a warning; a finding the check cannot prove or rule out ("maybe")
// is a warning. Refusals are RuleViolations (a check failed). Changes nothing.
#pragma once

#include "passes/pass.h"

namespace pb::passes {

class CheckGlobalAccessPass final : public Pass {
 public:
  static PassInfo info();
  PassResult run(ir::Kernel& k, const PassOptions& options) override;
};

}  // namespace pb::passes
