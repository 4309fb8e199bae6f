// Long work off the UI thread: one job at a time on a std::thread, with the WorkControl the
// workspace reports progress to and the Cancel button cancels. The UI polls every frame.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "workbench/workspace/workspace.h"

namespace pb::workbench::gui {

class Worker {
 public:
  ~Worker();
  bool busy() const { return thread_.joinable(); }
  // Starts `job` unless one is running (then returns false). Exceptions end the job: a
  // UserError's message becomes last_error(), Cancelled sets last_cancelled().
  bool start(std::string what, std::function<void(WorkControl&)> job);
  // Joins a finished job; returns true on the frame it finished.
  bool poll();
  void cancel();
  void wait();  // blocks until the job is done (headless runs)
  WorkProgress progress() const;
  const std::string& what() const { return what_; }
  const std::string& last_error() const { return last_error_; }
  bool last_cancelled() const { return last_cancelled_; }

 private:
  std::thread thread_;
  std::atomic<bool> done_{false};
  std::unique_ptr<WorkControl> control_;
  std::string what_, last_error_;
  bool last_cancelled_ = false;
};

}  // namespace pb::workbench::gui
