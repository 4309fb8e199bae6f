// Large blocks in parts. LLVM's register coalescer and allocator and its loop passes take time
// superlinear in a function's size, so a block of more than EmitOptions::part_statements
// statements (nested ones counted) is emitted as consecutive parts, each a function of its own
// (internal, never inlined) that the task calls with a frame of 8-byte slots. In go what the part
// reads from before it: values, the addresses of locals it makes and later statements use,
// stacks, loop coordinates, the step count, reductions' accumulators, the ambient and
// thread-local areas. Out come the values later statements read. Constants pass as themselves.
// A statement larger than the limit is emitted in place and its own blocks are split the same
// way. A `continue` or while control that leaves the part returns a code the caller branches on.
// Values then cross parts through memory: in a task in parts a stack's count and depth are words
// of the task function's frame, not registers.
#include <fmt/format.h>

#include <functional>

#include "codegen/llvm/emitter.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen::detail {

size_t nested_size(const ir::Stmt& s) {
  size_t n = 1;
  for (const ir::Block* b : s.blocks())
    if (b) n += b->total_size();
  return n;
}

namespace {

enum : uint32_t { kPartFallsThrough = 0, kPartContinues = 1, kPartLeavesWhile = 2 };

bool is_counted_loop(const ir::Stmt& s) { return ir::isa<ir::RangeForStmt>(&s) || ir::isa<ir::StructForStmt>(&s); }

// What one part reads from before it and what it holds.
struct PartUses {
  std::unordered_set<const ir::Stmt*> inside;  // its statements, nested ones too
  std::vector<const ir::Stmt*> order;          // the same, in program order
  std::vector<const ir::Stmt*> reads;          // operands made before it, first read first
  std::vector<const ir::Stmt*> stacks;         // stack allocs it operates on or makes
  std::vector<ir::FieldId> reductions;
  bool thread_locals = false;
  bool continues = false;     // a `continue` leaves it
  bool leaves_while = false;  // a while control leaves it
};

struct Scanner {
  PartUses& u;
  const std::unordered_map<const ir::Stmt*, ir::FieldId>& reduced;
  std::unordered_set<const ir::Stmt*> seen;

  void add_stack(const ir::Stmt* a) {
    if (seen.insert(a).second) u.stacks.push_back(a);
  }
  // Pre-order: a statement's operands made inside the part are already in `inside`.
  void scan(const ir::Stmt& s, int loops, int whiles) {
    u.inside.insert(&s);
    u.order.push_back(&s);
    for (const ir::Stmt* o : s.operands()) {
      if (!o || u.inside.count(o)) continue;
      if (ir::isa<ir::AdStackAllocaStmt>(o))
        add_stack(o);
      else if (seen.insert(o).second)
        u.reads.push_back(o);
    }
    if (ir::isa<ir::AdStackAllocaStmt>(&s)) add_stack(&s);
    if (ir::isa<ir::ThreadLocalPtrStmt>(&s)) u.thread_locals = true;
    if (ir::isa<ir::ContinueStmt>(&s) && loops == 0) u.continues = true;
    if (ir::isa<ir::WhileControlStmt>(&s) && whiles == 0) u.leaves_while = true;
    if (auto it = reduced.find(&s);
        it != reduced.end() && std::find(u.reductions.begin(), u.reductions.end(), it->second) == u.reductions.end())
      u.reductions.push_back(it->second);
    bool is_while = ir::isa<ir::WhileStmt>(&s);
    int inner_loops = loops + (is_while || is_counted_loop(s) ? 1 : 0);
    for (const ir::Block* b : s.blocks())
      if (b)
        for (const ir::Stmt* c : *b) scan(*c, inner_loops, whiles + (is_while ? 1 : 0));
  }
};

}  // namespace

void TaskEmitter::emit_in_parts(std::span<const ir::Stmt* const> stmts) {
  const size_t limit = m_.options.part_statements;
  size_t total = 0;
  for (const ir::Stmt* s : stmts) total += nested_size(*s);
  if (total <= limit) {
    for (const ir::Stmt* s : stmts) emit_stmt(*s);
    return;
  }
  std::unordered_set<const ir::Stmt*> scope;  // the block's statements, nested ones too
  for (const ir::Stmt* s : stmts) {
    scope.insert(s);
    for (const ir::Block* b : s->blocks())
      if (b) ir::walk(*b, [&](const ir::Stmt& x) { scope.insert(&x); });
  }
  std::vector<const ir::Stmt*> part;
  size_t size = 0;
  auto flush = [&] {
    // A few statements between two large ones stay in place: a call would cost more than it saves.
    if (!part.empty() && (size < limit / 8 || !emit_part(part, scope)))
      for (const ir::Stmt* s : part) emit_stmt(*s);
    part.clear();
    size = 0;
  };
  for (const ir::Stmt* s : stmts) {
    size_t n = nested_size(*s);
    if (n > limit) {  // in place; its blocks are split when emitted
      flush();
      emit_stmt(*s);
      continue;
    }
    if (size + n > limit) flush();
    part.push_back(s);
    size += n;
  }
  flush();
}

bool TaskEmitter::emit_part(std::span<const ir::Stmt* const> stmts, const std::unordered_set<const ir::Stmt*>& scope) {
  PartUses u;
  Scanner scanner{u, reduced_atomics_, {}};
  for (const ir::Stmt* s : stmts) scanner.scan(*s, 0, 0);
  // What statements after the part (in this block) read from it.
  std::unordered_set<const ir::Stmt*> top(stmts.begin(), stmts.end());
  std::vector<const ir::Stmt*> exports, locals;
  for (const ir::Stmt* x : u.order) {
    bool read_after = false;
    for (const auto& use : x->uses())
      read_after = read_after || (scope.count(use.user()) && !u.inside.count(use.user()));
    if (!read_after || ir::isa<ir::AdStackAllocaStmt>(x)) continue;
    if (!top.count(x)) return false;  // made in a nested block: not defined where the part returns
    bool local = ir::isa<ir::AllocaStmt>(x) && !m_.plan.shared_allocas.count(x);
    (local ? locals : exports).push_back(x);
  }

  // ---- what goes in: caller's value, and how the part takes it ----
  struct In {
    llvm::Value* sent;
    std::function<void(llvm::Value*)> take;
    // A word of the caller's the part alone uses while it runs (a local, a stack's count): the
    // part works on a copy of its own, which LLVM keeps in a register, and writes it back.
    llvm::Type* word = nullptr;
  };
  std::vector<In> in;
  for (const ir::Stmt* a : locals) {  // made here so that they outlive the part
    llvm::Value* p = entry_alloca(memory_type(a->type.scalar), "local");
    values_[a] = p;
    in.push_back({p, [this, a](llvm::Value* v) { values_[a] = v; }, memory_type(a->type.scalar)});
  }
  for (const ir::Stmt* o : u.reads) {
    if (values_.count(o) || homes_.count(o)) {
      bool local = ir::isa<ir::AllocaStmt>(o) && !m_.plan.shared_allocas.count(o);
      in.push_back(
          {value(o), [this, o](llvm::Value* v) { values_[o] = v; }, local ? memory_type(o->type.scalar) : nullptr});
    }
    if (auto it = loop_coords_.find(o); it != loop_coords_.end()) {
      size_t n = it->second.size();
      for (size_t i = 0; i < n; ++i)
        in.push_back({it->second[i], [this, o, i, n](llvm::Value* v) {
                        auto& c = loop_coords_[o];
                        c.resize(n);
                        c[i] = v;
                      }});
    }
    if (auto it = loop_linear_.find(o); it != loop_linear_.end())
      in.push_back({it->second, [this, o](llvm::Value* v) { loop_linear_[o] = v; }});
  }
  for (const ir::Stmt* a : u.stacks) {
    const StackRef r = stack_of(a);
    in.push_back({r.base, [this, a, r](llvm::Value* v) { stacks_[a] = StackRef{v, nullptr, nullptr, r.id, r.kind}; }});
    in.push_back({r.count, [this, a](llvm::Value* v) { stacks_[a].count = v; }, b_.getInt64Ty()});
    in.push_back({r.capacity, [this, a](llvm::Value* v) { stacks_[a].capacity = v; }});
    in.push_back({r.deepest, [this, a](llvm::Value* v) { stacks_[a].deepest = v; }, b_.getInt64Ty()});
  }
  for (ir::FieldId f : u.reductions) {
    Reduction r = reductions_.at(f);
    in.push_back(
        {r.acc, [this, r](llvm::Value* v) { reductions_[r.field] = {r.field, r.kind, v}; }, value_type(r.kind)});
  }
  in.push_back({steps_, [this](llvm::Value* v) { steps_ = v; }, b_.getInt64Ty()});
  if (iteration_) in.push_back({iteration_, [this](llvm::Value* v) { iteration_ = v; }});
  if (m_.info.sparse) in.push_back({ambient(), [this](llvm::Value* v) { ambient_ = v; }});
  if (u.thread_locals) in.push_back({thread_locals(), [this](llvm::Value* v) { tls_ = v; }});

  size_t slots = exports.size();
  for (const In& i : in) slots += llvm::isa<llvm::Constant>(i.sent) ? 0 : 1;
  llvm::Value* frame = entry_alloca(llvm::ArrayType::get(b_.getInt64Ty(), std::max<size_t>(slots, 1)), "part.frame");
  auto slot = [&](size_t i) { return b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), frame, i); };
  size_t next = 0;
  for (const In& i : in)
    if (!llvm::isa<llvm::Constant>(i.sent)) b_.CreateStore(i.sent, slot(next++));

  // ---- the part function, with the emitter's per-function state of its own ----
  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy()}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::InternalLinkage,
                                    fmt::format("{}_part{}", m_.info.tasks[index_].name, parts_++), m_.module);
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(2, llvm::Attribute::NoAlias);
  auto ip = b_.saveIP();
  llvm::Function* caller_fn = std::exchange(fn_, fn);
  llvm::Value* caller_ctx = std::exchange(ctx_, fn->getArg(0));
  llvm::Value* caller_slice = std::exchange(slice_, fn->getArg(1));
  llvm::BasicBlock* caller_entry = entry_;
  llvm::Value* caller_tls = std::exchange(tls_, nullptr);
  llvm::Value* caller_steps = steps_;
  llvm::Value* caller_iteration = iteration_;
  llvm::Value* caller_ambient = std::exchange(ambient_, nullptr);
  auto caller_values = std::exchange(values_, {});
  auto caller_homes = std::exchange(homes_, {});
  auto caller_coords = std::exchange(loop_coords_, {});
  auto caller_linear = std::exchange(loop_linear_, {});
  auto caller_stacks = std::exchange(stacks_, {});
  auto caller_reductions = std::exchange(reductions_, {});
  auto caller_continues = std::exchange(continue_targets_, {});
  auto caller_whiles = std::exchange(while_exits_, {});

  entry_ = new_block("entry");
  llvm::BasicBlock* start = new_block("start");
  b_.SetInsertPoint(start);
  llvm::Value* part_frame = fn->getArg(2);
  auto part_slot = [&](size_t i) { return b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), part_frame, i); };
  next = 0;
  struct Copy {
    llvm::Value* own;
    llvm::Value* callers;
    llvm::Type* type;
  };
  std::vector<Copy> copies;
  for (const In& i : in) {
    llvm::Value* v = llvm::isa<llvm::Constant>(i.sent) ? i.sent : b_.CreateLoad(i.sent->getType(), part_slot(next++));
    if (i.word && !llvm::isa<llvm::Constant>(v)) {
      llvm::Value* own = entry_alloca(i.word, "part.word");
      b_.CreateStore(b_.CreateLoad(i.word, v), own);
      copies.push_back({own, v, i.word});
      v = own;
    }
    i.take(v);
  }
  auto write_back = [&] {
    for (const Copy& c : copies) b_.CreateStore(b_.CreateLoad(c.type, c.own), c.callers);
  };
  std::vector<std::pair<llvm::BasicBlock*, uint32_t>> leaves;
  if (u.continues && !caller_continues.empty()) {
    leaves.emplace_back(new_block("part.continue"), kPartContinues);
    continue_targets_.push_back(leaves.back().first);
  }
  if (u.leaves_while && !caller_whiles.empty()) {
    leaves.emplace_back(new_block("part.leave.while"), kPartLeavesWhile);
    while_exits_.push_back(leaves.back().first);
  }
  for (const ir::Stmt* s : stmts) emit_stmt(*s);
  // Out: constants as themselves, the rest through the slots after the inputs.
  std::vector<llvm::Value*> out(exports.size(), nullptr);
  std::vector<llvm::Type*> out_types(exports.size(), nullptr);
  size_t first_out = next;
  for (size_t i = 0; i < exports.size(); ++i) {
    auto it = values_.find(exports[i]);
    if (it == values_.end() || !it->second) continue;
    if (llvm::isa<llvm::Constant>(it->second)) {
      out[i] = it->second;
      continue;
    }
    out_types[i] = it->second->getType();
    b_.CreateStore(it->second, part_slot(next++));
  }
  write_back();
  b_.CreateRet(b_.getInt32(kPartFallsThrough));
  for (auto [bb, code] : leaves) {
    b_.SetInsertPoint(bb);
    write_back();
    b_.CreateRet(b_.getInt32(code));
  }
  llvm::IRBuilder<>(entry_).CreateBr(start);

  fn_ = caller_fn;
  ctx_ = caller_ctx;
  slice_ = caller_slice;
  entry_ = caller_entry;
  tls_ = caller_tls;
  steps_ = caller_steps;
  iteration_ = caller_iteration;
  ambient_ = caller_ambient;
  values_ = std::move(caller_values);
  homes_ = std::move(caller_homes);
  loop_coords_ = std::move(caller_coords);
  loop_linear_ = std::move(caller_linear);
  stacks_ = std::move(caller_stacks);
  reductions_ = std::move(caller_reductions);
  continue_targets_ = std::move(caller_continues);
  while_exits_ = std::move(caller_whiles);
  b_.restoreIP(ip);

  llvm::Value* code = b_.CreateCall(fn, {ctx_, slice_, frame});
  bool escapes_continue = u.continues && !continue_targets_.empty();
  bool escapes_while = u.leaves_while && !while_exits_.empty();
  if (escapes_continue || escapes_while) {
    llvm::BasicBlock* after = new_block("part.done");
    auto* sw = b_.CreateSwitch(code, after, 2);
    if (escapes_continue) sw->addCase(b_.getInt32(kPartContinues), continue_targets_.back());
    if (escapes_while) sw->addCase(b_.getInt32(kPartLeavesWhile), while_exits_.back());
    b_.SetInsertPoint(after);
  }
  next = first_out;
  for (size_t i = 0; i < exports.size(); ++i) {
    if (out[i])
      values_[exports[i]] = out[i];
    else if (out_types[i])
      homes_[exports[i]] = {llvm::IRBuilder<>(entry_).CreateConstInBoundsGEP1_64(b_.getInt64Ty(), frame, next++),
                            out_types[i]};
  }
  return true;
}

}  // namespace pb::codegen::llvmgen::detail
