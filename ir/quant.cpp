#include "ir/quant.h"

#include <cctype>
#include <charconv>

#include "ir/assert.h"
#include "ir/type_tables.h"

namespace pb::ir {
namespace {

std::optional<QuantType> quant_int(std::string_view s) {
  if (s.size() < 3 || (s[0] != 'q' && s[0] != 'c') || (s[1] != 'i' && s[1] != 'u')) return std::nullopt;
  int bits = 0;
  auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), bits);
  if (ec != std::errc() || p != s.data() + s.size() || bits < 1 || bits > 64) return std::nullopt;
  QuantType q;
  q.form = QuantType::Form::integer;
  q.bits = bits;
  q.is_signed = s[1] == 'i';
  if (bits <= 32)
    q.compute = q.is_signed ? ScalarKind::i32 : ScalarKind::u32;
  else
    q.compute = q.is_signed ? ScalarKind::i64 : ScalarKind::u64;
  return q;
}

// `NAME(...)` with balanced parentheses and no character that would end a type hint.
std::optional<std::string_view> inner(std::string_view s, std::string_view name) {
  if (s.size() < name.size() + 2 || s.substr(0, name.size()) != name || s[name.size()] != '(' || s.back() != ')')
    return std::nullopt;
  int depth = 0;
  for (size_t i = name.size(); i < s.size(); ++i) {
    char c = s[i];
    if (c == '>' || c == '<' || c == '\n' || c == '\r' || c == '#') return std::nullopt;
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth == 0 && i + 1 != s.size()) return std::nullopt;
  }
  return s.substr(name.size() + 1, s.size() - name.size() - 2);
}

// The value of `key=` in a blank-separated list of `key=value` items ("" if absent).
std::string_view item(std::string_view list, std::string_view key) {
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(' ', at);
    if (end == std::string_view::npos) end = list.size();
    std::string_view it = list.substr(at, end - at);
    if (it.size() > key.size() && it.substr(0, key.size()) == key && it[key.size()] == '=')
      return it.substr(key.size() + 1);
    at = end + 1;
  }
  return {};
}

// qfx / qfl / cf: a quant integer digits type `d=` and a float compute type `c=`.
std::optional<QuantType> quant_real(std::string_view body, QuantType::Form form) {
  auto digits = quant_int(item(body, "d"));
  auto compute = scalar_from_name(item(body, "c"));
  if (!digits || !compute || !is_float(*compute)) return std::nullopt;
  std::string_view e = item(body, "e");
  if (!e.empty() && !quant_int(e)) return std::nullopt;
  if (form == QuantType::Form::fixed && !e.empty()) form = QuantType::Form::floating;  // older `cf(... e=...)`
  QuantType q;
  q.form = form;
  q.is_signed = digits->is_signed;
  q.compute = *compute;
  return q;
}

std::optional<QuantType> parse_quant(std::string_view s) {
  if (auto q = quant_int(s)) return q;
  if (auto b = inner(s, "qfx")) return quant_real(*b, QuantType::Form::fixed);
  if (auto b = inner(s, "qfl")) return quant_real(*b, QuantType::Form::floating);
  if (auto b = inner(s, "cf")) return quant_real(*b, QuantType::Form::fixed);
  for (std::string_view name : {"qa", "ba"}) {
    auto b = inner(s, name);
    if (!b) continue;
    size_t x = b->rfind('x');
    int count = 0;
    if (x == std::string_view::npos) return std::nullopt;
    auto [p, ec] = std::from_chars(b->data() + x + 1, b->data() + b->size(), count);
    auto element = quant_int(b->substr(0, x));
    if (ec != std::errc() || p != b->data() + b->size() || !element || count < 1 ||
        element->bits * static_cast<int64_t>(count) > 64)
      return std::nullopt;
    QuantType q;
    q.form = QuantType::Form::array;
    q.compute = element->bits * count <= 32 ? ScalarKind::u32 : ScalarKind::u64;
    return q;
  }
  if (auto b = inner(s, "bs")) {
    if (b->empty()) return std::nullopt;
    QuantType q;
    q.form = QuantType::Form::bit_struct;
    q.compute = ScalarKind::u32;
    return q;
  }
  return std::nullopt;
}

}  // namespace

namespace {
TypeTables*& adopted() {
  static TypeTables* host = nullptr;
  return host;
}
}  // namespace

TypeTables& type_tables() {
  static TypeTables own;
  TypeTables* host = adopted();
  return host ? *host : own;
}
void adopt_type_tables(TypeTables* host) { adopted() = host; }

std::optional<uint16_t> intern_quant(std::string_view spelling) {
  TypeTables& t = type_tables();
  std::lock_guard lock(t.mutex);
  for (size_t i = 0; i < t.quants.size(); ++i)
    if (t.quants[i].spelling == spelling) return static_cast<uint16_t>(i + 1);
  auto q = parse_quant(spelling);
  if (!q || t.quants.size() >= kMaxTypeIds) return std::nullopt;
  q->spelling = std::string(spelling);
  t.quants.push_back(std::move(*q));
  return static_cast<uint16_t>(t.quants.size());
}

const QuantType& quant_type(uint16_t id) {
  TypeTables& t = type_tables();
  std::lock_guard lock(t.mutex);
  PB_ASSERT(id >= 1 && id <= t.quants.size(), "quant_type: an id intern_quant did not return");
  return t.quants[id - 1];
}

}  // namespace pb::ir
