#include "workbench/cli/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace pb::cli {

ProgressLine::ProgressLine(std::string what)
    : what_(std::move(what)), enabled_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {
  if (const char* after = std::getenv("PASSBENCH_PROGRESS_AFTER_MS"); after && *after) {
    char* end = nullptr;
    const long ms = std::strtol(after, &end, 10);
    if (*end == '\0' && ms >= 0) after_ = std::chrono::milliseconds(ms);
  }
  if (enabled_) thread_ = std::thread([this] { run(); });
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressLine::update(const workbench::CompileProgress& p) {
  if (!enabled_) return;
  std::string text = what_ + ": ";
  if (p.lowerings) text += fmt::format("lowering {} of {}, ", p.lowering, p.lowerings);
  text += p.stage;
  if (p.tasks) text += fmt::format(", task {} of {}", p.task, p.tasks);
  if (p.passes) text += fmt::format(", pass {} of {}", p.pass, p.passes);
  std::lock_guard lock(mutex_);
  text_ = std::move(text);
}

void ProgressLine::set(std::string text) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  text_ = what_ + ": " + std::move(text);
}

std::string fixture_progress(size_t index, size_t count, size_t done, const std::string& path) {
  return fmt::format("fixture {} of {}, {} done: {}", index + 1, count, done,
                     std::filesystem::path(path).filename().string());
}

void ProgressLine::run() {
  const auto period = std::min(std::chrono::milliseconds(250), std::max(after_, std::chrono::milliseconds(10)));
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed < after_ || text_.empty()) continue;
    const double s = std::chrono::duration<double>(elapsed).count();
    std::fputs(fmt::format("\r\033[K{} ({:.0f} s)", text_, s).c_str(), stderr);
    std::fflush(stderr);
    shown_ = true;
  }
}

}  // namespace pb::cli
