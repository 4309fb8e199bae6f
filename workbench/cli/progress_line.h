// A one-line progress display for long compiles: on stderr, only when stderr is a terminal, and
// only once the work has run for a second (short runs and pipes stay quiet). A background thread
// redraws the latest state every quarter second; the line is erased when the display is destroyed.
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
  bool enabled() const { return enabled_; }

 private:
  void run();

  std::string what_;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string text_;
  bool stop_ = false;
  bool shown_ = false;
  std::thread thread_;
};

}  // namespace pb::cli
