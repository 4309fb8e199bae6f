#include "runtime/interp/interp_ops.h"

#include <fmt/format.h>

#include <cstdio>

namespace pb::runtime::detail {

using ir::Value;
namespace {

template <class T>
std::string printf_one(const std::string& spec, T value) {
  int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  if (n < 0) return spec;
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec.c_str(), value);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

namespace {
// Field widths and precisions above kMaxPrintfWidth are clamped to it: a message such as
// `%999999999d` must not build a gigabyte string.
constexpr int kMaxPrintfWidth = 256;

std::string clamp_widths(const std::string& spec) {
  std::string out;
  for (size_t i = 0; i < spec.size();) {
    if (spec[i] < '0' || spec[i] > '9') {
      out += spec[i++];
      continue;
    }
    size_t j = i;
    while (j < spec.size() && spec[j] >= '0' && spec[j] <= '9') ++j;
    std::string digits = spec.substr(i, j - i);
    while (digits.size() > 1 && digits[0] == '0') {  // a leading 0 is the zero-padding flag
      out += '0';
      digits.erase(0, 1);
    }
    out += digits.size() > 3 || std::stoi(digits) > kMaxPrintfWidth ? std::to_string(kMaxPrintfWidth) : digits;
    i = j;
  }
  return out;
}
}  // namespace

std::string format_printf(const std::string& format, std::span<const Value> args) {
  std::string out;
  size_t next_arg = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    std::string flags_width_precision;
    while (j < format.size() && std::string_view("-+ #0123456789.").find(format[j]) != std::string_view::npos)
      flags_width_precision += format[j++];
    while (j < format.size() && std::string_view("hlLqjzt").find(format[j]) != std::string_view::npos) ++j;
    if (j >= format.size() || next_arg >= args.size() ||
        std::string_view("diuxXocfFeEgGaAs").find(format[j]) == std::string_view::npos) {
      out += format.substr(i, j - i + (j < format.size() ? 1 : 0));
      i = j;
      continue;
    }
    const char conv = format[j];
    const Value& v = args[next_arg++];
    const std::string spec = "%" + clamp_widths(flags_width_precision);
    if (conv == 'd' || conv == 'i') {
      out += printf_one(spec + "lld", static_cast<long long>(v.as_i64()));
    } else if (conv == 'u' || conv == 'x' || conv == 'X' || conv == 'o') {
      unsigned long long bits = ir::is_float(v.kind()) ? v.as_u64() : v.bits();
      out += printf_one(spec + "ll" + conv, bits);
    } else if (conv == 'c') {
      out += printf_one(spec + "c", static_cast<int>(v.as_i64()));
    } else if (conv == 's') {
      out += v.to_string();
    } else {
      out += printf_one(spec + conv, v.as_f64());
    }
    i = j;
  }
  if (next_arg < args.size()) {
    out += " [";
    for (size_t a = next_arg; a < args.size(); ++a) out += (a > next_arg ? ", " : "") + args[a].to_string();
    out += "]";
  }
  return out;
}

}  // namespace pb::runtime::detail
