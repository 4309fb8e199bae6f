// SNode kinds of index spaces and the layout rules that nest one space in another (the reference's
// `ti.root.pointer(...).dense(...)` trees), shared by the readers, the interpreter and the backends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/type.h"

namespace pb::ir {

class Kernel;
class Stmt;
struct IndexSpace;

// How a space's cells become active: every cell of a dense space always is; a pointer, bitmasked
// or hash cell once written or activated; a dynamic space's first `length` cells under each parent
// cell. A hash space (deprecated in the reference) is a pointer space keyed by a hash table there:
// its cells behave as a pointer space's.
enum class SNodeKind : uint8_t { dense, pointer, bitmasked, dynamic, hash };

inline constexpr std::string_view kSNodeKindNames[] = {"dense", "pointer", "bitmasked", "dynamic", "hash"};
inline std::string_view snode_kind_name(SNodeKind k) { return kSNodeKindNames[static_cast<size_t>(k)]; }
std::optional<SNodeKind> snode_kind_from_name(std::string_view name);

// The full shape of a nested space's parent, padded with 1s to the space's rank (a parent over
// the first axes only, as `dense(ti.i, 4).dynamic(ti.j, 16)` gives).
std::vector<int64_t> padded_parent_shape(const std::vector<int64_t>& parent, size_t rank);

// The element type a reference place's name carries (`S2place<f32>`, `x_f32`), else unknown.
ScalarKind scalar_of_snode_name(std::string_view name);

// Whether `snode` (a space, a field or a reference SNode name) is sparse: a declared space of a
// sparse kind, or an undeclared name the reference gives a sparse SNode (`S3pointer`,
// `S2bitmasked`, `S4dynamic`, `S5hash`).
bool is_sparse_snode(const Kernel& k, std::string_view snode);

// Whether the declared space `space`, or one it is nested in, is sparse: its cells can be
// inactive, so its fields' elements can be unreachable.
bool in_sparse_tree(const Kernel& k, std::string_view space);

// The shape whose coordinates an SNode op's cell pointer (`global ptr [S1pointer], index [...]`,
// SNodePtrStmt) gives: the SNode's full shape, or a dynamic SNode's parent's (its ops address the
// parent's cells). nullopt when the SNode is not declared with a shape; kDeclareSNodeRemedy says
// what to do then.
std::optional<std::vector<int64_t>> cell_pointer_shape(const Kernel& k, std::string_view snode);
inline constexpr const char* kDeclareSNodeRemedy =
    "declare it in the header with its kind, full shape and parent (`pointer S1pointer : [4]`), as docs/ir-format.md "
    "shows";

// What is wrong with how statement `s` names an SNode (a lookup, an SNode op, a cell pointer, an
// offloaded task): a sparse SNode the header does not declare with a shape, or a lookup of a
// declared space as another kind than declared. nullopt when nothing is. The interpreter and the
// SPIR-V backend refuse a kernel at its first one, before running or compiling anything.
struct SNodeUseProblem {
  std::string message, remedy;
};
std::optional<SNodeUseProblem> snode_use_problem(const Kernel& k, const Stmt& s);

// The first place `k` uses a sparse SNode (a declared sparse space, a sparse lookup, a task or an
// SNode op over a sparse SNode), described for an error; nullopt when it uses none. Backends that
// model dense SNodes only refuse such a kernel with it.
std::optional<std::string> first_sparse_use(const Kernel& k);

// A header-less dump's layout, read from its access chain. When the kernel looks up a sparse SNode
// that is not declared, declares every SNode its chains show as the header would: the kind the
// lookup prints, the cells per parent cell from the linearized strides, the parent from `get
// child`, on the parent's axes when each index splits the parent's coordinate on the same axis
// and on new axes after them when it shares none; and each place's field in its SNode, with the
// SNode's full shape. An SNode the chains leave unclear stays undeclared (a run then asks for
// its declaration). Returns the names it declared, parents first.
std::vector<std::string> declare_chain_layout(Kernel& k);

// What is wrong with the nesting of the kernel's declared spaces (a parent that is not declared
// before, a deeper rank, a shape the parent's does not divide), or nullopt.
std::optional<std::string> nesting_problem(const Kernel& k);

}  // namespace pb::ir
