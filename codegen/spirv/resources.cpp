#include "codegen/spirv/resources.h"

#include <fmt/format.h>

#include <set>

#include "ir/assert.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv::detail {
namespace {

using ir::ScalarKind;

std::string storage_name(ScalarKind k) {
  switch (k) {
    case ScalarKind::f32:
    case ScalarKind::f16:  // stored as the f32 it rounds to
      return "float";
    case ScalarKind::f64:
      return "double";
    case ScalarKind::i32:
      return "int";
    case ScalarKind::i64:
      return "int64";
    case ScalarKind::u64:
      return "uint64";
    default:
      return "uint";  // u32, and u1 stored as 0/1
  }
}

uint32_t size_of(ScalarKind k) { return ir::bit_width(k) == 64 ? 8 : 4; }

// Statements that LoweringOptions::run_time_checks checks, through the flags buffer.
bool run_time_checked(const ir::Stmt& s) {
  return ir::isa<ir::GlobalPtrStmt>(&s) || ir::isa<ir::ExternalPtrStmt>(&s) || ir::isa<ir::AdStackPopStmt>(&s) ||
         ir::isa<ir::AdStackLoadTopStmt>(&s) || ir::isa<ir::AdStackLoadTopAdjStmt>(&s) ||
         ir::isa<ir::AdStackAccAdjointStmt>(&s);
}

class Assigner {
 public:
  Assigner(const ir::Kernel& k, const KernelPlan& plan, const LoweringOptions& o) : k_(k), plan_(plan), o_(o) {}

  KernelResources run() {
    r_.sparse = plan_sparse(k_);
    std::map<int, size_t> field_rank;
    std::map<std::pair<int, int>, size_t> ndarray_rank;
    std::map<int, ScalarKind> ndarray_kind;
    std::map<int, ScalarKind> scalar_args;
    std::set<std::pair<int, int>> shape_reads;  // (arg, axis) of external_tensor_shape_along_axis
    std::vector<const ir::Stmt*> struct_fors;   // struct fors and offloaded struct_for tasks
    bool has_assert = false;
    ir::walk(k_.root(), [&](ir::Stmt& s) {
      if (auto* g = ir::dyn_cast<ir::GlobalPtrStmt>(&s)) {
        field_rank[g->field] = g->indices().size();
      } else if (auto* e = ir::dyn_cast<ir::ExternalPtrStmt>(&s)) {
        int arg = ir::dyn_cast<ir::ArgLoadStmt>(e->base())->arg_index;
        size_t& rank = ndarray_rank[{arg, ndarray_array(*e)}];
        rank = std::max(rank, e->indices().size());
        ndarray_kind[arg] = e->type.scalar;
      } else if (auto* sh = ir::dyn_cast<ir::ExternalTensorShapeAlongAxisStmt>(&s); sh && sh->arg_id.size() == 1) {
        shape_reads.insert({sh->arg_id[0], sh->axis});
      } else if (auto* a = ir::dyn_cast<ir::ArgLoadStmt>(&s); a && !a->type.pointer) {
        scalar_args[a->arg_index] = a->type.scalar;
      } else if (auto* ch = ir::dyn_cast<ir::GetChStmt>(&s); ch && !ch->type.gen) {
        if (auto f = k_.find_field(ch->to)) field_rank.try_emplace(*f, 0);  // a place: the field's cells
      } else if (const auto* o = ir::dyn_cast<ir::OffloadedStmt>(&s);
                 ir::isa<ir::StructForStmt>(&s) || (o && o->task == ir::TaskType::struct_for)) {
        struct_fors.push_back(&s);
      } else if (ir::isa<ir::AssertStmt>(&s) || ir::isa<ir::SNodeOpStmt>(&s) || ir::isa<ir::SNodePtrStmt>(&s) ||
                 (ir::isa<ir::WhileStmt>(&s) && o_.while_budget) ||
                 ((ir::isa<ir::WhileStmt>(&s) || ir::isa<ir::RangeForStmt>(&s)) && o_.check_loop_exits)) {
        has_assert = true;  // an assert's or SNode problem's flag word, or the step-budget and loop-cut ones
      }
      if (o_.run_time_checks && run_time_checked(s)) has_assert = true;  // the problem word
    });
    // Deactivating a cell zeroes every field under it, so all of them are bound.
    for (const SparseSpace& sp : r_.sparse.spaces)
      if (sp.under_sparse)
        for (ir::FieldId f : sp.fields) field_rank.try_emplace(f, sp.full.size());
    for (const auto& [field, rank] : field_rank) add_field(field, rank);
    for (const auto& [key, rank] : ndarray_rank) {
      static constexpr BindingKind kinds[] = {BindingKind::ndarray, BindingKind::ndarray_grad,
                                              BindingKind::ndarray_dual};
      static constexpr const char* suffix[] = {"", " grad", " dual"};
      Binding b =
          make(kinds[key.second], fmt::format("arg {}{}", key.first, suffix[key.second]), ndarray_kind[key.first]);
      b.arg = key.first;
      r_.ndarray_binding[key] = add(std::move(b));
    }
    if (plan_.temps_words) r_.temps = add(make(BindingKind::temps, "temps", ScalarKind::u32));
    bool has_stacks = !plan_.stack_id.empty();
    if (has_stacks && o_.storage == StackStorage::heap) r_.heap = add(make(BindingKind::heap, "heap", ScalarKind::u32));
    if (!r_.sparse.empty()) {
      Binding b = make(BindingKind::activity, "activity", ScalarKind::u32);
      b.elements = r_.sparse.words;
      r_.activity = add(std::move(b));
    }
    if ((has_stacks && o_.bounds_check) || has_assert || !r_.sparse.empty()) {
      Binding b = make(BindingKind::flags, "flags", ScalarKind::u32);
      b.elements = kNumFlagWords;
      r_.flags = add(std::move(b));
    }

    for (const auto& [arg, kind] : scalar_args) {
      ScalarKind stored = kind == ScalarKind::u1 ? ScalarKind::u32 : kind;
      r_.arg_member[arg] = push({PushConstant::Kind::arg, fmt::format("arg{}", arg), 0, stored, arg, "", -1});
    }
    for (const auto& [field, rank] : field_rank) {
      const ir::Field& f = k_.field(field);
      if (f.shape) continue;
      for (size_t axis = o_.run_time_checks ? 0 : 1; axis < rank; ++axis)
        r_.field_extent_member[{field, static_cast<int>(axis)}] =
            push({PushConstant::Kind::field_extent, fmt::format("extent_{}_{}", f.name, axis), 0, ScalarKind::u32,
                  field, "", static_cast<int>(axis)});
    }
    for (const auto& [key, rank] : ndarray_rank)
      for (size_t axis = o_.run_time_checks ? 0 : 1; axis < rank; ++axis)
        if (!r_.ndarray_extent_member.count({key.first, static_cast<int>(axis)}))
          r_.ndarray_extent_member[{key.first, static_cast<int>(axis)}] =
              push({PushConstant::Kind::ndarray_extent, fmt::format("extent_arg{}_{}", key.first, axis), 0,
                    ScalarKind::u32, key.first, "", static_cast<int>(axis)});
    for (const auto& [arg, axis] : shape_reads)
      if (!r_.ndarray_extent_member.count({arg, axis}))
        r_.ndarray_extent_member[{arg, axis}] =
            push({PushConstant::Kind::ndarray_extent, fmt::format("extent_arg{}_{}", arg, axis), 0, ScalarKind::u32,
                  arg, "", axis});
    for (const ir::Stmt* sf : struct_fors) {
      if (struct_for_shape(k_, *sf)) continue;
      const std::string& space = iterated_space(*sf);
      for (int axis = 0; axis < struct_for_rank(k_, *sf); ++axis)
        if (!r_.space_extent_member.count({space, axis}))
          r_.space_extent_member[{space, axis}] =
              push({PushConstant::Kind::space_extent, fmt::format("extent_{}_{}", space, axis), 0, ScalarKind::u32, -1,
                    space, axis});
    }
    return std::move(r_);
  }

 private:
  Binding make(BindingKind kind, std::string name, ScalarKind element) {
    Binding b;
    b.kind = kind;
    b.name = std::move(name);
    b.element = element;
    b.storage_type = storage_name(element);
    return b;
  }
  uint32_t add(Binding b) {
    b.binding = static_cast<uint32_t>(r_.bindings.size());
    r_.bindings.push_back(std::move(b));
    return r_.bindings.back().binding;
  }
  void add_field(int id, size_t) {
    const ir::Field& f = k_.field(id);
    Binding b = make(f.primal ? BindingKind::grad_field : BindingKind::field, f.name, f.dtype);
    b.field = id;
    b.ambient = r_.sparse.field_space(k_, id) >= 0;
    if (f.shape) {
      uint64_t n = 1;
      for (int64_t e : *f.shape) n *= static_cast<uint64_t>(e);
      b.elements = n;
    }
    r_.field_binding[id] = add(std::move(b));
  }
  uint32_t push(PushConstant p) {
    uint32_t size = size_of(p.type);
    r_.push_constant_bytes = (r_.push_constant_bytes + size - 1) / size * size;
    p.offset = r_.push_constant_bytes;
    r_.push_constant_bytes += size;
    r_.push_constants.push_back(std::move(p));
    return static_cast<uint32_t>(r_.push_constants.size() - 1);
  }

  const ir::Kernel& k_;
  const KernelPlan& plan_;
  const LoweringOptions& o_;
  KernelResources r_;
};

}  // namespace

const std::string& iterated_space(const ir::Stmt& loop) {
  if (const auto* o = ir::dyn_cast<ir::OffloadedStmt>(&loop)) return o->snode;
  const auto* sf = ir::dyn_cast<ir::StructForStmt>(&loop);
  PB_ASSERT(sf, "iterated_space of a statement that is not a struct for");
  return sf->space;
}

std::optional<ir::Shape> struct_for_shape(const ir::Kernel& k, const ir::Stmt& loop) {
  const std::string& space = iterated_space(loop);
  if (const ir::IndexSpace* sp = k.find_space(space); sp && sp->shape) return sp->shape;
  if (auto f = k.find_field(space); f && k.field(*f).shape) return k.field(*f).shape;
  return std::nullopt;
}

int struct_for_rank(const ir::Kernel& k, const ir::Stmt& loop) {
  if (auto shape = struct_for_shape(k, loop)) return static_cast<int>(shape->size());
  int rank = 1;
  for (const ir::Block* b : loop.blocks())
    if (b)
      ir::walk(*b, [&](ir::Stmt& st) {
        if (auto* li = ir::dyn_cast<ir::LoopIndexStmt>(&st); li && li->loop() == &loop)
          rank = std::max(rank, li->axis + 1);
      });
  return rank;
}

KernelResources assign_resources(const ir::Kernel& k, const KernelPlan& plan, const LoweringOptions& o) {
  return Assigner(k, plan, o).run();
}

}  // namespace pb::codegen::spirv::detail
