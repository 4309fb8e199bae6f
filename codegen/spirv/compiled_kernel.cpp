#include "codegen/spirv/compiled_kernel.h"

namespace pb::codegen::spirv {

std::string_view binding_kind_name(BindingKind k) {
  switch (k) {
    case BindingKind::field:
      return "field";
    case BindingKind::grad_field:
      return "grad_field";
    case BindingKind::ndarray:
      return "ndarray";
    case BindingKind::ndarray_grad:
      return "ndarray_grad";
    case BindingKind::ndarray_dual:
      return "ndarray_dual";
    case BindingKind::temps:
      return "temps";
    case BindingKind::heap:
      return "heap";
    case BindingKind::flags:
      return "flags";
    case BindingKind::activity:
      return "activity";
  }
  return "?";
}

std::string_view task_kind_name(TaskKind k) {
  switch (k) {
    case TaskKind::serial:
      return "serial";
    case TaskKind::range_for:
      return "range_for";
    case TaskKind::struct_for:
      return "struct_for";
  }
  return "?";
}

namespace {

std::string_view push_kind_name(PushConstant::Kind k) {
  switch (k) {
    case PushConstant::Kind::arg:
      return "arg";
    case PushConstant::Kind::field_extent:
      return "field_extent";
    case PushConstant::Kind::ndarray_extent:
      return "ndarray_extent";
    case PushConstant::Kind::space_extent:
      return "space_extent";
  }
  return "?";
}

nlohmann::json bound_json(const RangeBound& b) {
  nlohmann::json j{{"source", b.source}};
  if (b.constant) j["constant"] = *b.constant;
  return j;
}

}  // namespace

nlohmann::json to_json(const CompiledKernel& k) {
  nlohmann::json j;
  j["kernel"] = k.kernel_name;
  j["lowering"] = lowering_name(k.options);
  j["bindings"] = nlohmann::json::array();
  for (const Binding& b : k.bindings) {
    nlohmann::json e{{"set", b.set},
                     {"binding", b.binding},
                     {"kind", binding_kind_name(b.kind)},
                     {"name", b.name},
                     {"element", ir::scalar_name(b.element)},
                     {"storage_type", b.storage_type}};
    if (b.field >= 0) e["field"] = b.field;
    if (b.arg >= 0) e["arg"] = b.arg;
    if (b.elements) e["elements"] = *b.elements;
    if (b.ambient) e["ambient"] = true;
    j["bindings"].push_back(e);
  }
  j["push_constants"] = nlohmann::json::array();
  for (const PushConstant& p : k.push_constants) {
    nlohmann::json e{
        {"name", p.name}, {"kind", push_kind_name(p.kind)}, {"offset", p.offset}, {"type", ir::scalar_name(p.type)}};
    if (p.index >= 0) e["index"] = p.index;
    if (!p.space.empty()) e["space"] = p.space;
    if (p.axis >= 0) e["axis"] = p.axis;
    j["push_constants"].push_back(e);
  }
  j["push_constant_bytes"] = k.push_constant_bytes;
  j["temps_words"] = k.temps_words;
  if (!k.returns.empty()) {
    nlohmann::json types = nlohmann::json::array();
    for (ir::ScalarKind t : k.returns) types.push_back(ir::scalar_name(t));
    j["returns"] = {{"types", types}, {"word", k.return_word}};
  }
  j["tasks"] = nlohmann::json::array();
  for (const TaskInfo& t : k.tasks) {
    nlohmann::json e{{"name", t.name},
                     {"kind", task_kind_name(t.kind)},
                     {"workgroup_size", t.workgroup_size},
                     {"bindings", t.bindings},
                     {"spirv_words", t.spirv.size()}};
    if (t.loop_stmt_id >= 0) e["loop"] = t.loop_stmt_id;
    if (t.kind == TaskKind::range_for) {
      e["begin"] = bound_json(t.begin);
      e["end"] = bound_json(t.end);
    }
    if (t.kind == TaskKind::struct_for) {
      e["space"] = t.space;
      nlohmann::json shape = nlohmann::json::array();
      for (const auto& x : t.space_shape) shape.push_back(x ? nlohmann::json(*x) : nlohmann::json(nullptr));
      e["space_shape"] = shape;
    }
    if (t.invocations) e["invocations"] = *t.invocations;
    if (t.streaming) e["streaming"] = true;
    if (t.unroll > 1) e["unroll"] = t.unroll;
    if (t.vector > 1) e["vector"] = t.vector;
    if (!t.stacks.empty()) {
      e["heap_stride_words"] = t.heap_stride_words;
      for (const StackLayout& s : t.stacks) {
        nlohmann::json sj{{"stack_id", s.stack_id},
                          {"stmt", s.stmt_id},
                          {"element", ir::scalar_name(s.element)},
                          {"capacity", s.capacity}};
        if (!s.size_expr.empty()) sj["size_expr"] = s.size_expr;
        if (k.options.storage == StackStorage::heap) {
          sj["heap_offset"] = s.heap_offset;
          sj["heap_words"] = s.heap_words;
        }
        e["stacks"].push_back(sj);
      }
    }
    j["tasks"].push_back(e);
  }
  j["asserts"] = nlohmann::json::array();
  for (const AssertInfo& a : k.asserts)
    j["asserts"].push_back({{"code", a.code}, {"stmt", a.stmt_id}, {"message", a.message}});
  if (!k.problems.empty()) {
    j["problems"] = nlohmann::json::array();
    for (const ProblemInfo& p : k.problems)
      j["problems"].push_back({{"code", p.code}, {"stmt", p.stmt_id}, {"message", p.message}});
  }
  if (!k.activity.empty()) {
    j["activity"] = nlohmann::json::array();
    for (const SparseRange& r : k.activity)
      j["activity"].push_back({{"space", r.space}, {"word", r.word}, {"words", r.words}});
  }
  j["flags"] = {{"stack_overflow", kFlagStackOverflow},
                {"assert", kFlagAssert},
                {"step_budget", kFlagStepBudget},
                {"loop_cut", kFlagLoopCut}};
  j["notes"] = k.notes;
  return j;
}

}  // namespace pb::codegen::spirv
