#include "passes/autodiff/check_global_access.h"

#include <fmt/format.h>

#include <optional>
#include <span>
#include <unordered_map>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "passes/autodiff/ad_support.h"
#include "passes/autodiff/global_access_findings.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/autodiff/write_after_read.h"

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

// The closed range of values an index expression takes over every iteration, when it is provably
// bounded: a constant, the index of a loop with constant bounds (or of a struct for over a
// declared shape), and those plus or minus a constant.
struct IndexRange {
  int64_t lo, hi;
};

std::optional<IndexRange> constant_of(const Stmt* s) {
  auto* c = dyn_cast<ConstStmt>(s);
  if (!c || !is_integral(c->value.kind())) return std::nullopt;
  return IndexRange{c->value.as_i64(), c->value.as_i64()};
}

std::optional<IndexRange> index_range(const Kernel& k, const Stmt* s, int depth = 0) {
  if (!s || depth > 8) return std::nullopt;
  if (auto c = constant_of(s)) return c;
  if (auto* li = dyn_cast<LoopIndexStmt>(s)) {
    if (auto* f = dyn_cast<RangeForStmt>(li->loop())) {
      auto b = constant_of(f->begin()), e = constant_of(f->end());
      if (!b || !e) return std::nullopt;
      if (e->lo <= b->lo) return IndexRange{b->lo, b->lo - 1};  // no iteration: an empty range
      return IndexRange{b->lo, e->lo - 1};
    }
    if (auto* sf = dyn_cast<StructForStmt>(li->loop())) {
      const Shape* shape = nullptr;
      if (const IndexSpace* sp = k.find_space(sf->space); sp && sp->shape) shape = &*sp->shape;
      if (auto f = k.find_field(sf->space); !shape && f)
        if (const auto& field_shape = k.field(*f).shape) shape = &*field_shape;
      if (!shape || static_cast<size_t>(li->axis) >= shape->size()) return std::nullopt;
      return IndexRange{0, (*shape)[static_cast<size_t>(li->axis)] - 1};
    }
    return std::nullopt;
  }
  if (auto* b = dyn_cast<BinaryOpStmt>(s); b && (b->op == BinaryOp::add || b->op == BinaryOp::sub)) {
    auto l = index_range(k, b->lhs(), depth + 1), r = index_range(k, b->rhs(), depth + 1);
    if (!l || !r) return std::nullopt;
    if (b->op == BinaryOp::add) return IndexRange{l->lo + r->lo, l->hi + r->hi};
    return IndexRange{l->lo - r->hi, l->hi - r->lo};
  }
  return std::nullopt;
}

bool provably_disjoint(const Kernel& k, const Stmt* a, const Stmt* b) {
  auto x = index_range(k, a), y = index_range(k, b);
  return x && y && (x->hi < y->lo || y->hi < x->lo);
}

// What a differentiable pointer addresses, as one key per field or ndarray argument; nullopt
// for anything else (gradients, locals, ndarrays of unknown origin).
std::optional<std::pair<int, int64_t>> target_of(const Kernel& k, const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr); g && is_differentiable_field(k, g->field)) return std::pair{0, g->field};
  if (auto* e = dyn_cast<ExternalPtrStmt>(ptr); e && is_differentiable_ptr(k, e))
    if (auto* a = dyn_cast<ArgLoadStmt>(e->base())) return std::pair{1, static_cast<int64_t>(a->arg_index)};
  return std::nullopt;
}

std::span<Stmt* const> indices_of(const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return g->indices();
  return static_cast<const ExternalPtrStmt*>(ptr)->indices();
}

std::string target_name(const Kernel& k, const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return fmt::format("field '{}'", k.field(g->field).name);
  return fmt::format("ndarray argument {}",
                     static_cast<const ArgLoadStmt*>(static_cast<const ExternalPtrStmt*>(ptr)->base())->arg_index);
}

// Global accesses of the loop body, not entering nested loops.
void collect(const Block& b, std::vector<const Stmt*>& loads, std::vector<const Stmt*>& stores) {
  for (const Stmt* s : b) {
    if (isa<GlobalLoadStmt>(s)) loads.push_back(s);
    if (isa<GlobalStoreStmt>(s)) stores.push_back(s);
    if (is_loop(s)) continue;
    if (s->is_container())
      for (const Block* child : s->blocks())
        if (child) collect(*child, loads, stores);
  }
}

}  // namespace

PassInfo CheckGlobalAccessPass::info() {
  return declare_pass<CheckGlobalAccessPass>(
      {.name = "check_global_access",
       .summary = "The global data access rule: refuses what breaks reverse mode, reports every element written after "
                  "it was read",
       .options =
           {{.name = "findings",
             .type = OptionType::String,
             .default_value = "error",
             .help = "a proven finding of the reference's rule (an element written after it was read): error refuses "
                     "the kernel, warn reports it as a warning (what reverse mode cannot handle is refused either way)",
             .choices = {"error", "warn"}}},
       .statistics = {"pairs_checked", "findings", "proven", "maybe"},
       .create = {}});
}

PassResult CheckGlobalAccessPass::run(Kernel& k, const PassOptions& options) {
  if (const Stmt* s = ad::first_offloaded_stage_stmt(k))
    throw UserError(fmt::format("{}: `{}`", ad::kOffloadedStageMessage, print_stmt(*s, k)), ad::kOffloadedStageRemedy);
  if (const Stmt* s = ad::first_no_backend_stmt(k))
    throw UserError(fmt::format("{}: `{}`", ad::kNoBackendMessage, print_stmt(*s, k)), ad::kNoBackendRemedy);
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
      const Stmt* sp = static_cast<const GlobalStoreStmt*>(st)->dest();
      auto written = target_of(k, sp);
      if (!written) continue;
      for (const Stmt* ld : loads) {
        const Stmt* lp = static_cast<const GlobalLoadStmt*>(ld)->src();
        if (target_of(k, lp) != written) continue;
        ++pairs;
        auto si_all = indices_of(sp), li_all = indices_of(lp);
        bool disjoint = false;
        for (size_t axis = 0; axis < si_all.size() && axis < li_all.size() && !disjoint; ++axis)
          disjoint = provably_disjoint(k, si_all[axis], li_all[axis]);
        if (disjoint) continue;
        for (size_t axis = 0; axis < si_all.size() && axis < li_all.size(); ++axis) {
          const Stmt* si = si_all[axis];
          const Stmt* li = li_all[axis];
          bool sd = depends_on_index(si, loop, memo), ld_dep = depends_on_index(li, loop, memo);
          bool conflict = (sd && ld_dep && si != li) || (sd != ld_dep);
          if (!conflict) continue;
          throw RuleViolation(
              fmt::format("{} is written at one index and read at another in the same loop (axis {}): "
                          "the reverse pass would read values the forward pass overwrote\n  write: `{}` through `{}`\n "
                          " read:  `{}` through `{}`",
                          target_name(k, sp), axis, print_stmt(*st, k), print_stmt(*sp, k), print_stmt(*ld, k),
                          print_stmt(*lp, k)),
              "read and write the element at the same index expression, or write the result to a separate field");
        }
      }
    }
  }
  auto disjoint = [&](const Stmt* a, const Stmt* b) { return provably_disjoint(k, a, b); };
  try {
    check_write_after_read(k, disjoint);
  } catch (const UserError& e) {
    throw RuleViolation(e.diagnostic());
  }
  auto findings = find_global_access_conflicts(k, disjoint);
  auto overwrites = find_overwrites(k, disjoint);
  // Printing the kernel for the findings' lines costs more than the whole check: only with findings.
  std::unordered_map<int, int> lines;
  if (!findings.empty() || !overwrites.empty()) lines = statement_lines(k);
  // A proven overwrite has no right gradient on a parallel backend: refused with either setting.
  std::string overwritten;
  for (const auto& f : overwrites) {
    std::string text = describe_overwrite(k, f, lines);
    if (f.proven) overwritten += (overwritten.empty() ? "" : "\n") + text;
  }
  if (!overwritten.empty()) throw RuleViolation("global data access rule: " + overwritten, kOverwriteRemedy);
  PassResult result{false, {{"pairs_checked", pairs}, {"findings", 0}, {"proven", 0}, {"maybe", 0}}};
  const bool refuse = options.get_string("findings") == "error";
  std::string proven;
  for (const auto& f : findings) {
    ++result.stats["findings"];
    ++result.stats[f.same_element ? "proven" : "maybe"];
    std::string text = describe_finding(k, f, lines);
    result.notes.push_back(text);
    if (f.same_element && refuse)
      proven += (proven.empty() ? "" : "\n") + text;
    else
      result.warnings.push_back("global data access rule: " + text);
  }
  for (const auto& f : overwrites) {
    ++result.stats["findings"];
    ++result.stats["maybe"];
    std::string text = describe_overwrite(k, f, lines);
    result.notes.push_back(text);
    result.warnings.push_back(fmt::format("global data access rule: {}\n  fix: {}", text, kOverwriteRemedy));
  }
  if (!proven.empty())
    throw RuleViolation("global data access rule: " + proven,
                        "the fix above; or, where reverse mode's own gradient is wanted (it does not need the value "
                        "read), reverse_ad{global_access=warn} (check_global_access{findings=warn}; `run --grad` and "
                        "`gradcheck` take --global-access=warn) makes this a warning");
  return result;
}

}  // namespace pb::passes
