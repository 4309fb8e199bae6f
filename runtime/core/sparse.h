// Internal to runtime/interp: the activity of sparse index spaces (pointer, bitmasked, dynamic)
// during a run, and the cells of nested spaces (docs/interpreter.md, "Sparse SNodes").
//
// Contract: every sparse space a kernel uses is declared in its header (kind, full shape, parent);
// a cell of a space is live when it and every sparse space above it are active. Reaching an
// element through a cell that is not live (without activating it) reaches no element: a read gives
// 0 and a write is dropped. Deactivating a cell zeroes the fields under it and deactivates the
// cells of sparse spaces below it (reactivated, it is as new); inactive cells hold no data (values the inputs give
// there are dropped when a run starts).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "runtime/core/state.h"

namespace pb::runtime::detail {

// Reads the inputs' "active" (pointer, bitmasked: 0/1 per cell, row-major) and "length" (dynamic:
// the length under each parent cell) into `st.activity`; every declared sparse space gets an entry.
void read_activity(const ir::Kernel& k, const nlohmann::json& inputs, State& st);
// The activity of the declared sparse spaces, as "active" and "length" objects of `out`.
void activity_to_json(const ir::Kernel& k, const State& st, nlohmann::json& out);

class SparseCells;
// Runs an SNode op (is_active, activate, deactivate; append and length on dynamic spaces) on the
// declared space numbered `space` (-1: none, a dense SNode by name); `in` holds its operands'
// values (the parent cell, the index or value). Throws UserError naming the op within `label`.
std::optional<ir::Value> snode_op(SparseCells& cells, const ir::SNodeOpStmt& s, int space, ir::ScalarKind kind,
                                  const std::vector<ir::Value>& in, const ir::Kernel& k, const std::string& label);

// The field data the cells govern, wherever a backend keeps it: each field's buffer shape (by
// field id; null: no buffer) and a writer of one element (row-major over the buffer), which
// converts the value to the field's element type.
struct CellData {
  std::vector<const ir::Shape*> shapes;
  std::function<void(ir::FieldId, int64_t element, const ir::Value&)> write;
};
// The interpreter's buffers as CellData.
CellData interp_cell_data(const std::vector<Buffer*>& field_bufs);

class SparseCells {
 public:
  // Throws UserError when `k` uses a sparse SNode that is not declared, or a field of a sparse
  // space whose shape is not the space's. `activity` (State::activity, or a backend's copy of it)
  // must hold an entry for every declared sparse space and outlive the binding. Zeroes the data
  // of inactive cells, unless `zero_inactive` is false (the caller knows it is zero already).
  void bind(const ir::Kernel& k, std::map<std::string, std::vector<int64_t>>& activity, CellData data,
            bool zero_inactive = true);
  void bind(const ir::Kernel& k, State& st, const std::vector<Buffer*>& field_bufs) {
    bind(k, st.activity, interp_cell_data(field_bufs));
  }
  // Whether field `f` lies under a sparse space (only then does `reach` do anything).
  bool sparse_field(ir::FieldId f) const {
    return static_cast<size_t>(f) < field_space_.size() && field_space_[static_cast<size_t>(f)] >= 0;
  }
  // Element `offset` (row-major, over the whole buffer) of field `f`: activates the cells above it
  // when `activate`, and says whether they are all live.
  bool reach(ir::FieldId f, int64_t offset, bool activate);
  // The cells a struct for over `space` visits, row-major; nullopt when it visits every cell.
  std::optional<std::vector<int64_t>> visited_cells(const std::string& space);

  // The declared space named `name`, or -1.
  int space(const std::string& name) const;
  // The space's cells per parent cell (its shape when it has no parent).
  const ir::Shape& own_shape(int s) const { return spaces_[static_cast<size_t>(s)].own; }
  ir::SNodeKind kind(int s) const { return spaces_[static_cast<size_t>(s)].kind; }
  // The access chain: cell `index` (of own_shape) under cell `parent` of the space's parent. The
  // methods below throw ir::EvalError for a cell outside the space.
  int64_t child_cell(int s, int64_t parent, int64_t index) const;
  // child_cell, then reach_cell: the cell, or -1 when it is not active (and not activated).
  int64_t lookup(int64_t s, int64_t parent, int64_t index, bool activate) {
    int64_t cell = child_cell(static_cast<int>(s), parent, index);
    return reach_cell(static_cast<int>(s), cell, activate) ? cell : -1;
  }
  // Cell `cell` of space `s` alone (not the spaces above it): activates it when `activate`, and
  // says whether it is active. Dense spaces: always.
  bool reach_cell(int s, int64_t cell, bool activate);
  // The cell of space `s` at `coords` of its full shape; for a dynamic space, `coords` address the
  // parent's cells (the reference indexes a dynamic SNode's ops by its parent).
  int64_t cell_at(int s, const std::vector<int64_t>& coords) const;

  // Whether cell `parent` of the parent of dynamic space `s` is live (activating the cells above
  // it when `activate`); true without a parent.
  bool parent_live(int s, int64_t parent, bool activate);

  // SNode ops on cell `cell` of `s` (a dynamic space: `cell` is the parent's cell). Return what
  // the op gives; throw UserError (naming `where`) when it has no meaning.
  bool is_active(int s, int64_t cell);
  void activate(int s, int64_t cell);
  void deactivate(int s, int64_t cell);
  int64_t length(int s, int64_t parent) const;
  // Appends `value` to the dynamic space's only field under parent cell `parent`; returns its index.
  int64_t append(int s, int64_t parent, const ir::Value& value, const std::string& where);

 private:
  struct Space {
    std::string name;
    ir::SNodeKind kind = ir::SNodeKind::dense;
    ir::Shape full, own, parent_full;  // parent_full padded to full's rank; empty without a parent
    int parent = -1;
    std::vector<int64_t>* activity = nullptr;
    std::vector<ir::FieldId> fields;  // declared in it (companions too)
  };
  // Cell `c` (coordinates over sp.full) of one space alone: activates it when `activate`, and says
  // whether it is active (dense: always; dynamic: its index under its parent cell < the length).
  static bool level_live(const Space& sp, const std::vector<int64_t>& c, bool activate);
  // The space's activity entry `index`; throws ir::EvalError outside it (a chain that reaches the
  // space through another than its parent's cell).
  static int64_t& activity_at(const Space& sp, int64_t index);
  // `coords` over space `s`'s full shape: whether every sparse space from `s` up is live.
  bool reach_coords(int s, const std::vector<int64_t>& coords, bool activate);
  // Per cell of space `s` (row-major over its full shape): whether it and every sparse space above
  // it are live. One pass per level, no allocation per cell.
  std::vector<char> live_map(int s) const;
  // Zeroes every field element under cell `cell` of pointer/bitmasked space `s` (whole cell block)
  // or, for a dynamic space, under parent cell `cell`, and deactivates the sparse spaces' cells
  // below it.
  void zero_under(int s, int64_t cell);

  const ir::Kernel* k_ = nullptr;
  CellData data_;
  std::vector<Space> spaces_;
  std::vector<int> field_space_;  // by field id: its space when that space or one above is sparse, else -1
  bool any_sparse_ = false;
};

}  // namespace pb::runtime::detail
