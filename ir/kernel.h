// A kernel: a root block plus the global fields, index spaces and arguments it refers to.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/snode.h"
#include "ir/statements.h"

namespace pb::ir {

using Shape = std::vector<int64_t>;

struct Field {
  std::string name;
  ScalarKind dtype = ScalarKind::unknown;  // the element kind when the field holds tensors
  uint32_t tensor = 0;                     // each cell a tensor of this shape (ir/tensor_type.h), 0: a scalar
  std::optional<Shape> shape;              // nullopt: unknown (inferred field); empty: 0-d
  std::optional<FieldId> grad;             // the adjoint field
  std::optional<FieldId> dual;             // the forward-mode tangent field
  std::optional<FieldId> primal;           // set on grad/dual fields: whose companion this is
  std::string space;                       // the dense index space it lives in, if declared
  bool declared = false;                   // written in the header (else inferred from use)
  DataType cell_type() const { return DataType::tensor_of(dtype, tensor); }
};

struct IndexSpace {
  std::string name;
  std::optional<Shape> shape;  // the full shape (every cell of the space), not the cells per parent cell
  bool declared = false;
  SNodeKind kind = SNodeKind::dense;
  std::string parent;  // the space it is nested in (each parent cell holds shape / parent's shape cells); empty: root
};

struct ArgDecl {
  int index = 0;
  ScalarKind dtype = ScalarKind::unknown;
  uint32_t tensor = 0;  // a tensor of this shape (for an ndarray: each element), 0: a scalar
  bool ndarray = false;
  int ndim = 0;  // ndarrays only
  // A scalar that stands for element `element` (row-major) of the caller's tensor argument
  // `element_of`, which the kernel no longer declares (scalarize makes these); -1: none.
  int element_of = -1;
  int element = 0;
  DataType element_type() const { return DataType::tensor_of(dtype, tensor); }
  bool by_value_tensor() const { return !ndarray && tensor != 0; }
};

class Kernel {
 public:
  Kernel();
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(Kernel&&) noexcept;

  // Deep copy preserving ids, field ids and structure.
  std::unique_ptr<Kernel> clone() const;

  std::string name;  // empty: printed as plain `kernel {`
  Block& root() { return *root_; }
  const Block& root() const { return *root_; }

  // Fields. Ids are indices into fields() and stay valid for the kernel's life.
  const std::vector<Field>& fields() const { return fields_; }
  Field& field(FieldId id) { return fields_.at(static_cast<size_t>(id)); }  // never rename it
  const Field& field(FieldId id) const { return fields_.at(static_cast<size_t>(id)); }
  std::optional<FieldId> find_field(std::string_view name) const;
  FieldId add_field(Field f);
  // The gradient field of `id`, creating `NAME.grad` if it has none.
  FieldId ensure_grad(FieldId id);
  // The dual (tangent) field of `id`, creating `NAME.dual` (or a free variant of it) if it has none.
  FieldId ensure_dual(FieldId id);

  std::vector<IndexSpace> spaces;
  const IndexSpace* find_space(std::string_view name) const;
  std::vector<ArgDecl> args;
  const ArgDecl* find_arg(int index) const;

  // Statement ids.
  int fresh_id() { return next_id_++; }
  void note_id(int id) {
    if (id >= next_id_) next_id_ = id + 1;
  }
  // Creates a statement with a fresh id (not yet inserted anywhere).
  template <class T, class... Args>
  std::unique_ptr<T> make(Args&&... args) {
    auto s = std::make_unique<T>(std::forward<Args>(args)...);
    s->id = fresh_id();
    return s;
  }
  // Numbers every statement densely in pre-order, starting at `first`.
  void renumber(int first = 0);
  size_t count_statements() const;

 private:
  std::unique_ptr<Block> root_;
  std::vector<Field> fields_;
  std::unordered_map<std::string, FieldId> field_index_;  // by name; names never change once added
  int next_id_ = 0;
};

// The deepest nesting of blocks a kernel may have (a loop or if body inside another, counted from
// the root). The parsers, the JSON reader and the verifier refuse deeper kernels with a located
// error, so no recursive walk can be driven past the stack by input. Real kernels nest a few
// levels; size expressions nest parentheses and functions at most as deep.
inline constexpr int kMaxNestingDepth = 256;

// Ranges the readers accept, so that no input can overflow an int or size a huge table:
// statement ids 0..2e9 (as printed), argument indices 0..kMaxArgIndex, ndarray ranks and loop
// axes 0..kMaxRank.
inline constexpr int kMaxStmtId = 2'000'000'000;
inline constexpr int kMaxArgIndex = 4095;
inline constexpr int kMaxRank = 16;

// The depth of the deepest block under `b` (b itself: 0), counted without recursion; stops
// counting once it passes `limit`.
int nesting_depth(const Block& b, int limit = kMaxNestingDepth);

// Field and index-space names: letters, digits and `_ . < >` (what the reference prints, such as
// `S2place<f32>` and `x.grad`), so that every printed line and size expression reads back. Returns
// what is wrong with `name`, or nullopt if it is valid.
std::optional<std::string> name_problem(std::string_view name);
inline constexpr const char* kNameRemedy = "names are letters, digits and `_ . < >`; rename it";

// What the text header can express, checked on a kernel built another way (JSON, the builder):
// valid unique names; a shape only on declared fields and spaces; each grad/dual companion is linked both ways to one
// primal with its type, shape and space, and has no companions of its own; fields live in declared spaces; argument
// indices are unique. Returns the first problem, or nullopt.
std::optional<std::string> header_problem(const Kernel& k);

// Deep-copies `s` (with nested blocks); references between statements inside the copy are
// remapped to the copies, references outside stay. Copies keep their ids unless `kernel` is
// given, in which case every copy gets a fresh id from it.
std::unique_ptr<Stmt> clone_tree(const Stmt& s, Kernel* kernel = nullptr);

}  // namespace pb::ir
