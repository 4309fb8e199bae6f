#include "ir/type.h"

#include <charconv>
#include <vector>

#include "ir/quant.h"
#include "ir/tensor_type.h"

namespace pb::ir {

std::string_view scalar_name(ScalarKind k) {
  switch (k) {
#define PB_X(name)       \
  case ScalarKind::name: \
    return #name;
    PB_SCALAR_KINDS(PB_X)
#undef PB_X
    case ScalarKind::unknown:
      break;
  }
  return "unknown";
}

std::optional<ScalarKind> scalar_from_name(std::string_view name) {
#define PB_X(n) \
  if (name == #n) return ScalarKind::n;
  PB_SCALAR_KINDS(PB_X)
#undef PB_X
  return std::nullopt;
}

bool is_float(ScalarKind k) { return k == ScalarKind::f16 || k == ScalarKind::f32 || k == ScalarKind::f64; }

bool is_integral(ScalarKind k) { return k != ScalarKind::unknown && !is_float(k); }

bool is_signed(ScalarKind k) {
  return k == ScalarKind::i8 || k == ScalarKind::i16 || k == ScalarKind::i32 || k == ScalarKind::i64 || is_float(k);
}

int bit_width(ScalarKind k) {
  switch (k) {
    case ScalarKind::u1:
      return 1;
    case ScalarKind::i8:
    case ScalarKind::u8:
      return 8;
    case ScalarKind::i16:
    case ScalarKind::u16:
    case ScalarKind::f16:
      return 16;
    case ScalarKind::i32:
    case ScalarKind::u32:
    case ScalarKind::f32:
      return 32;
    case ScalarKind::i64:
    case ScalarKind::u64:
    case ScalarKind::f64:
      return 64;
    case ScalarKind::unknown:
      break;
  }
  return 0;
}

std::string to_string(DataType t) {
  if (!t.known()) return "";
  if (t.gen) return "*gen";
  std::string s = t.quant != 0 ? quant_type(t.quant).spelling : std::string(scalar_name(t.scalar));
  if (t.tensor != 0) s = "[Tensor " + tensor_shape_text(t.tensor) + " " + s + "]";
  return t.pointer ? "*" + s : s;
}

namespace {

// `[Tensor (2, 3) f32]`: the shape and the element kind, or nullopt.
std::optional<DataType> parse_tensor(std::string_view text) {
  constexpr std::string_view kOpen = "[Tensor (";
  if (text.size() < kOpen.size() + 4 || text.substr(0, kOpen.size()) != kOpen || text.back() != ']')
    return std::nullopt;
  text = text.substr(kOpen.size(), text.size() - kOpen.size() - 1);
  size_t close = text.find(')');
  if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ' ') return std::nullopt;
  std::vector<int> dims;
  std::string_view list = text.substr(0, close);
  while (true) {
    while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
    int d = 0;
    auto [p, ec] = std::from_chars(list.data(), list.data() + list.size(), d);
    if (ec != std::errc()) return std::nullopt;
    dims.push_back(d);
    list.remove_prefix(static_cast<size_t>(p - list.data()));
    if (list.empty()) break;
    if (list.front() != ',') return std::nullopt;
    list.remove_prefix(1);
  }
  auto element = scalar_from_name(text.substr(close + 2));
  auto id = intern_tensor_shape(dims);
  if (!element || !id) return std::nullopt;
  return DataType::tensor_of(*element, *id);
}

}  // namespace

std::optional<DataType> parse_type(std::string_view text) {
  bool pointer = false;
  if (!text.empty() && text.front() == '*') {
    pointer = true;
    text.remove_prefix(1);
  }
  if (pointer && text == "gen") return DataType::gen_pointer();
  if (auto t = parse_tensor(text)) {
    t->pointer = pointer;
    return t;
  }
  if (auto k = scalar_from_name(text)) return DataType{*k, pointer};
  auto q = intern_quant(text);
  if (!q) return std::nullopt;
  return DataType{quant_type(*q).compute, pointer, false, *q};
}

}  // namespace pb::ir
