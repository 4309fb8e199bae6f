#include "ir/type.h"

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

bool is_float(ScalarKind k) { return k == ScalarKind::f32 || k == ScalarKind::f64; }

bool is_integral(ScalarKind k) { return k != ScalarKind::unknown && !is_float(k); }

bool is_signed(ScalarKind k) { return k == ScalarKind::i32 || k == ScalarKind::i64 || is_float(k); }

int bit_width(ScalarKind k) {
  switch (k) {
    case ScalarKind::u1:
      return 1;
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
  std::string s(scalar_name(t.scalar));
  return t.pointer ? "*" + s : s;
}

std::optional<DataType> parse_type(std::string_view text) {
  bool pointer = false;
  if (!text.empty() && text.front() == '*') {
    pointer = true;
    text.remove_prefix(1);
  }
  if (pointer && text == "gen") return DataType::gen_pointer();
  auto k = scalar_from_name(text);
  if (!k) return std::nullopt;
  return DataType{*k, pointer};
}

}  // namespace pb::ir
