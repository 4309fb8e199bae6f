#include "runtime/cpu/sparse_host.h"

#include <fmt/format.h>

#include <cstring>

#include "ir/eval.h"
#include "ir/printer.h"
#include "runtime/cpu/cpu_impl.h"

namespace pb::runtime::cpu::detail {

namespace {

// The packed buffers as the cells' data: row-major elements of each field's declared type.
runtime::detail::CellData packed_data(const CpuKernel& ck, DeviceMemory& m) {
  runtime::detail::CellData d;
  const ir::Kernel& k = ck.kernel();
  d.shapes.assign(k.fields().size(), nullptr);
  for (const auto& [id, shape] : ck.shapes().fields) d.shapes[static_cast<size_t>(id)] = &shape;
  d.write = [&k, &m](ir::FieldId f, int64_t element, const ir::Value& v) {
    void* base = static_cast<size_t>(f) < m.field_ptrs.size() ? m.field_ptrs[static_cast<size_t>(f)] : nullptr;
    if (!base) return;
    ir::ScalarKind kind = k.field(f).dtype;
    char* at = static_cast<char*>(base) + element * element_bytes(kind);
    if (v.is_zero())  // zeroing under inactive cells, most of what is written: every kind's 0 is all zero bits
      std::memset(at, 0, static_cast<size_t>(element_bytes(kind)));
    else
      store_value(at, v.cast_to(kind), kind);
  };
  return d;
}

}  // namespace

SparseHost::SparseHost(const CpuKernel& ck, DeviceMemory& m) : ck_(ck) {
  cells_.bind(ck.kernel(), m.activity, packed_data(ck, m), !m.inactive_zeroed);
  m.inactive_zeroed = true;
  for (const auto& site : ck.info().sparse_sites) site_space_.push_back(cells_.space(site.snode));
}

std::vector<int64_t> SparseHost::cells(const std::string& space) {
  std::lock_guard lock(mu_);
  auto listed = cells_.visited_cells(space);
  if (listed) return std::move(*listed);
  std::vector<int64_t> all(static_cast<size_t>(num_elements(ck_.shapes().spaces.at(space))));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return all;
}

void SparseHost::keep(const std::string& message, const std::string& remedy) {
  if (!problem_) problem_ = Diagnostic::plain(message, remedy);
}

std::string SparseHost::at(const ir::Stmt& s) const {
  const ir::Kernel& k = ck_.kernel();
  return fmt::format("at `{}` in {}", ir::print_stmt(s, k),
                     k.name.empty() ? "kernel" : fmt::format("kernel \"{}\"", k.name));
}

void SparseHost::throw_if_failed(const std::string& task) const {
  if (problem_) throw UserError(fmt::format("{} (cpu, task {})", problem_->message, task), problem_->remedy);
}

bool SparseHost::reach(int32_t field, int64_t element, bool activate) {
  std::lock_guard lock(mu_);
  if (!cells_.sparse_field(field)) return true;
  try {
    return cells_.reach(field, element, activate);
  } catch (const ir::EvalError& e) {
    keep(fmt::format("{} (field '{}')", e.message, ck_.kernel().field(field).name), e.remedy);
    return false;
  }
}

int64_t SparseHost::lookup(int32_t site, int64_t parent, int64_t index) {
  std::lock_guard lock(mu_);
  const auto& s = ck_.info().sparse_sites.at(static_cast<size_t>(site));
  if (parent < 0) return -1;  // under a cell the chain did not reach
  try {
    return cells_.lookup(site_space_[static_cast<size_t>(site)], parent, index, s.activate);
  } catch (const ir::EvalError& e) {
    keep(fmt::format("{} {}", e.message, at(*s.stmt)), e.remedy);
    return -1;
  }
}

void SparseHost::snode_op(int32_t site, uint64_t* words) {
  std::lock_guard lock(mu_);
  const auto& s = ck_.info().sparse_sites.at(static_cast<size_t>(site));
  std::vector<ir::Value> in;
  in.reserve(s.operand_kinds.size());
  for (size_t i = 0; i < s.operand_kinds.size(); ++i) in.push_back(load_value(&words[i], s.operand_kinds[i]));
  const ir::Kernel& k = ck_.kernel();
  std::optional<ir::Value> v;
  try {
    v = runtime::detail::snode_op(cells_, *ir::dyn_cast<ir::SNodeOpStmt>(s.stmt),
                                  site_space_[static_cast<size_t>(site)],
                                  s.result == ir::ScalarKind::unknown ? ir::ScalarKind::i32 : s.result, in, k,
                                  k.name.empty() ? "kernel" : fmt::format("kernel \"{}\"", k.name));
  } catch (const UserError& e) {
    keep(e.diagnostic().message, e.diagnostic().remedy);
  }
  words[0] = 0;
  if (v && s.result != ir::ScalarKind::unknown) store_value(&words[0], v->cast_to(s.result), s.result);
}

int64_t* SparseHost::cell_list(int32_t site, int64_t* count) {
  std::vector<int64_t> listed = cells(ck_.info().sparse_sites.at(static_cast<size_t>(site)).snode);
  *count = static_cast<int64_t>(listed.size());
  auto* out = new int64_t[std::max<size_t>(listed.size(), 1)];
  std::copy(listed.begin(), listed.end(), out);
  return out;
}

namespace {

extern "C" int32_t pb_cpu_sparse_reach_callback(void* host, int32_t field, int64_t element, int32_t activate) {
  return static_cast<SparseHost*>(host)->reach(field, element, activate != 0) ? 1 : 0;
}
extern "C" int64_t pb_cpu_sparse_lookup_callback(void* host, int32_t site, int64_t parent, int64_t index) {
  return static_cast<SparseHost*>(host)->lookup(site, parent, index);
}
extern "C" void pb_cpu_snode_op_callback(void* host, int32_t site, uint64_t* words) {
  static_cast<SparseHost*>(host)->snode_op(site, words);
}
extern "C" int64_t* pb_cpu_cell_list_callback(void* host, int32_t site, int64_t* count) {
  return static_cast<SparseHost*>(host)->cell_list(site, count);
}
extern "C" void pb_cpu_free_cell_list_callback(void* /*host*/, int64_t* list) { delete[] list; }

}  // namespace

void add_sparse_callbacks(HostCallbacks& c) {
  c.sparse_reach = reinterpret_cast<void*>(&pb_cpu_sparse_reach_callback);
  c.sparse_lookup = reinterpret_cast<void*>(&pb_cpu_sparse_lookup_callback);
  c.snode_op = reinterpret_cast<void*>(&pb_cpu_snode_op_callback);
  c.cell_list = reinterpret_cast<void*>(&pb_cpu_cell_list_callback);
  c.free_cell_list = reinterpret_cast<void*>(&pb_cpu_free_cell_list_callback);
}

}  // namespace pb::runtime::cpu::detail
