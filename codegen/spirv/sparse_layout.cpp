#include "codegen/spirv/sparse_layout.h"

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/statements.h"
#include "ir/visitor.h"

namespace pb::codegen::spirv::detail {
namespace {

constexpr int64_t kMaxWords = int64_t{1} << 30;  // words of the activity binding (4 GiB of u32)

int64_t cells_of(const ir::Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n = e <= 0 ? 0 : (n > kMaxWords / e ? kMaxWords + 1 : n * e);
  return n;
}

}  // namespace

int SparseLayout::find(const std::string& name) const {
  if (name.empty()) return -1;
  for (size_t i = 0; i < spaces.size(); ++i)
    if (spaces[i].name == name) return static_cast<int>(i);
  return -1;
}

int SparseLayout::field_space(const ir::Kernel& k, ir::FieldId f) const {
  int s = find(k.field(f).space);
  return s >= 0 && spaces[static_cast<size_t>(s)].under_sparse ? s : -1;
}

SparseLayout plan_sparse(const ir::Kernel& k) {
  // An undeclared sparse SNode's cells would be taken for a dense space's.
  ir::walk(k.root(), [&](const ir::Stmt& s) {
    if (auto problem = ir::snode_use_problem(k, s)) throw UserError(problem->message, problem->remedy);
  });
  SparseLayout l;
  bool any = false;
  for (const ir::IndexSpace& sp : k.spaces) {
    SparseSpace s;
    if (sp.declared && sp.shape) {
      s.name = sp.name;
      s.kind = sp.kind;
      s.full = s.own = *sp.shape;
      if (!sp.parent.empty()) s.parent = l.find(sp.parent);
      if (s.parent >= 0) {
        const SparseSpace& up = l.spaces[static_cast<size_t>(s.parent)];
        s.parent_full = ir::padded_parent_shape(up.full, s.full.size());
        for (size_t d = 0; d < s.full.size(); ++d) s.own[d] = s.parent_full[d] ? s.full[d] / s.parent_full[d] : 0;
        s.under_sparse = up.under_sparse;
      }
      s.under_sparse = s.under_sparse || s.sparse();
      any = any || s.sparse();
      if (cells_of(s.full) > kMaxWords)
        throw UserError(fmt::format("the SPIR-V backend numbers cells in 32 bits, and space '{}' of shape {} has more "
                                    "cells than it holds",
                                    sp.name, ir::shape_to_string(s.full)),
                        "give the space a smaller shape, or run the kernel on --backend=cpu or interp");
    }
    l.spaces.push_back(std::move(s));
  }
  if (!any) return SparseLayout{};
  for (size_t i = 0; i < k.fields().size(); ++i) {
    const ir::Field& f = k.fields()[i];
    int s = l.find(f.space);
    if (s < 0) continue;
    SparseSpace& sp = l.spaces[static_cast<size_t>(s)];
    sp.fields.push_back(static_cast<ir::FieldId>(i));
    if (!sp.under_sparse) continue;
    if (f.tensor != 0)
      throw UserError(
          fmt::format("field '{}' holds tensors and lives in a sparse space, which is not compiled", f.name),
          "run the scalarize pass first (`--passes=scalarize`)");
    if (f.shape && *f.shape != sp.full)
      throw UserError(fmt::format("field '{}' has shape {}, but its sparse space '{}' has shape {}", f.name,
                                  ir::shape_to_string(*f.shape), f.space, ir::shape_to_string(sp.full)),
                      "give a field in a sparse space the space's full shape");
  }
  int64_t words = 0;
  for (SparseSpace& sp : l.spaces) {
    if (!sp.sparse()) continue;
    ir::Shape entries = sp.full;
    if (sp.kind == ir::SNodeKind::dynamic)
      entries = sp.parent < 0 ? ir::Shape{} : l.spaces[static_cast<size_t>(sp.parent)].full;
    sp.word = static_cast<uint32_t>(words);
    sp.words = static_cast<uint32_t>(cells_of(entries));
    words += sp.words;
  }
  ir::walk(k.root(), [&](const ir::Stmt& st) {
    const std::string* walked = nullptr;
    if (const auto* sf = ir::dyn_cast<ir::StructForStmt>(&st)) walked = &sf->space;
    if (const auto* o = ir::dyn_cast<ir::OffloadedStmt>(&st); o && o->task == ir::TaskType::struct_for)
      walked = &o->snode;
    int s = walked ? l.find(*walked) : -1;
    if (s < 0) return;
    SparseSpace& sp = l.spaces[static_cast<size_t>(s)];
    if (!sp.under_sparse || sp.list_word >= 0) return;
    sp.list_word = words;
    words += cells_of(sp.full);
  });
  if (words > kMaxWords)
    throw UserError(fmt::format("the sparse spaces' activity and cell lists take {} words, more than the SPIR-V "
                                "backend's {}",
                                words, kMaxWords),
                    "give the sparse spaces smaller shapes, or run the kernel on --backend=cpu or interp");
  l.words = static_cast<uint32_t>(std::max<int64_t>(words, 1));
  return l;
}

std::vector<SparseRange> activity_ranges(const SparseLayout& l) {
  std::vector<SparseRange> out;
  for (const SparseSpace& sp : l.spaces)
    if (sp.sparse()) out.push_back({sp.name, sp.word, sp.words});
  return out;
}

}  // namespace pb::codegen::spirv::detail
