// Packing a State into native arrays and back, and the shapes a CpuKernel compiles in.
#include <fmt/format.h>

#include <cstring>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "runtime/cpu/cpu_impl.h"

namespace pb::runtime::cpu {
namespace detail {

int64_t element_bytes(ir::ScalarKind k) { return k == ir::ScalarKind::u1 ? 1 : ir::bit_width(k) / 8; }

void store_value(void* p, const ir::Value& v, ir::ScalarKind k) {
  ir::Value c = v.cast_to(k);
  switch (k) {
    case ir::ScalarKind::u1: {
      uint8_t b = c.as_bool() ? 1 : 0;
      std::memcpy(p, &b, 1);
      return;
    }
    case ir::ScalarKind::f32: {
      float f = c.as_f32();
      std::memcpy(p, &f, 4);
      return;
    }
    case ir::ScalarKind::f64: {
      double d = c.as_f64();
      std::memcpy(p, &d, 8);
      return;
    }
    default: {
      uint64_t bits = c.bits();
      std::memcpy(p, &bits, static_cast<size_t>(element_bytes(k)));
    }
  }
}

ir::Value load_value(const void* p, ir::ScalarKind k) {
  switch (k) {
    case ir::ScalarKind::u1:
      return ir::Value::make_bool(*static_cast<const uint8_t*>(p) != 0);
    case ir::ScalarKind::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return ir::Value::make_f32(f);
    }
    case ir::ScalarKind::f64: {
      double d;
      std::memcpy(&d, p, 8);
      return ir::Value::make_f64(d);
    }
    case ir::ScalarKind::i32: {
      int32_t i;
      std::memcpy(&i, p, 4);
      return ir::Value::make_i32(i);
    }
    case ir::ScalarKind::u32: {
      uint32_t i;
      std::memcpy(&i, p, 4);
      return ir::Value::make_u32(i);
    }
    case ir::ScalarKind::i64: {
      int64_t i;
      std::memcpy(&i, p, 8);
      return ir::Value::make_i64(i);
    }
    case ir::ScalarKind::u64: {
      uint64_t i;
      std::memcpy(&i, p, 8);
      return ir::Value::make_u64(i);
    }
    case ir::ScalarKind::f16:
    case ir::ScalarKind::i8:
    case ir::ScalarKind::i16:
    case ir::ScalarKind::u8:
    case ir::ScalarKind::u16: {  // the narrow kinds by their bits
      uint64_t bits = 0;
      std::memcpy(&bits, p, static_cast<size_t>(element_bytes(k)));
      return ir::Value::make_u64(bits).bitcast_to(k);
    }
    case ir::ScalarKind::unknown:
      break;
  }
  return {};
}

std::map<int, ir::ScalarKind> ndarray_kinds(const ir::Kernel& k, const State& st) {
  std::map<int, ir::ScalarKind> out;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (auto* a = ir::dyn_cast<ir::ArgLoadStmt>(&s); a && a->type.pointer) out[a->arg_index] = a->type.scalar;
  });
  for (const ir::ArgDecl& d : k.args)
    if (d.ndarray) out[d.index] = d.dtype;
  for (size_t i = 0; i < st.args.size(); ++i)
    if (st.args[i].is_ndarray && !out.count(static_cast<int>(i))) out[static_cast<int>(i)] = st.args[i].array.dtype;
  return out;
}

codegen::llvmgen::EmitShapes shapes_of(const ir::Kernel& k, const State& st) {
  codegen::llvmgen::EmitShapes sh;
  for (size_t i = 0; i < k.fields().size(); ++i)
    if (auto it = st.fields.find(k.fields()[i].name); it != st.fields.end())
      sh.fields[static_cast<ir::FieldId>(i)] = it->second.shape;
  sh.ndarray_dtypes = ndarray_kinds(k, st);
  for (size_t i = 0; i < st.args.size(); ++i) {
    const ArgValue& a = st.args[i];
    if (!a.is_ndarray) continue;
    sh.ndarrays[static_cast<int>(i)] = a.array.shape;
    if (a.grad) sh.ndarray_grads[static_cast<int>(i)] = a.grad->shape;
    if (a.dual) sh.ndarray_duals[static_cast<int>(i)] = a.dual->shape;
  }
  auto add_space = [&](const std::string& name) {
    if (!sh.spaces.count(name)) sh.spaces[name] = space_shape(k, st, name);
  };
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (auto* f = ir::dyn_cast<ir::StructForStmt>(&s)) add_space(f->space);
    if (auto* o = ir::dyn_cast<ir::OffloadedStmt>(&s); o && o->task == ir::TaskType::struct_for) add_space(o->snode);
    if (auto* l = ir::dyn_cast<ir::SNodeLookupStmt>(&s))
      if (k.find_space(l->snode) || st.spaces.count(l->snode) || k.find_field(l->snode)) add_space(l->snode);
  });
  return sh;
}

}  // namespace detail

namespace {

std::vector<uint64_t> pack_buffer(const Buffer& b, ir::ScalarKind k, const ir::Shape& shape, const std::string& what) {
  if (b.shape != shape)
    throw UserError(fmt::format("{} has shape {} but the kernel was compiled for {}", what,
                                ir::shape_to_string(b.shape), ir::shape_to_string(shape)),
                    "compile the kernel again for this state");
  int64_t eb = detail::element_bytes(k);
  std::vector<uint64_t> words(static_cast<size_t>((static_cast<int64_t>(b.size()) * eb + 7) / 8 + 1), 0);
  auto* bytes = reinterpret_cast<char*>(words.data());
  for (size_t i = 0; i < b.size(); ++i) detail::store_value(bytes + static_cast<int64_t>(i) * eb, b.data[i], k);
  return words;
}

void unpack_buffer(const std::vector<uint64_t>& words, ir::ScalarKind k, Buffer& b) {
  int64_t eb = detail::element_bytes(k);
  const auto* bytes = reinterpret_cast<const char*>(words.data());
  b.dtype = k;
  for (size_t i = 0; i < b.size(); ++i) b.data[i] = detail::load_value(bytes + static_cast<int64_t>(i) * eb, k);
}

}  // namespace

codegen::llvmgen::EmitShapes emit_shapes(const ir::Kernel& k, const State& state) {
  return detail::shapes_of(k, state);
}

DeviceMemory pack(const CpuKernel& ck, const State& st) {
  const ir::Kernel& k = ck.kernel();
  const auto& sh = ck.shapes();
  DeviceMemory m;
  m.fields.resize(k.fields().size());
  for (const auto& [id, shape] : sh.fields) {
    const ir::Field& f = k.field(id);
    auto it = st.fields.find(f.name);
    if (it == st.fields.end())
      throw UserError(fmt::format("field '{}' has no buffer in the state", f.name),
                      "compile the kernel again for this state");
    m.fields[static_cast<size_t>(id)] = pack_buffer(it->second, f.dtype, shape, fmt::format("field '{}'", f.name));
  }
  m.ndarrays.resize(st.args.size());
  m.ndarray_grads.resize(st.args.size());
  m.ndarray_duals.resize(st.args.size());
  m.args.assign(std::max<size_t>(st.args.size(), 1), 0);
  m.arg_kinds.assign(m.args.size(), ir::ScalarKind::unknown);
  for (size_t i = 0; i < st.args.size(); ++i) {
    const ArgValue& a = st.args[i];
    int idx = static_cast<int>(i);
    if (a.is_ndarray) {
      auto kind_it = sh.ndarray_dtypes.find(idx);
      ir::ScalarKind kind = kind_it != sh.ndarray_dtypes.end() ? kind_it->second : a.array.dtype;
      if (sh.ndarrays.count(idx))
        m.ndarrays[i] = pack_buffer(a.array, kind, sh.ndarrays.at(idx), fmt::format("ndarray argument {}", i));
      if (a.grad && sh.ndarray_grads.count(idx))
        m.ndarray_grads[i] =
            pack_buffer(*a.grad, kind, sh.ndarray_grads.at(idx), fmt::format("the gradient of ndarray argument {}", i));
      if (a.dual && sh.ndarray_duals.count(idx))
        m.ndarray_duals[i] =
            pack_buffer(*a.dual, kind, sh.ndarray_duals.at(idx), fmt::format("the dual of ndarray argument {}", i));
      continue;
    }
    if (a.is_tensor) continue;  // a scalarized kernel reads it through its element arguments
    auto it = ck.info().scalar_args.find(idx);
    const ir::ArgDecl* decl = k.find_arg(idx);
    ir::ScalarKind kind = it != ck.info().scalar_args.end() ? it->second : decl ? decl->dtype : a.scalar.kind();
    if (a.scalar.kind() != kind && !(ir::is_float(a.scalar.kind()) && ir::is_float(kind)))
      throw UserError(fmt::format("argument {} holds {} but the kernel loads {}", i, ir::scalar_name(a.scalar.kind()),
                                  ir::scalar_name(kind)),
                      "give the argument its declared type");
    m.arg_kinds[i] = kind;
    detail::store_value(&m.args[i], a.scalar, kind);
  }
  for (const auto& [idx, kind] : ck.info().scalar_args) {
    if (static_cast<size_t>(idx) >= st.args.size() || st.args[static_cast<size_t>(idx)].is_ndarray)
      throw UserError(fmt::format("argument {} is not given as a scalar", idx), "add it to the inputs' \"args\"");
  }
  auto ptrs = [](std::vector<std::vector<uint64_t>>& v) {
    std::vector<void*> p;
    p.reserve(v.size());
    for (auto& w : v) p.push_back(w.empty() ? nullptr : w.data());
    return p;
  };
  m.activity = st.activity;
  m.field_ptrs = ptrs(m.fields);
  m.ndarray_ptrs = ptrs(m.ndarrays);
  m.ndarray_grad_ptrs = ptrs(m.ndarray_grads);
  m.ndarray_dual_ptrs = ptrs(m.ndarray_duals);
  if (m.field_ptrs.empty()) m.field_ptrs.push_back(nullptr);
  if (m.ndarray_ptrs.empty()) m.ndarray_ptrs.push_back(nullptr);
  if (m.ndarray_grad_ptrs.empty()) m.ndarray_grad_ptrs.push_back(nullptr);
  if (m.ndarray_dual_ptrs.empty()) m.ndarray_dual_ptrs.push_back(nullptr);
  return m;
}

void unpack(const CpuKernel& ck, const DeviceMemory& m, State& st) {
  const ir::Kernel& k = ck.kernel();
  for (const auto& [space, cells] : m.activity) st.activity[space] = cells;
  for (size_t id = 0; id < m.fields.size(); ++id) {
    if (m.fields[id].empty()) continue;
    unpack_buffer(m.fields[id], k.fields()[id].dtype, st.fields.at(k.fields()[id].name));
  }
  for (size_t i = 0; i < st.args.size() && i < m.ndarrays.size(); ++i) {
    ArgValue& a = st.args[i];
    if (!a.is_ndarray) continue;
    ir::ScalarKind kind = ck.shapes().ndarray_dtypes.count(static_cast<int>(i))
                              ? ck.shapes().ndarray_dtypes.at(static_cast<int>(i))
                              : a.array.dtype;
    if (!m.ndarrays[i].empty()) unpack_buffer(m.ndarrays[i], kind, a.array);
    if (a.grad && !m.ndarray_grads[i].empty()) unpack_buffer(m.ndarray_grads[i], kind, *a.grad);
    if (a.dual && !m.ndarray_duals[i].empty()) unpack_buffer(m.ndarray_duals[i], kind, *a.dual);
  }
}

}  // namespace pb::runtime::cpu
