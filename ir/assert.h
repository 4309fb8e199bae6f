// Internal invariant checks. A failed PB_ASSERT is a bug in passbench, not in the user's input:
// it throws InternalError (so the CLI can report it and write a reproducer) instead of aborting.
#pragma once

#include <stdexcept>
#include <string>

namespace pb {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

// Where throwing would terminate the process (a destructor, a noexcept deallocation): records the
// first failed check (`what` a string literal), which raise_deferred_internal_error throws as an
// InternalError at the next point that can throw. Each image has its own record.
void defer_internal_error(const char* file, int line, const char* what) noexcept;
// Throws the recorded failure, if any, and clears it.
void raise_deferred_internal_error();

}  // namespace pb

#define PB_ASSERT(cond, msg)                                                                                        \
  do {                                                                                                              \
    if (!(cond)) ::pb::internal_error(__FILE__, __LINE__, std::string("assertion `") + #cond "` failed: " + (msg)); \
  } while (0)

// PB_ASSERT for code that must not throw: the failure is reported by raise_deferred_internal_error.
#define PB_ASSERT_DEFERRED(cond, msg)                                                                  \
  do {                                                                                                 \
    if (!(cond)) ::pb::defer_internal_error(__FILE__, __LINE__, "assertion `" #cond "` failed: " msg); \
  } while (0)
