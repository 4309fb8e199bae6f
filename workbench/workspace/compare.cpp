#include "workbench/workspace/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ir/diagnostic.h"

namespace pb::workbench {

namespace {

struct NamedArray {
  std::string name;
  const runtime::Buffer* buffer;
};

// Fields (gradient and dual fields under their own names) and ndarrays with their companions.
std::vector<NamedArray> arrays_of(const runtime::State& s) {
  std::vector<NamedArray> out;
  out.reserve(s.fields.size() + 3 * s.args.size());
  for (const auto& [name, buf] : s.fields) out.push_back({name, &buf});
  for (size_t i = 0; i < s.args.size(); ++i) {
    const auto& arg = s.args[i];
    if (!arg.is_ndarray) continue;
    out.push_back({fmt::format("arg{}", i), &arg.array});
    if (arg.grad) out.push_back({fmt::format("arg{}_grad", i), &*arg.grad});
    if (arg.dual) out.push_back({fmt::format("arg{}_dual", i), &*arg.dual});
  }
  return out;
}

BackendDiff diff(Backend b, const NamedArray& want, const runtime::Buffer* got, const Tolerances& tol) {
  BackendDiff d;
  d.backend = b;
  d.array = want.name;
  d.dtype = want.buffer->dtype;
  bool is_float = ir::is_float(d.dtype);
  d.tolerance = !is_float                        ? 0
                : d.dtype == ir::ScalarKind::f64 ? tol.f64
                : d.dtype == ir::ScalarKind::f16 ? tol.f16
                                                 : tol.f32;
  if (!got || got->data.size() != want.buffer->data.size()) {
    d.ok = false;
    d.error = got ? fmt::format("{} elements on this backend, {} on the interpreter", got->data.size(),
                                want.buffer->data.size())
                  : "missing on this backend";
    return d;
  }
  for (size_t i = 0; i < got->data.size(); ++i, ++d.elements) {
    const ir::Value& a = want.buffer->data[i];
    const ir::Value& v = got->data[i];
    if (!is_float) {
      double e = a.bits() == v.bits() ? 0 : std::fabs(static_cast<double>(a.as_i64() - v.as_i64()));
      if (a.bits() != v.bits() && e == 0) e = 1;  // differs beyond what i64 shows (u64 high bit)
      d.max_abs = std::max(d.max_abs, e);
      d.max_rel = std::max(d.max_rel, e == 0 ? 0.0 : 1.0);
      d.ok = d.ok && e == 0;
      continue;
    }
    double x = a.as_f64(), y = v.as_f64();
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    double e = std::fabs(x - y);
    double scale = std::max(std::fabs(x), std::fabs(y));
    if (std::isnan(e)) e = std::numeric_limits<double>::infinity();
    d.max_abs = std::max(d.max_abs, e);
    d.max_rel = std::max(d.max_rel, scale > 0 ? e / scale : e);
    d.ok = d.ok && e <= d.tolerance * std::max(1.0, scale);
  }
  return d;
}

runtime::Buffer scalar_buffer(const ir::Value& v) { return runtime::Buffer{v.kind(), {1}, {v}}; }

runtime::Buffer cells_buffer(const std::vector<int64_t>& v) {
  runtime::Buffer buf{ir::ScalarKind::i64, {static_cast<int64_t>(v.size())}, {}};
  for (int64_t c : v) buf.data.push_back(ir::Value::from_int(ir::ScalarKind::i64, c));
  return buf;
}

void append(std::vector<BackendDiff>& rows, Backend b, const std::string& name, const runtime::Buffer& want,
            const runtime::Buffer* got, const Tolerances& tol) {
  rows.push_back(diff(b, {name, &want}, got, tol));
}

std::vector<std::string> printed_lines(const runtime::ExecutionResult& r) {
  std::vector<std::string> lines;
  for (const auto& l : r.launches)
    for (size_t at = 0; at < l.result.printed.size();) {
      size_t nl = std::min(l.result.printed.find('\n', at), l.result.printed.size());
      lines.push_back(l.result.printed.substr(at, nl - at));
      at = nl + 1;
    }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The printed lines as a multiset: one row, one element per line of the interpreter's.
void append_printed(std::vector<BackendDiff>& rows, Backend b, const runtime::ExecutionResult& want,
                    const runtime::ExecutionResult& got, bool compare) {
  std::vector<std::string> w = printed_lines(want);
  if (w.empty()) return;
  BackendDiff d;
  d.backend = b;
  d.array = "printed (lines)";
  d.dtype = ir::ScalarKind::u8;
  if (!compare) {
    d.note = fmt::format("{} does not run print statements: the {} printed line(s) are not compared", backend_name(b),
                         w.size());
    rows.push_back(std::move(d));
    return;
  }
  std::vector<std::string> g = printed_lines(got);
  d.elements = w.size();
  size_t differ = 0;
  for (size_t i = 0; i < std::max(w.size(), g.size()); ++i) differ += i >= w.size() || i >= g.size() || w[i] != g[i];
  d.max_abs = static_cast<double>(differ);
  d.max_rel = differ ? 1 : 0;
  d.ok = differ == 0;
  rows.push_back(std::move(d));
}

}  // namespace

CompareParts compare_parts(Backend b, const PreparedRequest& p, const BackendOptions& o) {
  CompareParts parts;
  parts.stack_usage = p.exec.stack_usage;
  parts.printed = backend_for(b, o).capabilities().prints;
  return parts;
}

std::vector<BackendDiff> diff_executions(Backend b, const runtime::ExecutionResult& want,
                                         const runtime::ExecutionResult& got, const Tolerances& tol,
                                         const CompareParts& parts) {
  std::vector<BackendDiff> rows;
  std::map<std::string, const runtime::Buffer*> theirs;
  for (const NamedArray& a : arrays_of(got.state)) theirs[a.name] = a.buffer;
  for (const NamedArray& a : arrays_of(want.state)) {
    auto it = theirs.find(a.name);
    rows.push_back(diff(b, a, it == theirs.end() ? nullptr : it->second, tol));
  }
  // Sparse spaces: which cells are active (a dynamic space's lengths), compared exactly.
  for (const auto& [space, active] : want.state.activity) {
    runtime::Buffer w = cells_buffer(active), g;
    auto it = got.state.activity.find(space);
    if (it != got.state.activity.end()) g = cells_buffer(it->second);
    append(rows, b, space + " (cells)", w, it == got.state.activity.end() ? nullptr : &g, tol);
  }
  const auto& want_ret = want.main().returned;
  const auto& got_ret = got.main().returned;
  for (size_t i = 0; i < want_ret.size(); ++i) {
    runtime::Buffer w = scalar_buffer(want_ret[i]), g;
    if (i < got_ret.size()) g = scalar_buffer(got_ret[i]);
    append(rows, b, fmt::format("return[{}]", i), w, i < got_ret.size() ? &g : nullptr, tol);
  }
  if (got_ret.size() > want_ret.size())
    rows.push_back(
        failed_row(b, fmt::format("returned {} values, the interpreter {}", got_ret.size(), want_ret.size())));
  append_printed(rows, b, want, got, parts.printed);
  if (parts.stack_usage) {
    // Each stack's deepest depth over the launch: a property of the kernel and inputs, not of the
    // order iterations ran in.
    const auto& w = want.last().max_stack_depth;
    const auto& g = got.last().max_stack_depth;
    for (const auto& [id, depth] : w) {
      runtime::Buffer wb = scalar_buffer(ir::Value::from_int(ir::ScalarKind::i64, depth)), gb;
      auto it = g.find(id);
      if (it != g.end()) gb = scalar_buffer(ir::Value::from_int(ir::ScalarKind::i64, it->second));
      append(rows, b, fmt::format("stack ${} (deepest)", id), wb, it == g.end() ? nullptr : &gb, tol);
    }
  }
  return rows;
}

BackendDiff failed_row(Backend b, const std::string& message, bool refused) {
  BackendDiff d;
  d.backend = b;
  d.array = "-";
  d.ok = false;
  d.error = message;
  d.refused = refused;
  return d;
}

bool Comparison::passed() const {
  if (values_compared == 0) return false;
  return std::all_of(rows.begin(), rows.end(), [](const BackendDiff& d) { return d.ok; });
}

Comparison compare_backends(const PreparedRequest& p, const std::vector<Backend>& backends, const BackendOptions& o,
                            const Tolerances& tol) {
  Comparison c;
  runtime::ExecutionResult want = execute_on(Backend::interp, p, o);
  auto keep_times = [&](Backend b, const runtime::ExecutionResult& r) {
    for (auto& t : timed_launches(b, r)) c.launches.push_back(std::move(t));
  };
  keep_times(Backend::interp, want);
  for (Backend b : backends) {
    if (b == Backend::interp) continue;
    try {
      runtime::ExecutionResult got = execute_on(b, p, o);
      keep_times(b, got);
      for (BackendDiff& d : diff_executions(b, want, got, tol, compare_parts(b, p, o))) c.rows.push_back(std::move(d));
    } catch (const runtime::BackendAbsent& e) {
      BackendDiff d = failed_row(b, "");
      d.ok = true;
      d.note = "absent: " + e.diagnostic().message;
      c.rows.push_back(std::move(d));
    } catch (const runtime::Refusal& e) {
      c.rows.push_back(failed_row(b, e.diagnostic().message, true));
    } catch (const UserError& e) {
      c.rows.push_back(failed_row(b, e.diagnostic().message));
    }
  }
  for (const BackendDiff& d : c.rows) c.values_compared += d.elements;
  return c;
}

std::string format_backend_table(const std::vector<BackendDiff>& rows) {
  std::string out = fmt::format("{:<8} {:<24} {:<5} {:>9} {:>12} {:>12} {:>10}  {}\n", "backend", "array", "type",
                                "elements", "max abs", "max rel", "tolerance", "verdict");
  for (const BackendDiff& d : rows) {
    if (!d.note.empty()) {
      out += fmt::format("{:<8} {:<24} note: {}\n", backend_name(d.backend), d.array, d.note);
      continue;
    }
    if (!d.error.empty() && d.elements == 0) {
      out += fmt::format("{:<8} {:<24} {}: {}\n", backend_name(d.backend), d.array, d.refused ? "REFUSED" : "error",
                         d.error);
      continue;
    }
    out +=
        fmt::format("{:<8} {:<24} {:<5} {:>9} {:>12.3e} {:>12.3e} {:>10.1e}  {}\n", backend_name(d.backend), d.array,
                    ir::scalar_name(d.dtype), d.elements, d.max_abs, d.max_rel, d.tolerance, d.ok ? "ok" : "DIFFERS");
  }
  return out + comparison_summary(rows) + "\n";
}

std::string comparison_summary(const std::vector<BackendDiff>& rows) {
  size_t values = 0, arrays = 0, differ = 0, failed = 0;
  std::vector<std::string> names;
  for (const BackendDiff& d : rows) {
    std::string n(backend_name(d.backend));
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    values += d.elements;
    if (!d.note.empty()) continue;
    if (!d.error.empty() && d.elements == 0) {
      ++failed;
      continue;
    }
    ++arrays;
    differ += !d.ok;
  }
  std::string on;
  for (const auto& n : names) on += (on.empty() ? "" : ", ") + n;
  if (values == 0)
    return fmt::format("nothing compared{}: a comparison that compares nothing did not pass",
                       on.empty() ? "" : " on " + on);
  std::string verdict = differ == 0 && failed == 0 ? "all equal within tolerance"
                                                   : fmt::format(
                                                         "{} array(s) differ, {} backend run(s) failed or "
                                                         "were refused",
                                                         differ, failed);
  return fmt::format("compared {} value(s) in {} array(s) on {}: {}", values, arrays, on, verdict);
}

}  // namespace pb::workbench
