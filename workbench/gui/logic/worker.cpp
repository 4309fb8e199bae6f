#include "workbench/gui/logic/worker.h"

#include "ir/assert.h"

namespace pb::workbench::gui {

Worker::~Worker() {
  cancel();
  wait();
}

bool Worker::start(std::string what, std::function<void(WorkControl&)> job) {
  if (busy()) return false;
  what_ = std::move(what);
  last_error_.clear();
  last_cancelled_ = false;
  done_ = false;
  control_ = std::make_unique<WorkControl>();
  WorkControl* control = control_.get();
  thread_ = std::thread([this, control, job = std::move(job)] {
    try {
      job(*control);
    } catch (const Cancelled&) {
      last_cancelled_ = true;
    } catch (const UserError& e) {
      last_error_ = e.diagnostic().format();
    } catch (const std::exception& e) {
      last_error_ = std::string("internal error: ") + e.what();
    }
    done_ = true;
  });
  return true;
}

bool Worker::poll() {
  if (!busy() || !done_) return false;
  thread_.join();
  return true;
}

void Worker::cancel() {
  if (control_) control_->cancel();
}

void Worker::wait() {
  if (busy()) thread_.join();
}

WorkProgress Worker::progress() const { return control_ ? control_->progress() : WorkProgress{}; }

}  // namespace pb::workbench::gui
