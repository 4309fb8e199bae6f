#include "passes/autodiff/global_access_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/autodiff/write_after_read.h"

namespace pb::passes {

using namespace ir;

namespace {

using ArrayKey = std::pair<int, int64_t>;  // (0, field id) or (1, ndarray argument index)

std::optional<ArrayKey> differentiable_array(const Kernel& k, const Stmt* ptr) {
  if (!is_differentiable_ptr(k, ptr)) return std::nullopt;
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return ArrayKey{0, g->field};
  if (auto* a = dyn_cast<ArgLoadStmt>(static_cast<const ExternalPtrStmt*>(ptr)->base()))
    return ArrayKey{1, a->arg_index};
  return std::nullopt;
}

std::span<Stmt* const> indices_of(const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return g->indices();
  return static_cast<const ExternalPtrStmt*>(ptr)->indices();
}

const Stmt* top_level_of(const Stmt* s) {
  while (s->parent() && s->parent()->owner()) s = s->parent()->owner();
  return s;
}

// The loop axis `index` is injective in (the loop's index on that axis, plus or minus constants),
// or -1.
int injective_axis(const Stmt* index, const Stmt* loop, int depth = 0) {
  if (depth > 8) return -1;
  if (auto* li = dyn_cast<LoopIndexStmt>(index)) return li->loop() == loop ? li->axis : -1;
  if (auto* b = dyn_cast<BinaryOpStmt>(index); b && (b->op == BinaryOp::add || b->op == BinaryOp::sub)) {
    if (isa<ConstStmt>(b->rhs())) return injective_axis(b->lhs(), loop, depth + 1);
    if (b->op == BinaryOp::add && isa<ConstStmt>(b->lhs())) return injective_axis(b->rhs(), loop, depth + 1);
  }
  return -1;
}

size_t loop_axes(const Kernel& k, const Stmt* loop) {
  auto* sf = dyn_cast<StructForStmt>(loop);
  if (!sf) return 1;
  if (const IndexSpace* sp = k.find_space(sf->space); sp && sp->shape) return sp->shape->size();
  if (auto f = k.find_field(sf->space))
    if (const auto& shape = k.field(*f).shape) return shape->size();
  return SIZE_MAX;  // unknown: never proven apart
}

// Whether two accesses through `rp` and `wp` inside top-level loop `loop` can only meet on the
// same element in the same iteration.
bool iterations_apart(const Kernel& k, const Stmt* loop, std::span<Stmt* const> ri, std::span<Stmt* const> wi) {
  std::set<int> covered;
  for (size_t a = 0; a < ri.size() && a < wi.size(); ++a)
    if (ri[a] == wi[a])
      if (int axis = injective_axis(ri[a], loop); axis >= 0) covered.insert(axis);
  return covered.size() >= loop_axes(k, loop);
}

std::string array_name(const Kernel& k, const Stmt* ptr) {
  if (auto* g = dyn_cast<GlobalPtrStmt>(ptr)) return fmt::format("field '{}'", k.field(g->field).name);
  auto* a = dyn_cast<ArgLoadStmt>(static_cast<const ExternalPtrStmt*>(ptr)->base());
  return fmt::format("ndarray argument {}", a ? a->arg_index : -1);
}

}  // namespace

std::vector<GlobalAccessFinding> find_global_access_conflicts(
    const Kernel& k, const std::function<bool(const Stmt*, const Stmt*)>& disjoint) {
  std::map<ArrayKey, std::vector<const Stmt*>> reads, writes;
  std::unordered_map<const Stmt*, size_t> order;
  for (const Stmt* s : collect_preorder(k.root())) {
    order.emplace(s, order.size());
    if (auto* ld = dyn_cast<GlobalLoadStmt>(s)) {
      if (auto key = differentiable_array(k, ld->src())) reads[*key].push_back(s);
    } else if (auto* st = dyn_cast<GlobalStoreStmt>(s)) {
      if (auto key = differentiable_array(k, st->dest())) writes[*key].push_back(s);
    } else if (auto* at = dyn_cast<AtomicOpStmt>(s)) {
      if (auto key = differentiable_array(k, at->dest())) writes[*key].push_back(s);
    }
  }
  std::vector<GlobalAccessFinding> out;
  for (const auto& [key, rs] : reads) {
    auto ws = writes.find(key);
    if (ws == writes.end()) continue;
    for (const Stmt* read : rs) {
      auto ri = indices_of(read->operand(0));
      for (const Stmt* write : ws->second) {
        auto wi = indices_of(write->operand(0));
        bool apart = false;
        for (size_t a = 0; a < ri.size() && a < wi.size(); ++a) apart = apart || disjoint(ri[a], wi[a]);
        if (apart) continue;
        GlobalAccessFinding f{read, write, false, true};
        bool later = may_run_after(read, write, order);
        const Stmt* top = top_level_of(read);
        bool across = !later && top == top_level_of(write) && is_loop(top) && !iterations_apart(k, top, ri, wi);
        if (!later && !across) continue;
        f.same_iteration = later;
        f.same_element = later && std::equal(ri.begin(), ri.end(), wi.begin(), wi.end());
        out.push_back(f);
      }
    }
  }
  return out;
}

std::unordered_map<int, int> statement_lines(const Kernel& k) {
  std::unordered_map<int, int> lines;
  std::string text = print_kernel(k);
  int line = 1;
  for (size_t at = 0; at < text.size(); ++line) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    size_t p = text.find_first_not_of(' ', at);
    if (p < end && text[p] == '<') p = text.find("> ", p) + 2;  // the type hint
    if (p < end && text[p] == '$') {
      int id = 0;
      for (size_t q = p + 1; q < end && text[q] >= '0' && text[q] <= '9'; ++q) id = id * 10 + (text[q] - '0');
      lines.emplace(id, line);
    }
    at = end + 1;
  }
  return lines;
}

std::string describe_finding(const Kernel& k, const GlobalAccessFinding& f, const std::unordered_map<int, int>& lines) {
  auto line_of = [&](const Stmt* s) {
    auto it = lines.find(s->id);
    return it == lines.end() ? std::string("?") : std::to_string(it->second);
  };
  std::string where = f.same_element ? "the same element, later in the same iteration"
                      : f.same_iteration
                          ? "maybe the same element, later in the same iteration (the indices are not provably "
                            "different: conservative)"
                          : "maybe the same element in another iteration of the top-level loop (iterations run in "
                            "any order; the indices do not prove them apart: conservative)";
  return fmt::format(
      "{} is read and then written in one launch ({}):\n  read:  `{}` (line {})\n  write: `{}` (line {})"
      "\n  fix: {}",
      array_name(k, f.read->operand(0)), where, print_stmt(*f.read, k), line_of(f.read), print_stmt(*f.write, k),
      line_of(f.write), kGlobalAccessRemedy);
}

}  // namespace pb::passes
