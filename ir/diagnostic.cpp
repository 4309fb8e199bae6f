#include "ir/diagnostic.h"

#include <fmt/format.h>

#include <atomic>

#include "ir/assert.h"

namespace pb {

std::string Diagnostic::format() const {
  std::string out;
  if (!file.empty()) out += file + ":";
  if (line > 0) out += fmt::format("{}:{}:", line, column);
  if (!out.empty()) out += " ";
  out += "error: " + message;
  if (!source_line.empty()) {
    out += "\n  " + source_line + "\n";
    out += "  " + std::string(column > 1 ? static_cast<size_t>(column - 1) : 0, ' ') + "^";
  }
  if (!remedy.empty()) out += "\n  remedy: " + remedy;
  return out;
}

[[noreturn]] void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("internal error at {}:{}: {}", file, line, what));
}

namespace {

// The first deferred failure: claimed by one writer, published by `ready`.
struct DeferredFailure {
  std::atomic_flag claimed;
  std::atomic<bool> ready{false};
  const char* file = nullptr;
  int line = 0;
  const char* what = nullptr;
};

DeferredFailure& deferred() {
  static DeferredFailure d;
  return d;
}

}  // namespace

void defer_internal_error(const char* file, int line, const char* what) noexcept {
  DeferredFailure& d = deferred();
  if (d.claimed.test_and_set(std::memory_order_acq_rel)) return;
  d.file = file;
  d.line = line;
  d.what = what;
  d.ready.store(true, std::memory_order_release);
}

void raise_deferred_internal_error() {
  DeferredFailure& d = deferred();
  if (!d.ready.load(std::memory_order_acquire)) return;
  const char* file = d.file;
  int line = d.line;
  std::string what = d.what;
  d.ready.store(false, std::memory_order_relaxed);
  d.claimed.clear(std::memory_order_release);
  internal_error(file, line, what + " (found where it could not be thrown; reported at the next check)");
}

}  // namespace pb
