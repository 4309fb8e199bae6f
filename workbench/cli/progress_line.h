// A one-line progress display for long work (compiles, fixture runs): on stderr, only when stderr
// is a terminal, and only once the work has run for a second (short runs and pipes stay quiet;
// PASSBENCH_PROGRESS_AFTER_MS=N changes the second, for tests). A background thread redraws the
// latest state every quarter second; the line is erased when the display is destroyed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "workbench/workspace/compile.h"

namespace pb::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string what);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Records where the work is (cheap; drawn by the thread). Callable as CompileRequest::progress.
  void update(const workbench::CompileProgress& progress);
  // Records free text (shown after "what: "); callable from any thread.
  void set(std::string text);
  bool enabled() const { return enabled_; }

 private:
  void run();

  std::string what_;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds after_{1000};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string text_;
  bool stop_ = false;
  bool shown_ = false;
  std::thread thread_;
};

// The text of a fixture run's line: "fixture I of N, D done: NAME" (`index` 0-based, NAME the file
// name of `path`).
std::string fixture_progress(size_t index, size_t count, size_t done, const std::string& path);

}  // namespace pb::cli
