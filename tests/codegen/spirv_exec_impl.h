// Internal to the test SPIR-V interpreter (spirv_exec.h): the parsed module and one invocation's
// state. spirv_exec.cpp runs control flow, memory and composites; spirv_exec_ops.cpp arithmetic,
// conversions, atomics and GLSL.std.450.
#pragma once

#define SPV_ENABLE_UTILITY_CODE  // spv::HasResultAndType
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <spirv/unified1/spirv.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace pb::codegen::spirv::test::exec {

struct Inst {
  spv::Op op;
  std::vector<uint32_t> operands;  // the words after the opcode word
  uint32_t operator[](size_t i) const { return operands.at(i); }
};

struct Type {
  spv::Op op = spv::OpNop;
  uint32_t width = 0;  // int, float
  bool is_signed = false;
  uint32_t element = 0;  // vector, array, runtime array; pointer: the pointee
  uint32_t count = 0;    // vector, array
  std::vector<uint32_t> members;
};

// A value: its words (bools one word 0/1, 64-bit scalars two words, low first), or a pointer.
struct Value {
  std::vector<uint32_t> w;
  int region = -1;
  uint32_t offset = 0;
};

inline Type make_type(spv::Op op, uint32_t width = 0, bool is_signed = false, uint32_t element = 0,
                      uint32_t count = 0) {
  Type t;
  t.op = op, t.width = width, t.is_signed = is_signed, t.element = element, t.count = count;
  return t;
}

[[noreturn]] inline void fail(const std::string& what) { throw std::runtime_error("spirv_exec: " + what); }

inline uint64_t mask(uint32_t width) { return width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }
inline int64_t sext(uint64_t v, uint32_t width) {
  return width == 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v)));
}
inline double to_float(uint64_t bits, uint32_t width) {
  return width == 64 ? std::bit_cast<double>(bits)
                     : static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
}
inline uint64_t from_float(double v, uint32_t width) {
  return width == 64 ? std::bit_cast<uint64_t>(v) : std::bit_cast<uint32_t>(static_cast<float>(v));
}
// Rounds a double result to f32 when the operation is 32-bit, so f32 arithmetic is f32.
inline double narrow(double v, uint32_t width) { return width == 64 ? v : static_cast<double>(static_cast<float>(v)); }

class Module {
 public:
  explicit Module(const std::vector<uint32_t>& words) {
    if (words.size() < 5 || words[0] != spv::MagicNumber) fail("not a SPIR-V module");
    bound_ = words[3];
    constants_.resize(bound_);
    bool in_function = false;
    for (size_t i = 5; i < words.size();) {
      uint32_t count = words[i] >> 16;
      if (count == 0 || i + count > words.size()) fail("malformed instruction");
      Inst in{static_cast<spv::Op>(words[i] & 0xffff), {words.begin() + i + 1, words.begin() + i + count}};
      i += count;
      bool has_result = false, has_type = false;
      spv::HasResultAndType(in.op, &has_result, &has_type);
      if (has_result && has_type) result_type_[in[1]] = in[0];
      if (in.op == spv::OpFunction) in_function = true;
      if (in_function) {
        if (in.op == spv::OpLabel) labels_[in[0]] = body_.size();
        body_.push_back(std::move(in));
        if (body_.back().op == spv::OpFunctionEnd) in_function = false;
        continue;
      }
      declare(in);
    }
  }

  const Type& type(uint32_t id) const {
    auto it = types_.find(id);
    if (it == types_.end()) fail("unknown type %" + std::to_string(id));
    return it->second;
  }
  // Words a value of `type` takes (arrays with an ArrayStride use it).
  uint32_t words(uint32_t type_id) const {
    const Type& t = type(type_id);
    switch (t.op) {
      case spv::OpTypeBool:
        return 1;
      case spv::OpTypeInt:
      case spv::OpTypeFloat:
        return t.width / 32;
      case spv::OpTypeVector:
        return t.count * words(t.element);
      case spv::OpTypeArray:
        return t.count * stride(type_id);
      case spv::OpTypeStruct: {
        uint32_t end = 0;
        for (uint32_t m = 0; m < t.members.size(); ++m)
          end = std::max(end, member_offset(type_id, m) + words(t.members[m]));
        return end;
      }
      default:
        fail("no size for type %" + std::to_string(type_id));
    }
  }
  uint32_t stride(uint32_t array_type) const {
    auto it = array_stride_.find(array_type);
    return it != array_stride_.end() ? it->second / 4 : words(type(array_type).element);
  }
  uint32_t member_offset(uint32_t struct_type, uint32_t member) const {
    auto it = member_offset_.find({struct_type, member});
    if (it != member_offset_.end()) return it->second / 4;
    uint32_t off = 0;
    for (uint32_t m = 0; m < member; ++m) off += words(type(struct_type).members[m]);
    return off;
  }

  uint32_t bound_ = 0;
  std::unordered_map<uint32_t, Type> types_;
  std::unordered_map<uint32_t, uint32_t> result_type_;  // id -> its type
  std::vector<Value> constants_;                        // by id; empty words: not a constant
  std::vector<Inst> globals_;                           // OpVariable outside the function
  std::map<uint32_t, uint32_t> binding_, builtin_;
  std::map<uint32_t, uint32_t> array_stride_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offset_;
  uint32_t glsl_ = 0;
  std::vector<Inst> body_;  // the (only) function, OpFunction to OpFunctionEnd
  std::unordered_map<uint32_t, size_t> labels_;

 private:
  void declare(const Inst& in) {
    switch (in.op) {
      case spv::OpTypeVoid:
      case spv::OpTypeBool:
      case spv::OpTypeFunction:
        types_[in[0]] = make_type(in.op);
        break;
      case spv::OpTypeInt:
        types_[in[0]] = make_type(in.op, in[1], in[2] != 0);
        break;
      case spv::OpTypeFloat:
        types_[in[0]] = make_type(in.op, in[1]);
        break;
      case spv::OpTypeVector:
        types_[in[0]] = make_type(in.op, 0, false, in[1], in[2]);
        break;
      case spv::OpTypeArray:
        types_[in[0]] = make_type(in.op, 0, false, in[1], constants_.at(in[2]).w.at(0));
        break;
      case spv::OpTypeRuntimeArray:
        types_[in[0]] = make_type(in.op, 0, false, in[1]);
        break;
      case spv::OpTypeStruct:
        types_[in[0]] = make_type(in.op);
        types_[in[0]].members.assign(in.operands.begin() + 1, in.operands.end());
        break;
      case spv::OpTypePointer:
        types_[in[0]] = make_type(in.op, 0, false, in[2]);
        break;
      case spv::OpConstant:
        constants_.at(in[1]).w.assign(in.operands.begin() + 2, in.operands.end());
        break;
      case spv::OpConstantTrue:
      case spv::OpConstantFalse:
        constants_.at(in[1]).w = {in.op == spv::OpConstantTrue ? 1u : 0u};
        break;
      case spv::OpConstantComposite:
        for (size_t k = 2; k < in.operands.size(); ++k) {
          const auto& part = constants_.at(in[k]).w;
          constants_.at(in[1]).w.insert(constants_.at(in[1]).w.end(), part.begin(), part.end());
        }
        break;
      case spv::OpConstantNull:
      case spv::OpUndef:
        constants_.at(in[1]).w.assign(words(in[0]), 0);
        break;
      case spv::OpVariable:
        globals_.push_back(in);
        break;
      case spv::OpDecorate:
        if (in[1] == spv::DecorationBinding) binding_[in[0]] = in[2];
        if (in[1] == spv::DecorationBuiltIn) builtin_[in[0]] = in[2];
        if (in[1] == spv::DecorationArrayStride) array_stride_[in[0]] = in[2];
        break;
      case spv::OpMemberDecorate:
        if (in[2] == spv::DecorationOffset) member_offset_[{in[0], in[1]}] = in[3];
        break;
      case spv::OpExtInstImport:
        glsl_ = in[0];
        break;
      default:
        break;  // capabilities, names, entry point, execution modes, ...
    }
  }
};

class Invocation {
 public:
  Invocation(const Module& m, std::vector<std::vector<uint32_t>*>& regions, const std::map<uint32_t, Value>& globals,
             uint64_t max_steps)
      : m_(m), regions_(regions), values_(m.constants_), max_steps_(max_steps) {
    for (const auto& [id, v] : globals) values_.at(id) = v;
  }

  void run() {
    size_t pc = 0;
    while (m_.body_.at(pc).op != spv::OpLabel) ++pc;
    uint32_t current = m_.body_[pc][0];
    ++pc;
    uint64_t steps = 0;
    for (;;) {
      if (++steps > max_steps_) fail("step limit reached (a loop that does not end?)");
      const Inst& in = m_.body_.at(pc++);
      switch (in.op) {
        case spv::OpBranch:
          pc = jump(current, in[0]);
          current = in[0];
          continue;
        case spv::OpBranchConditional: {
          uint32_t target = val(in[0]).w.at(0) ? in[1] : in[2];
          pc = jump(current, target);
          current = target;
          continue;
        }
        case spv::OpReturn:
          return;
        case spv::OpSelectionMerge:
        case spv::OpLoopMerge:
        case spv::OpLine:
        case spv::OpNoLine:
          continue;
        default:
          step(in);
      }
    }
  }

 private:
  const Value& val(uint32_t id) const {
    const Value& v = values_.at(id);
    if (v.w.empty() && v.region < 0) fail("use of %" + std::to_string(id) + " before its definition");
    return v;
  }
  void set(uint32_t id, Value v) { values_.at(id) = std::move(v); }

  // Moves to `target` from `from`: the phis at its top read their values along that edge.
  size_t jump(uint32_t from, uint32_t target) {
    size_t pc = m_.labels_.at(target) + 1;
    std::vector<std::pair<uint32_t, Value>> phis;
    for (; m_.body_.at(pc).op == spv::OpPhi; ++pc) {
      const Inst& phi = m_.body_[pc];
      bool found = false;
      for (size_t k = 2; k + 1 < phi.operands.size(); k += 2)
        if (phi[k + 1] == from) phis.emplace_back(phi[1], val(phi[k])), found = true;
      if (!found) fail("phi %" + std::to_string(phi[1]) + " has no value for its predecessor");
    }
    for (auto& [id, v] : phis) set(id, std::move(v));
    return pc;
  }

  std::vector<uint32_t>& region(const Value& p) { return *regions_.at(static_cast<size_t>(p.region)); }
  Value load(const Value& p, uint32_t type) {
    Value v;
    uint32_t n = m_.words(type);
    auto& r = region(p);
    if (p.offset + n > r.size()) fail("load out of bounds");
    v.w.assign(r.begin() + p.offset, r.begin() + p.offset + n);
    return v;
  }
  void store(const Value& p, const Value& v) {
    auto& r = region(p);
    if (p.offset + v.w.size() > r.size()) fail("store out of bounds");
    std::copy(v.w.begin(), v.w.end(), r.begin() + p.offset);
  }

  // Components of a scalar or vector type: (component type, count).
  std::pair<const Type*, uint32_t> components(uint32_t type_id) const {
    const Type& t = m_.type(type_id);
    if (t.op == spv::OpTypeVector) return {&m_.type(t.element), t.count};
    return {&t, 1};
  }
  static uint32_t width_of(const Type& t) { return t.op == spv::OpTypeBool ? 32 : t.width; }
  static uint64_t get(const Value& v, uint32_t i, uint32_t width) {
    if (width == 64) return v.w.at(2 * i) | (uint64_t{v.w.at(2 * i + 1)} << 32);
    return v.w.at(i);
  }
  static void put(Value& v, uint32_t i, uint32_t width, uint64_t bits) {
    if (width == 64) {
      if (v.w.size() < 2 * i + 2) v.w.resize(2 * i + 2);
      v.w[2 * i] = static_cast<uint32_t>(bits), v.w[2 * i + 1] = static_cast<uint32_t>(bits >> 32);
    } else {
      if (v.w.size() < i + 1) v.w.resize(i + 1);
      v.w[i] = static_cast<uint32_t>(bits & mask(width));
    }
  }

  // Applies `f(a, b, c, width_in)` per component; the result has type `result_type`.
  template <class F>
  void map(const Inst& in, size_t first, size_t arity, F f) {
    uint32_t result_type = in[0];
    auto [rt, n] = components(result_type);
    uint32_t in_width = 32;
    uint32_t operand_type = first < in.operands.size() ? type_of(in[first]) : 0;
    if (operand_type) in_width = width_of(*components(operand_type).first);
    Value out;
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t a = get(val(in[first]), i, in_width);
      uint64_t b = arity > 1 ? get(val(in[first + 1]), i, in_width) : 0;
      uint64_t c = arity > 2 ? get(val(in[first + 2]), i, in_width) : 0;
      put(out, i, width_of(*rt), f(a, b, c, in_width));
    }
    set(in[1], std::move(out));
  }

  uint32_t type_of(uint32_t id) const {
    auto it = m_.result_type_.find(id);
    return it != m_.result_type_.end() ? it->second : 0;
  }

  void step(const Inst& in);
  void arithmetic(const Inst& in);  // spirv_exec_ops.cpp, with ext and atomic
  void ext(const Inst& in);
  void access_chain(const Inst& in);
  void atomic(const Inst& in);
  uint64_t composite_offset(uint32_t type_id, const Inst& in, size_t first, uint32_t* leaf_type) const;

  const Module& m_;
  std::vector<std::vector<uint32_t>*>& regions_;
  std::vector<Value> values_;
  std::vector<std::unique_ptr<std::vector<uint32_t>>> locals_;
  uint64_t max_steps_;
};

}  // namespace pb::codegen::spirv::test::exec
