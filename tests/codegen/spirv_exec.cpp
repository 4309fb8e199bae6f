#include "spirv_exec.h"

#include "spirv_exec_impl.h"

namespace pb::codegen::spirv::test {
namespace exec {

uint64_t Invocation::composite_offset(uint32_t type_id, const Inst& in, size_t first, uint32_t* leaf) const {
  uint64_t off = 0;
  for (size_t k = first; k < in.operands.size(); ++k) {
    const Type& t = m_.type(type_id);
    uint32_t index = in[k];
    if (t.op == spv::OpTypeStruct) {
      off += m_.member_offset(type_id, index);
      type_id = t.members.at(index);
    } else if (t.op == spv::OpTypeVector) {
      off += index * m_.words(t.element);
      type_id = t.element;
    } else if (t.op == spv::OpTypeArray) {
      off += index * m_.stride(type_id);
      type_id = t.element;
    } else {
      fail("composite index into a non-composite");
    }
  }
  *leaf = type_id;
  return off;
}

void Invocation::access_chain(const Inst& in) {
  Value p = val(in[2]);
  uint32_t type_id = m_.type(type_of(in[2])).element;
  for (size_t k = 3; k < in.operands.size(); ++k) {
    const Type& t = m_.type(type_id);
    const Value& iv = val(in[k]);
    uint64_t index = iv.w.at(0);
    if (t.op == spv::OpTypeStruct) {
      p.offset += m_.member_offset(type_id, static_cast<uint32_t>(index));
      type_id = t.members.at(index);
    } else if (t.op == spv::OpTypeVector) {
      p.offset += static_cast<uint32_t>(index * m_.words(t.element));
      type_id = t.element;
    } else if (t.op == spv::OpTypeArray || t.op == spv::OpTypeRuntimeArray) {
      uint32_t stride = t.op == spv::OpTypeArray ? m_.stride(type_id) : m_.stride(type_id);
      if (t.op == spv::OpTypeArray && index >= t.count) fail("array index out of bounds");
      p.offset += static_cast<uint32_t>(index * stride);
      type_id = t.element;
    } else {
      fail("access chain into a non-composite");
    }
  }
  set(in[1], std::move(p));
}

void Invocation::step(const Inst& in) {
  switch (in.op) {
    case spv::OpVariable: {
      auto mem = std::make_unique<std::vector<uint32_t>>(m_.words(m_.type(in[0]).element), 0xCDCDCDCDu);
      if (in.operands.size() > 3) *mem = val(in[3]).w;
      regions_.push_back(mem.get());
      locals_.push_back(std::move(mem));
      Value p;
      p.region = static_cast<int>(regions_.size() - 1);
      set(in[1], std::move(p));
      return;
    }
    case spv::OpLoad:
      set(in[1], load(val(in[2]), in[0]));
      return;
    case spv::OpStore:
      store(val(in[0]), val(in[1]));
      return;
    case spv::OpAccessChain:
    case spv::OpInBoundsAccessChain:
      access_chain(in);
      return;
    case spv::OpCopyObject:
      set(in[1], val(in[2]));
      return;
    case spv::OpCompositeConstruct: {
      Value v;
      for (size_t k = 2; k < in.operands.size(); ++k) v.w.insert(v.w.end(), val(in[k]).w.begin(), val(in[k]).w.end());
      set(in[1], std::move(v));
      return;
    }
    case spv::OpCompositeExtract: {
      uint32_t leaf = 0;
      uint64_t off = composite_offset(type_of(in[2]), in, 3, &leaf);
      const Value& c = val(in[2]);
      Value v;
      v.w.assign(c.w.begin() + static_cast<long>(off), c.w.begin() + static_cast<long>(off + m_.words(leaf)));
      set(in[1], std::move(v));
      return;
    }
    case spv::OpCompositeInsert: {
      uint32_t leaf = 0;
      uint64_t off = composite_offset(in[0], in, 4, &leaf);
      Value v = val(in[3]);
      const Value& part = val(in[2]);
      std::copy(part.w.begin(), part.w.end(), v.w.begin() + static_cast<long>(off));
      set(in[1], std::move(v));
      return;
    }
    case spv::OpSelect: {
      uint32_t n = components(in[0]).second;
      uint32_t per = m_.words(in[0]) / n;
      const Value& cond = val(in[2]);
      Value v;
      for (uint32_t i = 0; i < n; ++i) {
        bool c = cond.w.size() > 1 ? cond.w.at(i) : cond.w.at(0);
        const Value& src = val(c ? in[3] : in[4]);
        v.w.insert(v.w.end(), src.w.begin() + i * per, src.w.begin() + (i + 1) * per);
      }
      set(in[1], std::move(v));
      return;
    }
    case spv::OpExtInst:
      ext(in);
      return;
    default:
      break;
  }
  arithmetic(in);
}

}  // namespace exec

using namespace exec;

uint32_t execute(const std::vector<uint32_t>& words, ExecMemory& memory, uint32_t invocations, uint32_t workgroup_size,
                 uint64_t max_steps) {
  Module m(words);
  uint32_t groups = (invocations + workgroup_size - 1) / workgroup_size;
  std::vector<uint32_t> gid(3, 0), num_groups = {groups, 1, 1};
  std::vector<std::vector<uint32_t>*> base_regions;
  std::map<uint32_t, Value> globals;
  for (const Inst& v : m.globals_) {
    Value p;
    auto storage = static_cast<spv::StorageClass>(v[2]);
    std::vector<uint32_t>* r = nullptr;
    if (storage == spv::StorageClassStorageBuffer) {
      auto it = m.binding_.find(v[1]);
      if (it == m.binding_.end()) fail("a buffer without a binding");
      r = &memory.buffers[it->second];
    } else if (storage == spv::StorageClassPushConstant) {
      r = &memory.push_constants;
    } else if (storage == spv::StorageClassInput) {
      uint32_t builtin = m.builtin_.at(v[1]);
      if (builtin == spv::BuiltInGlobalInvocationId)
        r = &gid;
      else if (builtin == spv::BuiltInNumWorkgroups)
        r = &num_groups;
      else
        fail("built-in " + std::to_string(builtin));
    } else {
      fail("global variable in storage class " + std::to_string(storage));
    }
    p.region = static_cast<int>(base_regions.size());
    base_regions.push_back(r);
    globals[v[1]] = p;
  }
  for (uint32_t g = 0; g < groups * workgroup_size; ++g) {
    gid[0] = g;
    std::vector<std::vector<uint32_t>*> regions = base_regions;
    Invocation inv(m, regions, globals, max_steps);
    inv.run();
  }
  return groups * workgroup_size;
}

}  // namespace pb::codegen::spirv::test
