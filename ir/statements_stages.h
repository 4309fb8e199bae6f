// The statements of the offloaded stage (tasks, global temporaries, the SNode access chain), the
// kinds read from reference dumps that no backend compiles (kNoBackend) and the mesh statements
// (kMesh). Included by ir/statements.h; include that one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/statements.h"

namespace pb::ir {

// ---- The offloaded stage: tasks, global temporaries, the SNode access chain (docs/ir-format.md) ----

// The element types of a mesh, as the reference prints them.
#define PB_MESH_ELEMENTS(X) X(verts) X(edges) X(faces) X(cells)
enum class MeshElement : uint8_t {
#define PB_X(name) name,
  PB_MESH_ELEMENTS(PB_X)
#undef PB_X
};
std::string_view mesh_element_name(MeshElement e);
std::optional<MeshElement> mesh_element_from_name(std::string_view name);
// A mesh for's first target element type; none prints as `Unknown`.
std::string_view mesh_target_name(std::optional<MeshElement> e);

// What an offloaded task runs: its body once (serial), over a range or the cells of an SNode
// (range_for, struct_for, in parallel), over the patches of a mesh (mesh_for), or an SNode list
// maintenance task (listgen, gc).
#define PB_TASK_TYPES(X) X(serial) X(range_for) X(struct_for) X(mesh_for) X(listgen) X(gc) X(clear_list)
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
        gdw_level(o.gdw_level),
        mesh_from(o.mesh_from),
        mesh_to(o.mesh_to),
        num_patches(o.num_patches) {
    if (o.body) body = std::make_unique<Block>(this);
    if (o.tls_prologue) tls_prologue = std::make_unique<Block>(this);
    if (o.mesh_prologue) mesh_prologue = std::make_unique<Block>(this);
    if (o.bls_prologue) bls_prologue = std::make_unique<Block>(this);
    if (o.bls_epilogue) bls_epilogue = std::make_unique<Block>(this);
    if (o.tls_epilogue) tls_epilogue = std::make_unique<Block>(this);
  }
  OffloadedStmt(OffloadedStmt&&) = default;
  // Printing and execution order; absent blocks are null.
  BlockList blocks() const override {
    return {tls_prologue.get(), mesh_prologue.get(), bls_prologue.get(),
            body.get(),         bls_epilogue.get(),  tls_epilogue.get()};
  }
  Stmt* bound_operand(const TaskBound& b) const {
    return b.kind == TaskBound::Kind::operand ? operand(static_cast<size_t>(b.value)) : nullptr;
  }
  void add_bound_operand(TaskBound& b, Stmt* s) {
    b = {TaskBound::Kind::operand, static_cast<int64_t>(num_operands())};
    add_operand(s);
  }
  bool is_loop_task() const { return task == TaskType::range_for || task == TaskType::struct_for; }
  bool has_body() const { return task == TaskType::serial || is_loop_task() || task == TaskType::mesh_for; }
  // The first attribute set that this task type's printed line cannot carry (null when none):
  // both readers refuse it, so text and JSON read the same kernels.
  const char* uncarried_attribute() const {
    const bool loop = is_loop_task(), listgen = task == TaskType::listgen;
    const bool mesh = task == TaskType::mesh_for;
    if (!loop && !mesh && (grid_dim != 0 || block_dim != 0)) return "grid_dim or block_dim";
    if ((task == TaskType::serial || task == TaskType::range_for || mesh) && !snode.empty()) return "snode";
    if (!listgen && !parent_snode.empty()) return "parent_snode";
    if (task != TaskType::struct_for && !mesh && bls != "none") return "bls";
    if (!loop && !listgen && (!loop_name.empty() || gdw_level >= 0)) return "loop_name or gdw_level";
    if (!mesh && (mesh_from != MeshElement::verts || mesh_to || num_patches != 0)) return "mesh element types";
    if (!mesh && mesh_prologue) return "body prologue";
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
  // mesh_for: the element types it walks (`verts -> edges`) and the mesh's patch count.
  MeshElement mesh_from = MeshElement::verts;
  std::optional<MeshElement> mesh_to;
  int num_patches = 0;
  std::unique_ptr<Block> tls_prologue, mesh_prologue, bls_prologue, body, bls_epilogue, tls_epilogue;
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
// struct argument). `bracketed`: Quadrants prints `arg_id [0]`, Taichi 1.x `arg_id 0`. Every backend
// runs it (an integer with no gradient), unlike the kinds around it.
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

// A cell of a container SNode rather than a field's element, an SNode op's operand before
// lower_access (`<*gen> $2 = global ptr [S1pointer], index [$1] activate=true`, printed as a global
// ptr). The indices are the cell's coordinates over the SNode's full shape, or for a dynamic SNode
// over its parent's; `activate` is printed only: the op decides whether the cells are activated.
class SNodePtrStmt : public StmtOf<SNodePtrStmt, StmtKind::SNodePtr> {
 public:
  SNodePtrStmt(std::string sn, const std::vector<Stmt*>& indices, bool act) : snode(std::move(sn)), activate(act) {
    for (Stmt* i : indices) add_operand(i);
    type = DataType::gen_pointer();
  }
  std::span<Stmt* const> indices() const { return operands(); }
  std::string snode;
  bool activate;
};

// A pseudo-random value of the statement's type.
class RandStmt : public StmtOf<RandStmt, StmtKind::Rand> {
 public:
  explicit RandStmt(DataType t) { type = t; }
};

// A runtime intrinsic by name (`internal call NAME($a, $b)`); see exec_values.cpp for the names
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

// ---- Tensor values (scalarize turns them into scalars: passes/scalarize.h) ----

// A tensor value from its elements, row-major (`[$a, $b]`). Each element converts to the
// tensor's element type as `cast_value` would (the reference prints unconverted constants).
class MatrixInitStmt : public StmtOf<MatrixInitStmt, StmtKind::MatrixInit> {
 public:
  explicit MatrixInitStmt(const std::vector<Stmt*>& values, DataType t) {
    for (Stmt* v : values) add_operand(v);
    type = t;
  }
};

// One element of a tensor value (`get_element($x, 1)`): `index` holds one index per dimension,
// or one row-major index.
class GetElementStmt : public StmtOf<GetElementStmt, StmtKind::GetElement> {
 public:
  GetElementStmt(Stmt* src, std::vector<int> idx) : index(std::move(idx)) {
    add_operand(src);
    type = src ? src->type.element() : DataType{};
  }
  Stmt* src() const { return operand(0); }
  std::vector<int> index;
};

// A pointer to element `offset` (row-major) of the tensor `origin` points to (`shift ptr [$p +
// $o]`); through the SNode access chain (an origin that is `get child`) the offset is in bytes.
class MatrixPtrStmt : public StmtOf<MatrixPtrStmt, StmtKind::MatrixPtr> {
 public:
  MatrixPtrStmt(Stmt* origin, Stmt* offset) {
    add_operand(origin);
    add_operand(offset);
    type = origin ? DataType::pointer_to(origin->type.scalar) : DataType{};
  }
  Stmt* origin() const { return operand(0); }
  Stmt* offset() const { return operand(1); }
};

// A tensor of pointers to cells of several fields at the same indices
// (`matrix of global ptr [S1, S2], index [$i] activate=true`).
class MatrixOfGlobalPtrStmt : public StmtOf<MatrixOfGlobalPtrStmt, StmtKind::MatrixOfGlobalPtr> {
 public:
  MatrixOfGlobalPtrStmt(std::vector<FieldId> f, const std::vector<Stmt*>& indices, bool act)
      : fields(std::move(f)), activate(act) {
    for (Stmt* i : indices) add_operand(i);
  }
  std::vector<FieldId> fields;
  bool activate;
};

// A tensor of scalar pointers (`matrix of matrix ptr [$a, $b]`).
class MatrixOfMatrixPtrStmt : public StmtOf<MatrixOfMatrixPtrStmt, StmtKind::MatrixOfMatrixPtr> {
 public:
  explicit MatrixOfMatrixPtrStmt(const std::vector<Stmt*>& ptrs) {
    for (Stmt* p : ptrs) add_operand(p);
  }
};

// ---- Mesh kernels: read, printed and verified, not run (kMesh, docs/ir-format.md) ----

// A parallel loop over the elements `from` of a mesh (`mesh for (verts -> edges) none{`); `to`
// is the first element type its body reaches through a relation. Its loop index is the element.
class MeshForStmt : public StmtOf<MeshForStmt, StmtKind::MeshFor> {
 public:
  MeshForStmt(MeshElement f, std::optional<MeshElement> t, std::string spad)
      : from(f), to(t), scratch_pad(std::move(spad)), body(std::make_unique<Block>(this)) {}
  MeshForStmt(const MeshForStmt& o)
      : StmtOf(o), from(o.from), to(o.to), scratch_pad(o.scratch_pad), body(std::make_unique<Block>(this)) {}
  MeshForStmt(MeshForStmt&&) = default;
  BlockList blocks() const override { return BlockList(body.get()); }
  MeshElement from;
  std::optional<MeshElement> to;
  std::string scratch_pad = "none";  // the reference's scratch-pad info, as printed
  std::unique_ptr<Block> body;
};

// Element `to` number `neighbor` related to the mesh element `element` (`$e idx relation
// edges[$n]`), or, without `neighbor`, how many there are (`$e idx relation edges size`).
class MeshRelationAccessStmt : public StmtOf<MeshRelationAccessStmt, StmtKind::MeshRelationAccess> {
 public:
  MeshRelationAccessStmt(Stmt* element, MeshElement t, Stmt* neighbor) : to(t) {
    add_operand(element);
    if (neighbor) add_operand(neighbor);
    type = DataType::of(ScalarKind::u16);  // the reference's type
  }
  Stmt* element() const { return operand(0); }
  Stmt* neighbor() const { return num_operands() > 1 ? operand(1) : nullptr; }
  bool is_size() const { return num_operands() == 1; }
  MeshElement to;
};

// Index spaces a mesh index converts between, as the reference prints them.
#define PB_MESH_CONVERSIONS(X)                \
  X(local_to_global, "local to global")       \
  X(local_to_reordered, "local to reordered") \
  X(global_to_reordered, "global to reordered")
enum class MeshConversion : uint8_t {
#define PB_X(name, text) name,
  PB_MESH_CONVERSIONS(PB_X)
#undef PB_X
};
std::string_view mesh_conversion_text(MeshConversion c);  // "local to global"
std::string_view mesh_conversion_key(MeshConversion c);   // "local_to_global" (JSON)

// The index of an `element` mesh element in another index space (`local to global verts $i`).
class MeshIndexConversionStmt : public StmtOf<MeshIndexConversionStmt, StmtKind::MeshIndexConversion> {
 public:
  MeshIndexConversionStmt(MeshConversion c, MeshElement e, Stmt* index) : conversion(c), element(e) {
    add_operand(index);
    type = DataType::of(ScalarKind::i32);
  }
  Stmt* index() const { return operand(0); }
  MeshConversion conversion;
  MeshElement element;
};

// The patch of the mesh the running mesh loop works on (`mesh patch idx`).
class MeshPatchIndexStmt : public StmtOf<MeshPatchIndexStmt, StmtKind::MeshPatchIndex> {
 public:
  MeshPatchIndexStmt() { type = DataType::of(ScalarKind::i32); }
};

// The data (or gradient) base address of the ndarray argument `arg_id` (more than one index names
// a member of a struct argument): `external_tensor_base_ptr (arg_id=[1], is_grad=false)`. Type `*T`.
class ExternalTensorBasePtrStmt : public StmtOf<ExternalTensorBasePtrStmt, StmtKind::ExternalTensorBasePtr> {
 public:
  ExternalTensorBasePtrStmt(std::vector<int> arg, bool grad, DataType t) : arg_id(std::move(arg)), is_grad(grad) {
    type = t;
  }
  std::vector<int> arg_id;
  bool is_grad;
};

}  // namespace pb::ir
