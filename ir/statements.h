// The concrete statements of CHI IR, one class per entry of PB_STMT_KINDS.
// Operands live in the base class's operand list (so use-lists and replace-all-uses work for
// every kind); the named accessors below say which slot is which.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/ops.h"
#include "ir/size_expr.h"
#include "ir/stmt.h"
#include "ir/value.h"

namespace pb::ir {

using FieldId = int32_t;

template <class Derived, StmtKind K>
class StmtOf : public Stmt {
 public:
  static constexpr StmtKind kKind = K;
  std::unique_ptr<Stmt> clone_shallow() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }

 protected:
  // The pool aligns blocks to its granule only.
  StmtOf() : Stmt(K) { static_assert(alignof(Derived) <= stmt_pool::kGranule); }
  StmtOf(const StmtOf&) = default;
  StmtOf(StmtOf&&) = default;  // relocation (Stmt(Stmt&&))
};

class ConstStmt : public StmtOf<ConstStmt, StmtKind::Const> {
 public:
  explicit ConstStmt(Value v) : value(v) { type = DataType::of(v.kind()); }
  Value value;
};

// Loads scalar kernel argument `arg_index` (or the base of an ndarray argument).
class ArgLoadStmt : public StmtOf<ArgLoadStmt, StmtKind::ArgLoad> {
 public:
  ArgLoadStmt(int index, DataType t) : arg_index(index) { type = t; }
  int arg_index;
};

// A local variable, zero-initialised each time the statement executes. Type is `*T`.
class AllocaStmt : public StmtOf<AllocaStmt, StmtKind::Alloca> {
 public:
  explicit AllocaStmt(ScalarKind k) { type = DataType::pointer_to(k); }
};

class LocalLoadStmt : public StmtOf<LocalLoadStmt, StmtKind::LocalLoad> {
 public:
  explicit LocalLoadStmt(Stmt* src) { add_operand(src); }
  Stmt* src() const { return operand(0); }
};

class LocalStoreStmt : public StmtOf<LocalStoreStmt, StmtKind::LocalStore> {
 public:
  LocalStoreStmt(Stmt* dest, Stmt* val) {
    add_operand(dest);
    add_operand(val);
  }
  Stmt* dest() const { return operand(0); }
  Stmt* val() const { return operand(1); }
};

// Address of one cell of field `field`; operands are the indices (none for a 0-d field).
class GlobalPtrStmt : public StmtOf<GlobalPtrStmt, StmtKind::GlobalPtr> {
 public:
  GlobalPtrStmt(FieldId f, const std::vector<Stmt*>& indices, bool act = true) : field(f), activate(act) {
    for (Stmt* i : indices) add_operand(i);
  }
  std::span<Stmt* const> indices() const { return operands(); }
  FieldId field;
  bool activate;
};

// Address of one element of an ndarray argument: operand 0 is the argload, then indices.
class ExternalPtrStmt : public StmtOf<ExternalPtrStmt, StmtKind::ExternalPtr> {
 public:
  ExternalPtrStmt(Stmt* base, const std::vector<Stmt*>& indices) {
    add_operand(base);
    for (Stmt* i : indices) add_operand(i);
  }
  Stmt* base() const { return operand(0); }
  std::span<Stmt* const> indices() const { return operands().subspan(1); }
  std::vector<int> element_shape;  // printed as ", (3)" when present
  std::string layout = "AOS";
  bool is_grad = false;
  bool is_dual = false;  // the tangent array of a forward-mode kernel (make_dual); printed only when set
};

class GlobalLoadStmt : public StmtOf<GlobalLoadStmt, StmtKind::GlobalLoad> {
 public:
  explicit GlobalLoadStmt(Stmt* ptr) { add_operand(ptr); }
  Stmt* src() const { return operand(0); }
  bool is_volatile = false;
};

class GlobalStoreStmt : public StmtOf<GlobalStoreStmt, StmtKind::GlobalStore> {
 public:
  GlobalStoreStmt(Stmt* dest, Stmt* val) {
    add_operand(dest);
    add_operand(val);
  }
  Stmt* dest() const { return operand(0); }
  Stmt* val() const { return operand(1); }
};

// Read-modify-write of a global (or local) cell; returns the old value.
class AtomicOpStmt : public StmtOf<AtomicOpStmt, StmtKind::AtomicOp> {
 public:
  AtomicOpStmt(AtomicOp o, Stmt* dest, Stmt* val) : op(o) {
    add_operand(dest);
    add_operand(val);
  }
  Stmt* dest() const { return operand(0); }
  Stmt* val() const { return operand(1); }
  AtomicOp op;
};

// For casts the target type is the statement's own type.
class UnaryOpStmt : public StmtOf<UnaryOpStmt, StmtKind::UnaryOp> {
 public:
  UnaryOpStmt(UnaryOp o, Stmt* x) : op(o) { add_operand(x); }
  Stmt* x() const { return operand(0); }
  UnaryOp op;
};

class BinaryOpStmt : public StmtOf<BinaryOpStmt, StmtKind::BinaryOp> {
 public:
  BinaryOpStmt(BinaryOp o, Stmt* l, Stmt* r) : op(o) {
    add_operand(l);
    add_operand(r);
  }
  Stmt* lhs() const { return operand(0); }
  Stmt* rhs() const { return operand(1); }
  BinaryOp op;
};

// select(cond, a, b)
class TernaryOpStmt : public StmtOf<TernaryOpStmt, StmtKind::TernaryOp> {
 public:
  TernaryOpStmt(Stmt* c, Stmt* a, Stmt* b) {
    add_operand(c);
    add_operand(a);
    add_operand(b);
  }
  Stmt* cond() const { return operand(0); }
  Stmt* a() const { return operand(1); }
  Stmt* b() const { return operand(2); }
};

class IfStmt : public StmtOf<IfStmt, StmtKind::If> {
 public:
  explicit IfStmt(Stmt* c) : true_block(std::make_unique<Block>(this)) { add_operand(c); }
  IfStmt(const IfStmt& o) : StmtOf(o), true_block(std::make_unique<Block>(this)) {
    if (o.false_block) false_block = std::make_unique<Block>(this);
  }
  IfStmt(IfStmt&&) = default;
  Stmt* cond() const { return operand(0); }
  BlockList blocks() const override { return BlockList(true_block.get(), false_block.get()); }
  Block& ensure_false_block() {
    if (!false_block) false_block = std::make_unique<Block>(this);
    return *false_block;
  }
  std::unique_ptr<Block> true_block;
  std::unique_ptr<Block> false_block;  // null when the dump had no `else`
};

// Serial loop over [begin, end), or parallel when it is a direct child of the kernel root.
class RangeForStmt : public StmtOf<RangeForStmt, StmtKind::RangeFor> {
 public:
  RangeForStmt(Stmt* b, Stmt* e) : body(std::make_unique<Block>(this)) {
    add_operand(b);
    add_operand(e);
  }
  RangeForStmt(const RangeForStmt& o)
      : StmtOf(o),
        reversed(o.reversed),
        block_dim(o.block_dim),
        loop_name(o.loop_name),
        body(std::make_unique<Block>(this)) {}
  RangeForStmt(RangeForStmt&&) = default;
  Stmt* begin() const { return operand(0); }
  Stmt* end() const { return operand(1); }
  BlockList blocks() const override { return BlockList(body.get()); }
  bool reversed = false;  // iterate end-1 down to begin
  int block_dim = 0;      // 0 prints as "adaptive"
  std::string loop_name;  // optional
  std::unique_ptr<Block> body;
};

// Parallel loop over every cell of an index space: a dense space from the header, or the
// index space of a field named directly.
class StructForStmt : public StmtOf<StructForStmt, StmtKind::StructFor> {
 public:
  explicit StructForStmt(std::string s) : space(std::move(s)), body(std::make_unique<Block>(this)) {}
  StructForStmt(const StructForStmt& o)
      : StmtOf(o),
        space(o.space),
        none_marker(o.none_marker),
        block_dim(o.block_dim),
        body(std::make_unique<Block>(this)) {}
  StructForStmt(StructForStmt&&) = default;
  BlockList blocks() const override { return BlockList(body.get()); }
  std::string space;
  bool none_marker = false;  // the reference printer's glued "none" scratch-pad marker
  int block_dim = 0;
  std::unique_ptr<Block> body;
};

// Operand 0 is the enclosing loop statement.
class LoopIndexStmt : public StmtOf<LoopIndexStmt, StmtKind::LoopIndex> {
 public:
  LoopIndexStmt(Stmt* loop, int ax) : axis(ax) {
    add_operand(loop);
    type = DataType::of(ScalarKind::i32);
  }
  Stmt* loop() const { return operand(0); }
  int axis;
};

// `while true { ... }`: left through a while control whose condition is false.
class WhileStmt : public StmtOf<WhileStmt, StmtKind::While> {
 public:
  WhileStmt() : body(std::make_unique<Block>(this)) {}
  WhileStmt(const WhileStmt& o) : StmtOf(o), body(std::make_unique<Block>(this)) {}
  WhileStmt(WhileStmt&&) = default;
  BlockList blocks() const override { return BlockList(body.get()); }
  std::unique_ptr<Block> body;
};

// mask &= cond; leaves the enclosing while when the mask becomes zero. Without a mask (the
// reference prints `while control nullptr, $c`), leaves it when cond is zero.
class WhileControlStmt : public StmtOf<WhileControlStmt, StmtKind::WhileControl> {
 public:
  WhileControlStmt(Stmt* mask, Stmt* c) {
    if (mask) add_operand(mask);
    add_operand(c);
  }
  bool has_mask() const { return num_operands() == 2; }
  Stmt* mask() const { return has_mask() ? operand(0) : nullptr; }
  Stmt* cond() const { return operand(num_operands() - 1); }
};

// Skips the rest of the innermost enclosing loop body.
class ContinueStmt : public StmtOf<ContinueStmt, StmtKind::Continue> {
 public:
  ContinueStmt() = default;
};

// A per-thread autodiff stack of (primal, adjoint) entries. max_size 0 means "adaptive": to be
// sized by determine_ad_stack_size, which sets either max_size or (with max_size 0) `size`, a
// capacity evaluated when the alloc executes. The statement's type is the element type.
class AdStackAllocaStmt : public StmtOf<AdStackAllocaStmt, StmtKind::AdStackAlloca> {
 public:
  AdStackAllocaStmt(ScalarKind k, int64_t max) : max_size(max) { type = DataType::of(k); }
  bool is_sized() const { return max_size > 0 || size != nullptr; }
  int64_t max_size;
  SizeExprPtr size;  // null: none
};

template <class Derived, StmtKind K>
class AdStackOp : public StmtOf<Derived, K> {
 public:
  Stmt* stack() const { return this->operand(0); }

 protected:
  explicit AdStackOp(Stmt* s) {
    this->add_operand(s);
    if (s) this->type = DataType::of(s->type.scalar);
  }
};

class AdStackPushStmt : public AdStackOp<AdStackPushStmt, StmtKind::AdStackPush> {
 public:
  AdStackPushStmt(Stmt* s, Stmt* v) : AdStackOp(s) { add_operand(v); }
  Stmt* val() const { return operand(1); }
};
class AdStackPopStmt : public AdStackOp<AdStackPopStmt, StmtKind::AdStackPop> {
 public:
  explicit AdStackPopStmt(Stmt* s) : AdStackOp(s) {}
};
class AdStackLoadTopStmt : public AdStackOp<AdStackLoadTopStmt, StmtKind::AdStackLoadTop> {
 public:
  explicit AdStackLoadTopStmt(Stmt* s) : AdStackOp(s) {}
};
class AdStackLoadTopAdjStmt : public AdStackOp<AdStackLoadTopAdjStmt, StmtKind::AdStackLoadTopAdj> {
 public:
  explicit AdStackLoadTopAdjStmt(Stmt* s) : AdStackOp(s) {}
};
class AdStackAccAdjointStmt : public AdStackOp<AdStackAccAdjointStmt, StmtKind::AdStackAccAdjoint> {
 public:
  AdStackAccAdjointStmt(Stmt* s, Stmt* v) : AdStackOp(s) { add_operand(v); }
  Stmt* val() const { return operand(1); }
};

// Prints a mix of string literals and values. Each item is literal text or an operand index.
class PrintStmt : public StmtOf<PrintStmt, StmtKind::Print> {
 public:
  using Item = std::variant<std::string, size_t>;
  PrintStmt() = default;
  void add_text(std::string t) { items.emplace_back(std::move(t)); }
  void add_value(Stmt* s) {
    items.emplace_back(num_operands());
    add_operand(s);
  }
  std::vector<Item> items;
};

// Fails the launch with `message` (formatted with args) when cond is zero.
class AssertStmt : public StmtOf<AssertStmt, StmtKind::Assert> {
 public:
  AssertStmt(Stmt* c, std::string msg, const std::vector<Stmt*>& args) : message(std::move(msg)) {
    add_operand(c);
    for (Stmt* a : args) add_operand(a);
  }
  Stmt* cond() const { return operand(0); }
  std::span<Stmt* const> args() const { return operands().subspan(1); }
  std::string message;
};

// ---- The offloaded stage: tasks, global temporaries, the SNode access chain (docs/ir-format.md) ----

// What an offloaded task runs: its body once (serial), over a range or the cells of an SNode
// (range_for, struct_for, in parallel), or an SNode list maintenance task (listgen, gc).
#define PB_TASK_TYPES(X) X(serial) X(range_for) X(struct_for) X(listgen) X(gc) X(clear_list)
enum class TaskType : uint8_t {
#define PB_X(name) name,
  PB_TASK_TYPES(PB_X)
#undef PB_X
};
std::string_view task_type_name(TaskType t);

// A bound of an offloaded range_for: a constant, the i32 global temporary at a byte offset
// (`tmp(offset=4B)`), or a statement of an earlier task (an operand).
struct TaskBound {
  enum class Kind : uint8_t { constant, temporary, operand };
  Kind kind = Kind::constant;
  int64_t value = 0;  // the constant, the byte offset, or the operand's slot
};

class OffloadedStmt : public StmtOf<OffloadedStmt, StmtKind::Offloaded> {
 public:
  // listgen and gc tasks hold no blocks; the others always have a body.
  explicit OffloadedStmt(TaskType t) : task(t) {
    if (has_body()) body = std::make_unique<Block>(this);
  }
  OffloadedStmt(const OffloadedStmt& o)
      : StmtOf(o),
        task(o.task),
        begin(o.begin),
        end(o.end),
        grid_dim(o.grid_dim),
        block_dim(o.block_dim),
        snode(o.snode),
        parent_snode(o.parent_snode),
        bls(o.bls),
        loop_name(o.loop_name),
        gdw_level(o.gdw_level) {
    if (o.body) body = std::make_unique<Block>(this);
    if (o.tls_prologue) tls_prologue = std::make_unique<Block>(this);
    if (o.bls_prologue) bls_prologue = std::make_unique<Block>(this);
    if (o.bls_epilogue) bls_epilogue = std::make_unique<Block>(this);
    if (o.tls_epilogue) tls_epilogue = std::make_unique<Block>(this);
  }
  OffloadedStmt(OffloadedStmt&&) = default;
  // Printing and execution order; absent blocks are null.
  BlockList blocks() const override {
    return {tls_prologue.get(), bls_prologue.get(), body.get(), bls_epilogue.get(), tls_epilogue.get()};
  }
  Stmt* bound_operand(const TaskBound& b) const {
    return b.kind == TaskBound::Kind::operand ? operand(static_cast<size_t>(b.value)) : nullptr;
  }
  void add_bound_operand(TaskBound& b, Stmt* s) {
    b = {TaskBound::Kind::operand, static_cast<int64_t>(num_operands())};
    add_operand(s);
  }
  bool is_loop_task() const { return task == TaskType::range_for || task == TaskType::struct_for; }
  bool has_body() const { return task == TaskType::serial || is_loop_task(); }
  // The first attribute set that this task type's printed line cannot carry (null when none):
  // both readers refuse it, so text and JSON read the same kernels.
  const char* uncarried_attribute() const {
    const bool loop = is_loop_task(), listgen = task == TaskType::listgen;
    if (!loop && (grid_dim != 0 || block_dim != 0)) return "grid_dim or block_dim";
    if ((task == TaskType::serial || task == TaskType::range_for) && !snode.empty()) return "snode";
    if (!listgen && !parent_snode.empty()) return "parent_snode";
    if (task != TaskType::struct_for && bls != "none") return "bls";
    if (!loop && !listgen && (!loop_name.empty() || gdw_level >= 0)) return "loop_name or gdw_level";
    return nullptr;
  }

  TaskType task;
  TaskBound begin, end;  // range_for
  int grid_dim = 0;
  int block_dim = 0;
  std::string snode;         // struct_for: the SNode it walks; listgen: the child; gc, clear_list: the SNode
  std::string parent_snode;  // listgen
  std::string bls = "none";  // struct_for: block-local storage, as printed
  std::string loop_name;     // optional
  int gdw_level = -1;        // printed when >= 0
  std::unique_ptr<Block> tls_prologue, bls_prologue, body, bls_epilogue, tls_epilogue;
};

// A pointer into the kernel's global temporaries buffer, at a byte offset. Type `*T`.
class GlobalTemporaryStmt : public StmtOf<GlobalTemporaryStmt, StmtKind::GlobalTemporary> {
 public:
  GlobalTemporaryStmt(DataType t, int64_t off) : offset(off) { type = t; }
  int64_t offset;
};

// A pointer into the running thread's thread-local storage, at a byte offset. Type `*T`.
class ThreadLocalPtrStmt : public StmtOf<ThreadLocalPtrStmt, StmtKind::ThreadLocalPtr> {
 public:
  ThreadLocalPtrStmt(DataType t, int64_t off) : offset(off) { type = t; }
  int64_t offset;
};

// The root SNode's cell (`*gen`). `form` is what followed `get root` (`nullptr`, `[S0root][root]`
// or nothing), kept so the line prints back as it was written.
class GetRootStmt : public StmtOf<GetRootStmt, StmtKind::GetRoot> {
 public:
  explicit GetRootStmt(std::string f) : form(std::move(f)) { type = DataType::gen_pointer(); }
  std::string form;
};

// The cell `index` (a linear index) of SNode `snode` under the container cell `parent`.
class SNodeLookupStmt : public StmtOf<SNodeLookupStmt, StmtKind::SNodeLookup> {
 public:
  SNodeLookupStmt(std::string sn, std::string sn_type, Stmt* parent, Stmt* index, bool act)
      : snode(std::move(sn)), snode_type(std::move(sn_type)), activate(act) {
    add_operand(parent);
    add_operand(index);
    type = DataType::gen_pointer();
  }
  Stmt* parent_ptr() const { return operand(0); }
  Stmt* index() const { return operand(1); }
  std::string snode, snode_type;
  bool activate;
};

// The child SNode `to` of the cell `input` of SNode `from`: a `*gen` container, or a place's
// element (`*T`).
class GetChStmt : public StmtOf<GetChStmt, StmtKind::GetCh> {
 public:
  GetChStmt(std::string f, std::string t, Stmt* input) : from(std::move(f)), to(std::move(t)) { add_operand(input); }
  Stmt* input() const { return operand(0); }
  std::string from, to;
};

// sum over i of ind[i] * (product of strides after i): a row-major linear index.
class LinearizeStmt : public StmtOf<LinearizeStmt, StmtKind::Linearize> {
 public:
  LinearizeStmt(const std::vector<Stmt*>& inds, std::vector<int64_t> s) : strides(std::move(s)) {
    for (Stmt* i : inds) add_operand(i);
    type = DataType::of(ScalarKind::i32);
  }
  std::vector<int64_t> strides;
};

class IntegerOffsetStmt : public StmtOf<IntegerOffsetStmt, StmtKind::IntegerOffset> {
 public:
  IntegerOffsetStmt(Stmt* in, int64_t off) : offset(off) {
    add_operand(in);
    type = in ? in->type : DataType{};
  }
  Stmt* input() const { return operand(0); }
  int64_t offset;
};

// Bits [bit_begin, bit_end) of the input, as an unsigned field: (x >> begin) & (2^(end-begin) - 1).
// `legacy` marks the Taichi <= 0.6 form `bit_extract($x + 0, 0~4)`.
class BitExtractStmt : public StmtOf<BitExtractStmt, StmtKind::BitExtract> {
 public:
  BitExtractStmt(Stmt* in, int b, int e) : bit_begin(b), bit_end(e) {
    add_operand(in);
    type = in ? in->type : DataType{};
  }
  Stmt* input() const { return operand(0); }
  int bit_begin, bit_end;
  bool legacy = false;
};

// The linear index of the current iteration of a loop task (`loop $0 index linear`).
class LoopLinearIndexStmt : public StmtOf<LoopLinearIndexStmt, StmtKind::LoopLinearIndex> {
 public:
  explicit LoopLinearIndexStmt(Stmt* loop) {
    add_operand(loop);
    type = DataType::of(ScalarKind::i32);
  }
  Stmt* loop() const { return operand(0); }
};

// Sets the kernel's return values.
class ReturnStmt : public StmtOf<ReturnStmt, StmtKind::Return> {
 public:
  explicit ReturnStmt(const std::vector<Stmt*>& values) {
    for (Stmt* v : values) add_operand(v);
  }
};

// ---- Read from reference dumps; run by the interpreter only (kNoBackend, docs/ir-format.md) ----

// The input's value, marked unique per iteration of the enclosing loop for the SNodes `covers`
// (reference SNode ids, printed `S2`).
class LoopUniqueStmt : public StmtOf<LoopUniqueStmt, StmtKind::LoopUnique> {
 public:
  explicit LoopUniqueStmt(Stmt* in) {
    add_operand(in);
    type = in ? in->type : DataType{};
  }
  Stmt* input() const { return operand(0); }
  std::vector<int> covers;
};

// The input's value, promised to lie in [base + low, base + high).
class RangeAssumptionStmt : public StmtOf<RangeAssumptionStmt, StmtKind::RangeAssumption> {
 public:
  RangeAssumptionStmt(Stmt* in, Stmt* b, int64_t lo, int64_t hi) : low(lo), high(hi) {
    add_operand(in);
    add_operand(b);
    type = in ? in->type : DataType{};
  }
  Stmt* input() const { return operand(0); }
  Stmt* base() const { return operand(1); }
  int64_t low, high;
};

// A hint on its operand for the backends; printed without a number of its own. Loop-unique
// decorations print `Loop-unique N`, the others `... size = N` (`number` is that N).
class DecorationStmt : public StmtOf<DecorationStmt, StmtKind::Decoration> {
 public:
  DecorationStmt(Stmt* target, bool unique, int64_t n) : loop_unique(unique), number(n) { add_operand(target); }
  Stmt* target() const { return operand(0); }
  bool loop_unique;
  int64_t number;
};

// The extent along `axis` of the ndarray argument `arg_id` (one index; more name a member of a
// struct argument). `bracketed`: Quadrants prints `arg_id [0]`, Taichi 1.x `arg_id 0`.
class ExternalTensorShapeAlongAxisStmt
    : public StmtOf<ExternalTensorShapeAlongAxisStmt, StmtKind::ExternalTensorShapeAlongAxis> {
 public:
  ExternalTensorShapeAlongAxisStmt(int ax, std::vector<int> arg) : axis(ax), arg_id(std::move(arg)) {
    type = DataType::of(ScalarKind::i32);
  }
  int axis;
  std::vector<int> arg_id;
  bool bracketed = true;
};

// The operations an SNode op statement names, as the reference prints them.
inline constexpr std::string_view kSNodeOpNames[] = {"is_active",  "length", "get_addr", "activate",
                                                     "deactivate", "append", "allocate", "clear"};

// An operation on an SNode cell (is_active, length, activate, ...): operands are the optional
// cell pointer, then the optional value (append).
class SNodeOpStmt : public StmtOf<SNodeOpStmt, StmtKind::SNodeOp> {
 public:
  SNodeOpStmt(std::string o, std::string sn, Stmt* p, Stmt* v) : op(std::move(o)), snode(std::move(sn)) {
    if (p) add_operand(p);
    if (v) add_operand(v);
    has_ptr = p != nullptr;
  }
  Stmt* ptr() const { return has_ptr ? operand(0) : nullptr; }
  Stmt* val() const { return num_operands() > (has_ptr ? 1u : 0u) ? operand(num_operands() - 1) : nullptr; }
  std::string op, snode;
  bool has_ptr = false;
};

// A pseudo-random value of the statement's type.
class RandStmt : public StmtOf<RandStmt, StmtKind::Rand> {
 public:
  explicit RandStmt(DataType t) { type = t; }
};

// A runtime intrinsic by name (`internal call NAME($a, $b)`); see exec_more.cpp for the names
// the interpreter gives a meaning, as a subgroup and a block of one thread.
class InternalFuncStmt : public StmtOf<InternalFuncStmt, StmtKind::InternalFunc> {
 public:
  InternalFuncStmt(std::string name, const std::vector<Stmt*>& args) : func_name(std::move(name)) {
    for (Stmt* a : args) add_operand(a);
  }
  std::string func_name;
};

// The first coordinate along `axis` of the block of cells a struct_for task's thread block runs
// (block-local storage), `loop $L block corner index K`.
class BlockCornerIndexStmt : public StmtOf<BlockCornerIndexStmt, StmtKind::BlockCornerIndex> {
 public:
  BlockCornerIndexStmt(Stmt* loop, int ax) : axis(ax) {
    add_operand(loop);
    type = DataType::of(ScalarKind::i32);
  }
  Stmt* loop() const { return operand(0); }
  int axis;
};

// A pointer into the block-local storage buffer at a byte offset (an operand). Type `*T`.
class BlockLocalPtrStmt : public StmtOf<BlockLocalPtrStmt, StmtKind::BlockLocalPtr> {
 public:
  explicit BlockLocalPtrStmt(Stmt* offset) { add_operand(offset); }
  Stmt* offset() const { return operand(0); }
};

// The address of a variable, passed to a function by reference (`ref($a)`). Type `*T`.
class ReferenceStmt : public StmtOf<ReferenceStmt, StmtKind::Reference> {
 public:
  explicit ReferenceStmt(Stmt* var) {
    add_operand(var);
    type = var && var->type.known() ? DataType::pointer_to(var->type.scalar) : DataType{};
  }
  Stmt* var() const { return operand(0); }
};

// A call of the real function `func` (`call "f", args = {$a, $b}`).
class FuncCallStmt : public StmtOf<FuncCallStmt, StmtKind::FuncCall> {
 public:
  FuncCallStmt(std::string f, const std::vector<Stmt*>& args) : func(std::move(f)) {
    for (Stmt* a : args) add_operand(a);
  }
  std::string func;
};

// Stores values into channels of a bit struct: operand 0 is the struct's pointer, then one value
// per entry of ch_ids.
class BitStructStoreStmt : public StmtOf<BitStructStoreStmt, StmtKind::BitStructStore> {
 public:
  BitStructStoreStmt(Stmt* ptr, std::vector<int> ch, const std::vector<Stmt*>& values, bool atomic)
      : ch_ids(std::move(ch)), is_atomic(atomic) {
    add_operand(ptr);
    for (Stmt* v : values) add_operand(v);
  }
  Stmt* ptr() const { return operand(0); }
  std::span<Stmt* const> values() const { return operands().subspan(1); }
  std::vector<int> ch_ids;
  bool is_atomic;
};

// Downcast with a kind check; nullptr when `s` is not a T.
template <class T>
T* dyn_cast(Stmt* s) {
  return s && s->kind() == T::kKind ? static_cast<T*>(s) : nullptr;
}
template <class T>
const T* dyn_cast(const Stmt* s) {
  return s && s->kind() == T::kKind ? static_cast<const T*>(s) : nullptr;
}
template <class T>
bool isa(const Stmt* s) {
  return s && s->kind() == T::kKind;
}

}  // namespace pb::ir
