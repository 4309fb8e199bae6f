// The writer half of ir/json.h (the reader is ir/json.cpp).
#include <fmt/format.h>

#include "ir/json.h"
#include "ir/visitor.h"

namespace pb::ir {

using nlohmann::json;

namespace {

json refs(std::span<Stmt* const> ops) {
  json a = json::array();
  for (const Stmt* s : ops) a.push_back(s ? s->id : -1);
  return a;
}

struct Writer {
  const Kernel& k;

  json block(const Block& b) const {
    json a = json::array();
    for (const Stmt* s : b) a.push_back(stmt(*s));
    return a;
  }

  json stmt(const Stmt& s) const {
    json j;
    j["id"] = s.id;
    j["kind"] = std::string(kind_name(s.kind()));
    if (s.type.known()) j["type"] = to_string(s.type);
    if (s.num_operands()) j["operands"] = refs(s.operands());
    visit(s, [&](const auto& x) { attributes(x, j); });
    return j;
  }

  void attributes(const ConstStmt& s, json& j) const { j["value"] = s.value.to_string(); }
  void attributes(const ArgLoadStmt& s, json& j) const { j["arg"] = s.arg_index; }
  void attributes(const GlobalPtrStmt& s, json& j) const {
    j["field"] = k.field(s.field).name;
    j["activate"] = s.activate;
  }
  void attributes(const ExternalPtrStmt& s, json& j) const {
    if (!s.element_shape.empty()) j["element_shape"] = s.element_shape;
    j["layout"] = s.layout;
    j["is_grad"] = s.is_grad;
    if (s.is_dual) j["is_dual"] = true;
  }
  void attributes(const GlobalLoadStmt& s, json& j) const {
    if (s.is_volatile) j["volatile"] = true;
  }
  void attributes(const AtomicOpStmt& s, json& j) const { j["op"] = std::string(op_name(s.op)); }
  void attributes(const UnaryOpStmt& s, json& j) const { j["op"] = std::string(op_name(s.op)); }
  void attributes(const BinaryOpStmt& s, json& j) const { j["op"] = std::string(op_name(s.op)); }
  void attributes(const IfStmt& s, json& j) const {
    j["then"] = block(*s.true_block);
    if (s.false_block) j["else"] = block(*s.false_block);
  }
  void attributes(const RangeForStmt& s, json& j) const {
    j["reversed"] = s.reversed;
    j["block_dim"] = s.block_dim;
    if (!s.loop_name.empty()) j["loop_name"] = s.loop_name;
    j["body"] = block(*s.body);
  }
  void attributes(const StructForStmt& s, json& j) const {
    j["space"] = s.space;
    j["none_marker"] = s.none_marker;
    j["block_dim"] = s.block_dim;
    j["body"] = block(*s.body);
  }
  void attributes(const LoopIndexStmt& s, json& j) const { j["axis"] = s.axis; }
  void attributes(const WhileStmt& s, json& j) const { j["body"] = block(*s.body); }
  void attributes(const AdStackAllocaStmt& s, json& j) const {
    j["max_size"] = s.max_size;
    if (s.size) j["size"] = to_string(*s.size);
  }
  void attributes(const PrintStmt& s, json& j) const {
    json items = json::array();
    for (const auto& it : s.items) {
      if (const auto* t = std::get_if<std::string>(&it))
        items.push_back({{"text", *t}});
      else
        items.push_back({{"operand", std::get<size_t>(it)}});
    }
    j["items"] = items;
  }
  void attributes(const AssertStmt& s, json& j) const { j["message"] = s.message; }
  void attributes(const OffloadedStmt& s, json& j) const {
    j["task"] = std::string(task_type_name(s.task));
    auto bound = [](const TaskBound& b) -> json {
      switch (b.kind) {
        case TaskBound::Kind::constant:
          return {{"const", b.value}};
        case TaskBound::Kind::temporary:
          return {{"tmp_offset", b.value}};
        case TaskBound::Kind::operand:
          return {{"operand", b.value}};
      }
      return nullptr;
    };
    if (s.task == TaskType::range_for) {
      j["begin"] = bound(s.begin);
      j["end"] = bound(s.end);
    }
    j["grid_dim"] = s.grid_dim;
    j["block_dim"] = s.block_dim;
    if (!s.snode.empty()) j["snode"] = s.snode;
    if (!s.parent_snode.empty()) j["parent_snode"] = s.parent_snode;
    if (s.task == TaskType::struct_for || s.task == TaskType::mesh_for) j["bls"] = s.bls;
    if (s.task == TaskType::mesh_for) {
      j["mesh_from"] = mesh_element_name(s.mesh_from);
      if (s.mesh_to) j["mesh_to"] = mesh_element_name(*s.mesh_to);
      j["num_patches"] = s.num_patches;
    }
    if (!s.loop_name.empty()) j["loop_name"] = s.loop_name;
    if (s.gdw_level >= 0) j["gdw_level"] = s.gdw_level;
    auto blocks = s.blocks();
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i]) j[kTaskBlockKeys[i]] = block(*blocks[i]);
  }
  void attributes(const GlobalTemporaryStmt& s, json& j) const { j["offset"] = s.offset; }
  void attributes(const ThreadLocalPtrStmt& s, json& j) const { j["offset"] = s.offset; }
  void attributes(const GetRootStmt& s, json& j) const {
    if (!s.form.empty()) j["form"] = s.form;
  }
  void attributes(const SNodeLookupStmt& s, json& j) const {
    j["snode"] = s.snode;
    j["snode_type"] = s.snode_type;
    j["activate"] = s.activate;
  }
  void attributes(const GetChStmt& s, json& j) const {
    j["from"] = s.from;
    j["to"] = s.to;
  }
  void attributes(const LinearizeStmt& s, json& j) const { j["strides"] = s.strides; }
  void attributes(const IntegerOffsetStmt& s, json& j) const { j["offset"] = s.offset; }
  void attributes(const BitExtractStmt& s, json& j) const {
    j["bit_begin"] = s.bit_begin;
    j["bit_end"] = s.bit_end;
    if (s.legacy) j["legacy"] = true;
  }
  void attributes(const LoopUniqueStmt& s, json& j) const {
    if (!s.covers.empty()) j["covers"] = s.covers;
  }
  void attributes(const RangeAssumptionStmt& s, json& j) const {
    j["low"] = s.low;
    j["high"] = s.high;
  }
  void attributes(const DecorationStmt& s, json& j) const {
    j["loop_unique"] = s.loop_unique;
    j["number"] = s.number;
  }
  void attributes(const ExternalTensorShapeAlongAxisStmt& s, json& j) const {
    j["axis"] = s.axis;
    j["arg_id"] = s.arg_id;
    if (!s.bracketed) j["bracketed"] = false;
  }
  void attributes(const SNodePtrStmt& s, json& j) const {
    j["snode"] = s.snode;
    j["activate"] = s.activate;
  }
  void attributes(const SNodeOpStmt& s, json& j) const {
    j["op"] = s.op;
    j["snode"] = s.snode;
    j["has_ptr"] = s.has_ptr;
  }
  void attributes(const InternalFuncStmt& s, json& j) const { j["name"] = s.func_name; }
  void attributes(const BlockCornerIndexStmt& s, json& j) const { j["axis"] = s.axis; }
  void attributes(const FuncCallStmt& s, json& j) const { j["func"] = s.func; }
  void attributes(const BitStructStoreStmt& s, json& j) const {
    j["ch_ids"] = s.ch_ids;
    j["atomic"] = s.is_atomic;
  }
  void attributes(const GetElementStmt& s, json& j) const { j["index"] = s.index; }
  void attributes(const MatrixOfGlobalPtrStmt& s, json& j) const {
    json names = json::array();
    for (FieldId f : s.fields) names.push_back(k.field(f).name);
    j["fields"] = names;
    j["activate"] = s.activate;
  }
  void attributes(const ExternalTensorBasePtrStmt& s, json& j) const {
    j["arg_id"] = s.arg_id;
    j["is_grad"] = s.is_grad;
  }
  void attributes(const MeshForStmt& s, json& j) const {
    j["from"] = mesh_element_name(s.from);
    if (s.to) j["to"] = mesh_element_name(*s.to);
    j["scratch_pad"] = s.scratch_pad;
    j["body"] = block(*s.body);
  }
  void attributes(const MeshRelationAccessStmt& s, json& j) const { j["to"] = mesh_element_name(s.to); }
  void attributes(const MeshIndexConversionStmt& s, json& j) const {
    j["conversion"] = mesh_conversion_key(s.conversion);
    j["element"] = mesh_element_name(s.element);
  }
  // Kinds with no attributes beyond id, type and operands.
  void attributes(const MeshPatchIndexStmt&, json&) const {}
  void attributes(const MatrixInitStmt&, json&) const {}
  void attributes(const MatrixPtrStmt&, json&) const {}
  void attributes(const MatrixOfMatrixPtrStmt&, json&) const {}
  void attributes(const AllocaStmt&, json&) const {}
  void attributes(const LocalLoadStmt&, json&) const {}
  void attributes(const LocalStoreStmt&, json&) const {}
  void attributes(const GlobalStoreStmt&, json&) const {}
  void attributes(const TernaryOpStmt&, json&) const {}
  void attributes(const WhileControlStmt&, json&) const {}
  void attributes(const ContinueStmt& s, json& j) const {
    if (s.scoped) j["scoped"] = true;
  }
  void attributes(const AdStackPushStmt&, json&) const {}
  void attributes(const AdStackPopStmt&, json&) const {}
  void attributes(const AdStackLoadTopStmt&, json&) const {}
  void attributes(const AdStackLoadTopAdjStmt&, json&) const {}
  void attributes(const AdStackAccAdjointStmt&, json&) const {}
  void attributes(const LoopLinearIndexStmt&, json&) const {}
  void attributes(const ReturnStmt&, json&) const {}
  void attributes(const RandStmt&, json&) const {}
  void attributes(const BlockLocalPtrStmt&, json&) const {}
  void attributes(const ReferenceStmt&, json&) const {}
};

json shape_json(const std::optional<Shape>& s) { return s ? json(*s) : json(nullptr); }

}  // namespace

json to_json(const Kernel& k) {
  json j;
  j["format"] = "passbench-ir";
  j["version"] = 1;
  if (!k.name.empty()) j["name"] = k.name;
  json fields = json::array();
  for (const Field& f : k.fields()) {
    json fj = {{"name", f.name},
               {"dtype", to_string(f.cell_type())},
               {"shape", shape_json(f.shape)},
               {"declared", f.declared}};
    if (f.grad) fj["grad"] = k.field(*f.grad).name;
    if (f.dual) fj["dual"] = k.field(*f.dual).name;
    if (f.primal) fj["primal"] = k.field(*f.primal).name;
    if (!f.space.empty()) fj["space"] = f.space;
    fields.push_back(fj);
  }
  j["fields"] = fields;
  json spaces = json::array();
  for (const IndexSpace& s : k.spaces) {
    json sp = {{"name", s.name}, {"shape", shape_json(s.shape)}, {"declared", s.declared}};
    if (s.kind != SNodeKind::dense) sp["kind"] = snode_kind_name(s.kind);
    if (!s.parent.empty()) sp["parent"] = s.parent;
    spaces.push_back(std::move(sp));
  }
  j["spaces"] = spaces;
  json args = json::array();
  for (const ArgDecl& a : k.args) {
    json j = {{"index", a.index}, {"dtype", to_string(a.element_type())}, {"ndarray", a.ndarray}, {"ndim", a.ndim}};
    if (a.element_of >= 0) {
      j["element_of"] = a.element_of;
      j["element"] = a.element;
    }
    args.push_back(std::move(j));
  }
  j["args"] = args;
  j["body"] = Writer{k}.block(k.root());
  return j;
}

}  // namespace pb::ir
