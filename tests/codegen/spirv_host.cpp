#include "spirv_host.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "codegen/spirv/optimizer.h"
#include "spirv_exec.h"

namespace pb::codegen::spirv::test {

namespace {

using ir::ScalarKind;

void append_value(std::vector<uint32_t>& out, const ir::Value& v, ScalarKind as) {
  if (ir::bit_width(as) == 64) {
    uint64_t b = v.cast_to(as).bits();
    out.push_back(static_cast<uint32_t>(b));
    out.push_back(static_cast<uint32_t>(b >> 32));
  } else if (as == ScalarKind::u1) {
    out.push_back(v.as_bool() ? 1u : 0u);
  } else {
    out.push_back(static_cast<uint32_t>(v.cast_to(as).bits()));
  }
}

ir::Value read_value(const std::vector<uint32_t>& words, size_t i, ScalarKind k) {
  switch (k) {
    case ScalarKind::f32:
      return ir::Value::make_f32(std::bit_cast<float>(words.at(i)));
    case ScalarKind::i32:
      return ir::Value::make_i32(static_cast<int32_t>(words.at(i)));
    case ScalarKind::u32:
      return ir::Value::make_u32(words.at(i));
    case ScalarKind::u1:
      return ir::Value::make_bool(words.at(i) != 0);
    case ScalarKind::f64:
      return ir::Value::make_f64(std::bit_cast<double>(words.at(2 * i) | (uint64_t{words.at(2 * i + 1)} << 32)));
    case ScalarKind::i64:
      return ir::Value::make_i64(static_cast<int64_t>(words.at(2 * i) | (uint64_t{words.at(2 * i + 1)} << 32)));
    case ScalarKind::u64:
      return ir::Value::make_u64(words.at(2 * i) | (uint64_t{words.at(2 * i + 1)} << 32));
    default:
      throw std::runtime_error("spirv_host: unsupported element kind");
  }
}

runtime::Buffer* buffer_of(const Binding& b, runtime::State& state) {
  switch (b.kind) {
    case BindingKind::field:
    case BindingKind::grad_field:
      return &state.fields.at(b.name);
    case BindingKind::ndarray:
      return &state.args.at(static_cast<size_t>(b.arg)).array;
    case BindingKind::ndarray_grad:
      return &*state.args.at(static_cast<size_t>(b.arg)).grad;
    case BindingKind::ndarray_dual:
      return &*state.args.at(static_cast<size_t>(b.arg)).dual;
    default:
      return nullptr;
  }
}

}  // namespace

HostRun run_on_host(const ir::Kernel& k, const CompiledKernel& ck, runtime::State& state, bool optimize,
                    uint32_t dynamic_invocations) {
  ExecMemory mem;
  for (const Binding& b : ck.bindings) {
    std::vector<uint32_t>& words = mem.buffers[b.binding];
    if (runtime::Buffer* buf = buffer_of(b, state)) {
      for (const ir::Value& v : buf->data) append_value(words, v, b.element);
    } else if (b.kind == BindingKind::temps) {
      words.assign(ck.temps_words, 0xCDCDCDCDu);
    } else if (b.kind == BindingKind::flags) {
      words.assign(kNumFlagWords, 0);
    }
  }
  mem.push_constants.assign(ck.push_constant_bytes / 4, 0);
  for (const PushConstant& p : ck.push_constants) {
    std::vector<uint32_t> w;
    switch (p.kind) {
      case PushConstant::Kind::arg:
        append_value(w, state.args.at(static_cast<size_t>(p.index)).scalar, p.type);
        break;
      case PushConstant::Kind::field_extent:
        w.push_back(
            static_cast<uint32_t>(state.fields.at(k.field(p.index).name).shape.at(static_cast<size_t>(p.axis))));
        break;
      case PushConstant::Kind::ndarray_extent:
        w.push_back(static_cast<uint32_t>(
            state.args.at(static_cast<size_t>(p.index)).array.shape.at(static_cast<size_t>(p.axis))));
        break;
      case PushConstant::Kind::space_extent:
        w.push_back(static_cast<uint32_t>(runtime::space_shape(k, state, p.space).at(static_cast<size_t>(p.axis))));
        break;
    }
    std::copy(w.begin(), w.end(), mem.push_constants.begin() + p.offset / 4);
  }
  for (const TaskInfo& t : ck.tasks) {
    uint32_t invocations = t.invocations ? static_cast<uint32_t>(*t.invocations) : dynamic_invocations;
    uint32_t launched = (invocations + t.workgroup_size - 1) / t.workgroup_size * t.workgroup_size;
    for (const Binding& b : ck.bindings)
      if (b.kind == BindingKind::heap)
        mem.buffers[b.binding].assign(static_cast<size_t>(launched) * t.heap_stride_words, 0xCDCDCDCDu);
    std::vector<uint32_t> words = t.spirv;
    if (optimize) words = pb::codegen::spirv::optimize_spirv(words, {}, ck.kernel_name, t.name).words;
    execute(words, mem, invocations, t.workgroup_size);
  }
  for (const Binding& b : ck.bindings)
    if (runtime::Buffer* buf = buffer_of(b, state))
      for (size_t i = 0; i < buf->data.size(); ++i) buf->data[i] = read_value(mem.buffers[b.binding], i, buf->dtype);
  HostRun out;
  for (const Binding& b : ck.bindings)
    if (b.kind == BindingKind::flags) {
      out.stack_overflow = mem.buffers[b.binding].at(kFlagStackOverflow);
      out.assert_code = mem.buffers[b.binding].at(kFlagAssert);
    }
  return out;
}

bool matches_reference(const ir::Value& a, const ir::Value& b) {
  if (!ir::is_float(a.kind())) return a.bits() == b.bits();
  double x = a.as_f64(), y = b.as_f64();
  if (x == y || (std::isnan(x) && std::isnan(y))) return true;
  return std::fabs(x - y) <= 2e-5 * std::max({1.0, std::fabs(x), std::fabs(y)});
}

}  // namespace pb::codegen::spirv::test
