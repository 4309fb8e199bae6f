#include "codegen/spirv/stack_counts.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace pb::codegen::spirv::detail {

bool is_segment_boundary(const ir::Stmt& s) {
  return !s.blocks().empty() || ir::isa<ir::WhileControlStmt>(&s) || ir::isa<ir::ContinueStmt>(&s);
}

namespace {

// What one segment does to one stack's count: whether it allocates the stack, and the count at
// the segment's end relative to its start (or, when allocated, the count itself).
struct SegmentEffect {
  bool allocated = false;
  int64_t offset = 0;
  auto operator<=>(const SegmentEffect&) const = default;
};

// Stands for the offset of a stack's last segment when its count is dead after it.
constexpr int64_t kDead = INT64_MIN;

class GroupScan {
 public:
  explicit GroupScan(std::span<const ir::AdStackAllocaStmt* const> stacks)
      : effects_(stacks.size()), alone_(stacks.size(), false), last_op_(stacks.size()) {
    for (size_t i = 0; i < stacks.size(); ++i) position_[stacks[i]] = i;
  }

  template <class Statements>  // a span of statements or an ir::Block
  void statements(const Statements& list) {
    begin_segment();
    for (const ir::Stmt* s : list) {
      if (!is_segment_boundary(*s)) {
        effect_of(*s);
        continue;
      }
      ++depth_;
      for (const ir::Block* b : s->blocks())
        if (b) statements(*b);
      --depth_;
      if (ir::isa<ir::ContinueStmt>(s)) return;  // the rest of the block is dead
      begin_segment();
    }
  }

  // A stack's bias is its count at the end of the first segment (in emission order) that
  // allocates it; its signature lists what every segment does to count - bias. A stack first
  // used in a top-level segment that allocates it, and last used in a top-level segment, has a
  // dead count after that last segment (the next iteration of the task's loop allocates it
  // again before using it), so what that segment leaves does not matter.
  CountGroups groups() const {
    using Signature = std::vector<std::tuple<uint32_t, bool, int64_t>>;
    std::map<std::pair<Signature, size_t>, uint32_t> group_of_signature;
    CountGroups out;
    for (size_t i = 0; i < effects_.size(); ++i) {
      const auto& effects = effects_[i];
      std::optional<int64_t> bias;
      Signature sig;
      for (const auto& [segment, e] : effects) {
        if (e.allocated && !bias) bias = e.offset;
        if (e != SegmentEffect{}) sig.emplace_back(segment, e.allocated, e.allocated ? e.offset - *bias : e.offset);
      }
      bool dead_after_last = !effects.empty() && !alone_[i] && effects.begin()->second.allocated &&
                             top_level_.count(effects.begin()->first) && top_level_.count(effects.rbegin()->first);
      if (dead_after_last) {
        const auto& [segment, e] = *effects.rbegin();
        if (sig.empty() || std::get<0>(sig.back()) != segment) sig.emplace_back(segment, e.allocated, 0);
        std::get<2>(sig.back()) = kDead;
      }
      auto key = std::make_pair(std::move(sig), alone_[i] ? i + 1 : 0);
      auto [it, fresh] = group_of_signature.try_emplace(std::move(key), out.groups);
      if (fresh) {
        ++out.groups;
        out.last_use.push_back(nullptr);
      }
      out.group_of.push_back(it->second);
      out.bias.push_back(bias.value_or(0));
      if (dead_after_last) {
        const ir::Stmt*& last = out.last_use[it->second];
        if (!last || order_.at(last) < order_.at(last_op_[i])) last = last_op_[i];
      }
    }
    return out;
  }

 private:
  void begin_segment() {
    ++segment_;
    if (depth_ == 0) top_level_.insert(segment_);
  }

  void effect_of(const ir::Stmt& s) {
    const ir::Stmt* stack = nullptr;
    int delta = 0;
    bool alloc = false;
    if (const auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&s)) {
      stack = a, alloc = true;
    } else if (const auto* p = ir::dyn_cast<ir::AdStackPushStmt>(&s)) {
      stack = p->stack(), delta = 1;
    } else if (const auto* q = ir::dyn_cast<ir::AdStackPopStmt>(&s)) {
      stack = q->stack(), delta = -1;
    } else if (const auto* t = ir::dyn_cast<ir::AdStackLoadTopStmt>(&s)) {
      stack = t->stack();
    } else if (const auto* ta = ir::dyn_cast<ir::AdStackLoadTopAdjStmt>(&s)) {
      stack = ta->stack();
    } else if (const auto* acc = ir::dyn_cast<ir::AdStackAccAdjointStmt>(&s)) {
      stack = acc->stack();
    }
    if (!stack) return;
    auto it = position_.find(stack);
    if (it == position_.end()) return;  // not a stack of this task: the emitter reports it
    size_t i = it->second;
    order_[&s] = order_.size();
    last_op_[i] = &s;
    auto [e, fresh] = effects_[i].try_emplace(segment_);
    if (alloc) {
      // Used before its alloc in this segment (verified IR cannot: the alloc dominates its uses).
      if (!fresh && !e->second.allocated) alone_[i] = true;
      e->second = {true, 0};
    } else {
      e->second.offset += delta;
    }
  }

  std::unordered_map<const ir::Stmt*, size_t> position_;
  std::vector<std::map<uint32_t, SegmentEffect>> effects_;  // per stack: segment -> effect
  std::vector<bool> alone_;
  std::vector<const ir::Stmt*> last_op_;  // per stack: its last statement in emission order
  std::unordered_map<const ir::Stmt*, size_t> order_;
  std::set<uint32_t> top_level_;  // segments of the task's body itself
  uint32_t segment_ = 0;
  int depth_ = 0;
};

}  // namespace

CountGroups plan_count_groups(std::span<const ir::AdStackAllocaStmt* const> stacks,
                              std::span<const ir::Stmt* const> body) {
  GroupScan scan(stacks);
  scan.statements(body);
  return scan.groups();
}

}  // namespace pb::codegen::spirv::detail
