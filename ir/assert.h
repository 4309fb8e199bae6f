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

}  // namespace pb

#define PB_ASSERT(cond, msg)                                                                                        \
  do {                                                                                                              \
    if (!(cond)) ::pb::internal_error(__FILE__, __LINE__, std::string("assertion `") + #cond "` failed: " + (msg)); \
  } while (0)
