#include "passes/autodiff/check_global_raw.h"

#include <fmt/format.h>

#include <unordered_map>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "passes/autodiff/independent_blocks.h"

namespace pb::passes {

using namespace ir;

namespace {

// Whether `s` depends on `loop`'s index through unary, binary and select operations.
bool depends_on_index(const Stmt* s, const Stmt* loop, std::unordered_map<const Stmt*, bool>& memo) {
  if (!s) return false;
  if (auto it = memo.find(s); it != memo.end()) return it->second;
  bool d = false;
  if (auto* li = dyn_cast<LoopIndexStmt>(s))
    d = li->loop() == loop;
  else if (isa<UnaryOpStmt>(s) || isa<BinaryOpStmt>(s) || isa<TernaryOpStmt>(s))
    for (const Stmt* op : s->operands()) d = d || depends_on_index(op, loop, memo);
  memo[s] = d;
  return d;
}

// Global accesses of the loop body, not entering nested loops.
void collect(const Block& b, std::vector<const Stmt*>& loads, std::vector<const Stmt*>& stores) {
  for (const Stmt* s : b) {
    if (isa<GlobalLoadStmt>(s)) loads.push_back(s);
    if (isa<GlobalStoreStmt>(s)) stores.push_back(s);
    if (isa<RangeForStmt>(s) || isa<StructForStmt>(s) || isa<WhileStmt>(s)) continue;
    if (s->is_container())
      for (const Block* child : s->blocks())
        if (child) collect(*child, loads, stores);
  }
}

}  // namespace

PassInfo CheckGlobalRawPass::info() {
  return declare_pass<CheckGlobalRawPass>(
      {.name = "check_global_raw",
       .summary = "Rejects reading a differentiable field at another index of the loop that writes it",
       .options = {},
       .statistics = {"pairs_checked"},
       .create = {}});
}

PassResult CheckGlobalRawPass::run(Kernel& k, const PassOptions&) {
  int64_t pairs = 0;
  for (Stmt* top : k.root()) {
    // Struct fors too (the reference checks range fors only, and a struct for's RAW
    // violation then gives a silently wrong gradient).
    if (!isa<RangeForStmt>(top) && !isa<StructForStmt>(top)) continue;
    const Stmt* loop = top;
    std::vector<const Stmt*> loads, stores;
    collect(*top->blocks()[0], loads, stores);
    std::unordered_map<const Stmt*, bool> memo;
    for (const Stmt* st : stores) {
      auto* sp = dyn_cast<GlobalPtrStmt>(static_cast<const GlobalStoreStmt*>(st)->dest());
      if (!sp || !is_differentiable_field(k, sp->field)) continue;
      for (const Stmt* ld : loads) {
        auto* lp = dyn_cast<GlobalPtrStmt>(static_cast<const GlobalLoadStmt*>(ld)->src());
        if (!lp || lp->field != sp->field) continue;
        ++pairs;
        for (size_t axis = 0; axis < sp->indices().size() && axis < lp->indices().size(); ++axis) {
          const Stmt* si = sp->indices()[axis];
          const Stmt* li = lp->indices()[axis];
          bool sd = depends_on_index(si, loop, memo), ld_dep = depends_on_index(li, loop, memo);
          bool conflict = (sd && ld_dep && si != li) || (sd != ld_dep);
          if (!conflict) continue;
          throw UserError(
              fmt::format("field '{}' is written at one index and read at another in the same loop (axis {}): "
                          "the reverse pass would read values the forward pass overwrote\n  write: `{}` through `{}`\n "
                          " read:  `{}` through `{}`",
                          k.field(sp->field).name, axis, print_stmt(*st, k), print_stmt(*sp, k), print_stmt(*ld, k),
                          print_stmt(*lp, k)),
              "read and write the field at the same index expression, or write the result to a separate field");
        }
      }
    }
  }
  return {false, {{"pairs_checked", pairs}}};
}

}  // namespace pb::passes
